//! The query string, decoded and sorted as PostgREST does (`parseQueryReplacePlus`: `&` and
//! `;` separate, `+` is a space, `%XX` a byte), then parsed into the grammar's trees.

use crate::error::RestError;
use crate::grammar::{self, Filter, LogicTree, OrderTerm, SelectItem};

/// What the query string asks for, parsed.
#[derive(Debug, Clone, Default)]
pub(crate) struct Query {
    pub select: Vec<SelectItem>,
    pub filters: Vec<Filter>,
    pub logic: Vec<LogicTree>,
    pub order: Vec<OrderTerm>,
    pub columns: Option<Vec<String>>,
    pub on_conflict: Option<Vec<String>>,
    /// For `GET /rpc/fn`: parameters whose value is not an operator expression.
    pub rpc_args: Vec<(String, String)>,
    pub limit: Option<String>,
    pub offset: Option<String>,
    /// Filters, trees, orders and ranges on embedded resources (`clients.id=eq.1`).
    pub embedded: Embedded,
}

/// The parameters addressed to an embedded resource, each with its path (`clients.projects`
/// is `["clients", "projects"]`), in the order given.
#[derive(Debug, Clone, Default)]
pub(crate) struct Embedded {
    pub filters: Vec<(Vec<String>, Filter)>,
    pub logic: Vec<(Vec<String>, LogicTree)>,
    pub order: Vec<(Vec<String>, Vec<OrderTerm>)>,
    pub limit: Vec<(Vec<String>, String)>,
    pub offset: Vec<(Vec<String>, String)>,
}

impl Embedded {
    pub fn is_empty(&self) -> bool {
        self.filters.is_empty()
            && self.logic.is_empty()
            && self.order.is_empty()
            && self.limit.is_empty()
            && self.offset.is_empty()
    }
}

/// Splits and decodes a raw query string. Parameters without `=` are dropped, as PostgREST
/// drops them.
pub(crate) fn decode_pairs(raw: &str) -> Vec<(String, String)> {
    raw.split(['&', ';'])
        .filter_map(|part| part.split_once('='))
        .map(|(k, v)| (form_decode(k), form_decode(v)))
        .collect()
}

/// `application/x-www-form-urlencoded` decoding: `+` is a space, `%XX` a byte; a `%` not
/// followed by two hex digits stays as it is. Invalid UTF-8 is replaced, not refused.
pub(crate) fn form_decode(s: &str) -> String {
    percent_decode(s, true)
}

/// Percent-decoding of a path segment, where `+` is itself.
pub(crate) fn path_decode(s: &str) -> String {
    percent_decode(s, false)
}

fn percent_decode(s: &str, plus_is_space: bool) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'+' && plus_is_space {
            out.push(b' ');
        } else if b == b'%'
            && let Some(v) = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 2;
        } else {
            out.push(b);
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn last_word(key: &str) -> &str {
    key.rsplit('.').next().unwrap_or(key)
}

/// The embedding path of a reserved key (`clients.order`): the names before the last.
fn key_path(key: &str, what: &str) -> Result<Vec<String>, RestError> {
    let (names, _) = grammar::tree_path(key)
        .map_err(|e| RestError::parse(&format!("{what} ({key})"), e.column, e.details))?;
    Ok(names)
}

/// Parses every parameter. `rpc_read` is PostgREST's `isRpcRead`: on `GET /rpc/fn` a value
/// that is not an operator expression is a function argument, not a parse error.
///
/// # Errors
/// PGRST100 for a parameter that does not parse.
pub(crate) fn parse(raw: &str, rpc_read: bool) -> Result<Query, RestError> {
    let mut q = Query::default();
    let mut select: Option<String> = None;
    for (key, value) in decode_pairs(raw) {
        match key.as_str() {
            "select" => {
                select.get_or_insert(value);
                continue;
            }
            "columns" => {
                if q.columns.is_none() {
                    q.columns = Some(list(&value, "columns parameter")?);
                }
                continue;
            }
            "on_conflict" => {
                if q.on_conflict.is_none() {
                    q.on_conflict = Some(list(&value, "on_conflict parameter")?);
                }
                continue;
            }
            _ => {}
        }
        match last_word(&key) {
            "order" => {
                let path = key_path(&key, "tree path")?;
                let terms = grammar::order(&value).map_err(|e| {
                    RestError::parse(&format!("order ({value})"), e.column, e.details)
                })?;
                if path.is_empty() {
                    q.order.extend(terms);
                } else {
                    q.embedded.order.push((path, terms));
                }
            }
            word @ ("limit" | "offset") => {
                let path = key_path(&key, "tree path")?;
                match (path.is_empty(), word) {
                    (true, "limit") => q.limit = Some(value),
                    (true, _) => q.offset = Some(value),
                    (false, "limit") => q.embedded.limit.push((path, value)),
                    (false, _) => q.embedded.offset.push((path, value)),
                }
            }
            op @ ("and" | "or") => {
                // `clients.not.or`: `not` anywhere in the path negates the tree.
                let names = key_path(&key, "logic path")?;
                let negated = names.iter().any(|n| n == "not");
                let path: Vec<String> = names.into_iter().filter(|n| n != "not").collect();
                let glued_op = if negated {
                    format!("not.{op}")
                } else {
                    op.to_owned()
                };
                let tree = grammar::logic_tree(&glued_op, &value).map_err(|e| {
                    RestError::parse(&format!("logic tree ({value})"), e.column, e.details)
                })?;
                if path.is_empty() {
                    q.logic.push(tree);
                } else {
                    q.embedded.logic.push((path, tree));
                }
            }
            _ => filter(&mut q, &key, value, rpc_read)?,
        }
    }
    let select = select.unwrap_or_else(|| "*".to_owned());
    q.select = grammar::select(&select).map_err(|e| {
        RestError::parse(&format!("select parameter ({select})"), e.column, e.details)
    })?;
    Ok(q)
}

fn filter(q: &mut Query, key: &str, value: String, rpc_read: bool) -> Result<(), RestError> {
    let (path, field) = grammar::tree_path(key)
        .map_err(|e| RestError::parse(&format!("tree path ({key})"), e.column, e.details))?;
    match grammar::op_expr(&value) {
        Ok(expr) if path.is_empty() => q.filters.push(Filter { field, expr }),
        Ok(expr) => q.embedded.filters.push((path, Filter { field, expr })),
        Err(_) if rpc_read && path.is_empty() && field.json_path.is_empty() => {
            q.rpc_args.push((field.name, value));
        }
        Err(e) => {
            return Err(RestError::parse(
                &format!("filter ({value})"),
                e.column,
                e.details,
            ));
        }
    }
    Ok(())
}

fn list(value: &str, what: &str) -> Result<Vec<String>, RestError> {
    grammar::columns(value)
        .map_err(|e| RestError::parse(&format!("{what} ({value})"), e.column, e.details))
}

/// The rows asked for: `[lower, upper]`, `upper` open when `None`. `lower > upper` is empty,
/// except for `limit=0`, kept as `[0, -1]` as PostgREST keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Range {
    pub lower: i64,
    pub upper: Option<i64>,
}

