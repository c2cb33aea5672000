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

/// Refuses a key such as `clients.order` or `clients.id`: it addresses an embedded resource,
/// and there are none (PostgREST's PGRST108 when the resource is not in `select`).
fn not_embedded(resource: &str) -> RestError {
    RestError::new(
        400,
        "PGRST108",
        format!("'{resource}' is not an embedded resource in this request"),
    )
    .with_hint(format!(
        "Verify that '{resource}' is included in the 'select' query parameter."
    ))
}

/// The embedding path before a reserved word (`clients.order`, `clients.not.or`): refused,
/// there being no embedded resources. Answers whether the path negates (`not.or`).
fn embed_path(key: &str) -> Result<bool, RestError> {
    let mut parts: Vec<&str> = key.split('.').collect();
    parts.pop();
    let negated = parts.contains(&"not");
    match parts.into_iter().find(|p| *p != "not") {
        Some(first) => Err(not_embedded(first)),
        None => Ok(negated),
    }
}

/// Parses every parameter. `rpc_read` is PostgREST's `isRpcRead`: on `GET /rpc/fn` a value
/// that is not an operator expression is a function argument, not a parse error.
///
/// # Errors
/// PGRST100 for a parameter that does not parse, PGRST108 for one that addresses an
/// embedded resource, PGRST127 for resource embedding in `select` or `order`.
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
                embed_path(&key)?;
                let terms = grammar::order(&value).map_err(|e| {
                    RestError::parse(&format!("order ({value})"), e.column, e.details)
                })?;
                q.order.extend(terms);
            }
            "limit" => {
                embed_path(&key)?;
                q.limit = Some(value);
            }
            "offset" => {
                embed_path(&key)?;
                q.offset = Some(value);
            }
            op @ ("and" | "or") => {
                let negated = embed_path(&key)?;
                let glued_op = if negated {
                    format!("not.{op}")
                } else {
                    op.to_owned()
                };
                let tree = grammar::logic_tree(&glued_op, &value).map_err(|e| {
                    RestError::parse(&format!("logic tree ({value})"), e.column, e.details)
                })?;
                q.logic.push(tree);
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
        Ok(expr) => {
            if let Some(first) = path.first() {
                return Err(not_embedded(first));
            }
            q.filters.push(Filter { field, expr });
        }
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
