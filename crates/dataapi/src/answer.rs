//! Turning the one row a plan's SQL returned into the HTTP answer, with PostgREST's statuses
//! and headers (`Content-Range`, `Content-Type`, `Preference-Applied`).

use crate::error::RestError;
use crate::headers::Media;

/// The one row a plan's SQL returns, columns in this order: `total bigint` (NULL unless a
/// count was asked for), `page_total bigint`, `body text` (NULL when there is no body), and
/// for an upsert that merges duplicates only, a fourth, `inserted bigint` (how many rows it
/// inserted rather than updated; NULL when it inserted none).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanRow {
    pub total: Option<i64>,
    pub page_total: i64,
    pub body: Option<String>,
    pub inserted: Option<i64>,
}

impl PlanRow {
    /// The row of a plan that [`crate::Plan::explains`]: the lines `EXPLAIN` returned, one
    /// a row, each ended by a line feed as PostgREST joins them.
    #[must_use]
    pub fn explained<S: AsRef<str>>(lines: &[S]) -> PlanRow {
        let mut body = String::new();
        for line in lines {
            body.push_str(line.as_ref());
            body.push('\n');
        }
        PlanRow {
            body: Some(body),
            ..PlanRow::default()
        }
    }
}

/// An HTTP answer: the gateway copies it out as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestAnswer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// `None`: no body at all (204, HEAD, `return=minimal`).
    pub body: Option<String>,
}

impl RestAnswer {
    /// The first value of the header `name` (ASCII case-insensitive).
    #[must_use]
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Read,
    Call { void: bool },
    Insert,
    Update,
    Delete,
}

/// What [`respond`] needs to know of the request besides the row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    pub(crate) kind: Kind,
    pub(crate) head: bool,
    /// The first row asked for (`offset`, `Range`), for `Content-Range`.
    pub(crate) offset: i64,
    pub(crate) count: bool,
    pub(crate) media: Media,
    pub(crate) representation: bool,
    pub(crate) prefer_applied: Option<String>,
    /// `max-affected=n` with `handling=strict` on a `PATCH`, `DELETE` or call.
    pub(crate) max_affected: Option<i64>,
    /// An upsert merging duplicates: 200 rather than 201 when it inserted no row.
    pub(crate) merges: bool,
    /// `Content-Profile`, when the request chose its schema by a profile header.
    pub(crate) profile: Option<String>,
    /// The plan asked for (`Accept: application/vnd.pgrst.plan`), with EXPLAIN on.
    pub(crate) explain: Option<crate::explain::Explain>,
    /// `Prefer: tx=rollback`, honoured.
    pub(crate) rollback: bool,
    /// The schema the request addresses, first in its `search_path`.
    pub(crate) schema: String,
}

/// The `body` expression over `_postgrest_t`, the rows of `inner`: an array, or the first
/// element for singular answers and functions returning one value; or CSV.
pub(crate) fn body_sql(media: Media, scalar: bool, single: bool, inner: &str) -> String {
    if media == Media::Csv {
        return csv_sql(inner);
    }
    let v = if scalar {
        "_postgrest_t.pgrst_scalar"
    } else {
        "_postgrest_t"
    };
    let one = single || matches!(media, Media::Singular { .. });
    let mut agg = format!("json_agg({v})");
    if one {
        agg.push_str("->0");
    }
    if matches!(media, Media::JsonStripped | Media::Singular { strip: true }) {
        agg = format!("json_strip_nulls({agg})");
    }
    format!("coalesce({agg}, {})", if one { "'null'" } else { "'[]'" })
}

/// PostgREST's CSV: the keys of the first row joined by commas (as they are, unquoted),
/// then each row as PostgreSQL writes a record, its parentheses taken off (fields quoted
/// when they hold a comma, quote, backslash, parenthesis or space; NULL empty).
fn csv_sql(inner: &str) -> String {
    format!(
        "(SELECT coalesce(string_agg(a.k, ','), '') FROM (SELECT json_object_keys(s.r)::text \
         AS k FROM (SELECT row_to_json(hh) AS r FROM ({inner}) hh LIMIT 1) s) a) || '\n' || \
         coalesce(string_agg(substring(_postgrest_t::text, 2, length(_postgrest_t::text) - 2), \
         '\n'), '')"
    )
}