impl Range {
    pub const ALL: Range = Range {
        lower: 0,
        upper: None,
    };

    fn intersect(self, other: Range) -> Range {
        let upper = match (self.upper, other.upper) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Range {
            lower: self.lower.max(other.lower),
            upper,
        }
    }

    /// The range under a cap of `max` rows from its start (PostgREST's `restrictRange`);
    /// `limit=0` stays as it is.
    pub fn capped(self, max: Option<u64>) -> Range {
        let Some(max) = max.and_then(|m| i64::try_from(m).ok()) else {
            return self;
        };
        if self.upper == Some(-1) && self.lower == 0 {
            return self;
        }
        self.intersect(Range {
            lower: 0,
            upper: Some(self.lower.saturating_add(max).saturating_sub(1)),
        })
    }

    fn is_empty(self) -> bool {
        self.upper.is_some_and(|u| u < self.lower)
    }

    /// `LIMIT … OFFSET …`, or nothing for all rows. The numbers were parsed here, so they
    /// are written into the SQL as they are.
    pub fn sql(self) -> String {
        if self == Range::ALL {
            return String::new();
        }
        let limit = self.upper.map_or_else(
            || "ALL".to_owned(),
            |u| (u - self.lower + 1).max(0).to_string(),
        );
        format!(" LIMIT {limit} OFFSET {}", self.lower)
    }
}

/// The top-level range from the `Range` header (read on `GET` only, as PostgREST reads it)
/// and `limit`/`offset`.
///
/// # Errors
/// 416 PGRST103 for an empty range: a `Range` whose end is before its start, or a negative
/// limit.
pub(crate) fn range(method: &str, header: Option<&str>, q: &Query) -> Result<Range, RestError> {
    let header_range = if method == "GET" {
        header.and_then(parse_range_header).unwrap_or(Range::ALL)
    } else {
        Range::ALL
    };
    let limit = q
        .limit
        .as_deref()
        .and_then(|v| v.trim().parse::<i64>().ok());
    let offset = q
        .offset
        .as_deref()
        .and_then(|v| v.trim().parse::<i64>().ok());
    let limit_range = match (limit, offset) {
        (Some(l), o) => {
            let o = o.unwrap_or(0);
            Range {
                lower: o,
                upper: Some(o.saturating_add(l).saturating_sub(1)),
            }
        }
        (None, Some(o)) => Range {
            lower: o,
            upper: None,
        },
        (None, None) => Range::ALL,
    };
    let limit_zero = limit_range.upper == Some(-1);
    if limit_zero {
        return Ok(Range {
            lower: 0,
            upper: Some(-1),
        });
    }
    let top = header_range.intersect(limit_range);
    if top.is_empty() {
        let details = if header_range.is_empty() {
            "The lower boundary must be lower than or equal to the upper boundary in the Range header."
        } else {
            "Limit should be greater than or equal to zero."
        };
        return Err(RestError::range_not_satisfiable(details.to_owned()));
    }
    Ok(top)
}

/// `^([0-9]+)-([0-9]*)$`; anything else means all rows, as in PostgREST.
fn parse_range_header(h: &str) -> Option<Range> {
    let (l, u) = h.split_once('-')?;
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if l.is_empty() || !digits(l) || !digits(u) {
        return None;
    }
    let lower = l.parse().ok()?;
    let upper = if u.is_empty() {
        None
    } else {
        Some(u.parse().ok()?)
    };
    Some(Range { lower, upper })
}