/// `Content-Range` as PostgREST writes it: `lower-upper/total`, with `*` for an empty
/// page and for an unknown total.
fn content_range(lower: i64, upper: i64, total: Option<i64>) -> String {
    let range = if total != Some(0) && lower <= upper {
        format!("{lower}-{upper}")
    } else {
        "*".to_owned()
    };
    let total = total.map_or_else(|| "*".to_owned(), |t| t.to_string());
    format!("{range}/{total}")
}

/// The answer to the row `plan`'s SQL returned.
///
/// # Errors
/// 406 PGRST116 when a single object was asked for (`Accept:
/// application/vnd.pgrst.object+json`) and the page holds other than one row. The gateway
/// must then roll the transaction back, as PostgREST does, before sending the error. 400
/// PGRST124 when `max-affected` with `handling=strict` was exceeded: the gateway rolls back
/// likewise, so nothing changed. A range beyond the total is not an error here: it is a 416
/// answer, and the transaction may commit.
pub fn respond(plan: &crate::Plan, row: PlanRow) -> Result<RestAnswer, RestError> {
    let s = &plan.shape;
    if let Some(e) = &s.explain {
        // PostgREST answers a plan as it is: no range, no singular check, no preferences.
        let mut headers = vec![(
            "Content-Type".to_owned(),
            format!("{}; charset=utf-8", e.media_type()),
        )];
        if let Some(p) = &s.profile {
            headers.push(("Content-Profile".to_owned(), p.clone()));
        }
        return Ok(RestAnswer {
            status: 200,
            headers,
            body: row.body,
        });
    }
    if matches!(s.media, Media::Singular { .. }) && row.page_total != 1 {
        return Err(RestError::singular(row.page_total));
    }
    if let Some(n) = s.max_affected
        && row.page_total > n
    {
        return Err(RestError::new(
            400,
            "PGRST124",
            "Query result exceeds max-affected preference constraint",
        )
        .with_details(format!("The query affects {} rows", row.page_total)));
    }
    let total = if s.count {
        Some(row.total.unwrap_or(row.page_total))
    } else {
        None
    };
    let mut headers = Vec::new();
    let mut status;
    let mut body = row.body;
    match s.kind {
        Kind::Read | Kind::Call { .. } => {
            let lower = s.offset;
            let upper = lower + row.page_total - 1;
            headers.push((
                "Content-Range".to_owned(),
                content_range(lower, upper, total),
            ));
            status = match total {
                Some(t) if lower > t => 416,
                Some(t) if row.page_total < t => 206,
                _ => 200,
            };
            if status == 416 {
                let e = RestError::range_not_satisfiable(format!(
                    "An offset of {lower} was requested, but there are only {} rows.",
                    total.unwrap_or(0)
                ));
                body = Some(e.body());
            } else if s.kind == (Kind::Call { void: true }) {
                status = 204;
                body = None;
            } else if s.head {
                body = None;
            }
            if status != 204 {
                let media = if status == 416 { Media::Json } else { s.media };
                content_type(&mut headers, media, s);
            }
        }
        Kind::Insert | Kind::Delete => {
            headers.push(("Content-Range".to_owned(), content_range(1, 0, total)));
            status = if s.kind == Kind::Delete {
                200
            } else if s.merges && row.inserted.unwrap_or(0) <= 0 {
                // PostgREST's answer to an upsert that only updated rows.
                200
            } else {
                201
            };
        }
        Kind::Update => {
            let range = content_range(0, row.page_total - 1, total);
            headers.push(("Content-Range".to_owned(), range));
            status = 200;
        }
    }
    if matches!(s.kind, Kind::Insert | Kind::Update | Kind::Delete) {
        if s.representation {
            content_type(&mut headers, s.media, s);
        } else {
            body = None;
            if s.kind != Kind::Insert {
                status = 204;
            }
        }
    }
    if let Some(p) = &s.prefer_applied {
        headers.push(("Preference-Applied".to_owned(), p.clone()));
    }
    Ok(RestAnswer {
        status,
        headers,
        body,
    })
}

/// `Content-Type`, and `Content-Profile` beside it as PostgREST sends them.
fn content_type(headers: &mut Vec<(String, String)>, media: Media, s: &Shape) {
    headers.push(("Content-Type".to_owned(), media.content_type()));
    if let Some(p) = &s.profile {
        headers.push(("Content-Profile".to_owned(), p.clone()));
    }
}
