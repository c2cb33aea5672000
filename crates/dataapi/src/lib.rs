//! `quire-dataapi`: the PostgREST-compatible REST subset that Quire serves at
//! `/db/<slug>/rest/v1/*`, as a pure parser and SQL builder. [`plan`] reads a request (method,
//! path, raw query string, `Prefer`, `Accept`, `Range`, `Content-Type`, body) against the
//! tenant's [`SchemaCache`] (tables, functions, and the relationships its foreign keys and
//! views give, for resource embedding) and answers one SQL statement with its parameters;
//! the gateway runs it and hands the one row back to [`respond`], which builds the HTTP
//! answer. Errors keep PostgREST's codes, statuses and messages ([`RestError`],
//! [`from_pg_error`]), so supabase-js and supabase-py work unchanged.
//!
//! No I/O happens here: no tokio, no database driver, no HTTP types. It depends on serde and
//! serde_json only (tokio and tokio-postgres are dev-dependencies, for the integration test
//! against a real PostgreSQL).
//!
//! Safety rests on two rules: every identifier written into SQL comes from the schema cache
//! (an unknown table, column or function is refused before any SQL is built) and is
//! double-quoted; every value is a bound parameter, written `$n::text` and cast on to the
//! column's base type.
//!
//! The gateway's side of the contract, in one transaction: `SET LOCAL ROLE <role>`,
//! `set_config('request.jwt.claims', $1, true)`, then [`Plan::sql`] with [`Plan::params`]
//! bound as `text` (each `Option<String>`, `None` being NULL), in a `READ ONLY` transaction
//! when [`Plan::read_only`]. The statement returns exactly one row, `total bigint`,
//! `page_total bigint`, `body text` ([`PlanRow`]). When [`respond`] answers an error, roll
//! back; when PostgreSQL raises one, roll back and answer [`from_pg_error`].

mod answer;
mod embed;
mod error;
#[cfg(test)]
mod error_bodies;
mod fuzzy;
mod grammar;
mod headers;
mod query;
mod schema;
mod sql;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;

pub use answer::{PlanRow, RestAnswer, Shape, respond};
pub use error::{RestError, from_pg_error};
pub use schema::{
    Argument, Column, ForeignKey, Function, Returns, SchemaCache, SchemaError, Table, ViewColumn,
    Volatility,
};

use answer::Kind;
use headers::{Media, Prefer, Representation, Resolution};
use query::{Query, Range};

/// One request to `/rest/v1/…`, as the gateway received it.
#[derive(Debug, Clone, Copy, Default)]
pub struct RestRequest<'a> {
    /// `GET`, `HEAD`, `POST`, `PATCH`, `DELETE`.
    pub method: &'a str,
    /// The path after `/rest/v1/`, still percent-encoded: `items`, `rpc/add`.
    pub path: &'a str,
    /// The raw query string, without `?`.
    pub query: &'a str,
    pub prefer: Option<&'a str>,
    pub accept: Option<&'a str>,
    pub range: Option<&'a str>,
    pub content_type: Option<&'a str>,
    pub body: &'a [u8],
}

/// The statement to run and how to shape its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// One statement returning one row: `total`, `page_total`, `body`.
    pub sql: String,
    /// Bound as `text`, in order (`$1`, `$2`, …); `None` is SQL NULL.
    pub params: Vec<Option<String>>,
    /// `GET` and `HEAD`: run in a `READ ONLY` transaction, as PostgREST does (a volatile
    /// function called with `GET` then fails with 25006, which answers 405).
    pub read_only: bool,
    pub shape: Shape,
}

/// What the parsed request holds, for the planners.
pub(crate) struct Ctx<'a> {
    pub req: &'a RestRequest<'a>,
    pub query: Query,
    pub range: Range,
    pub prefer: Prefer,
    pub media: Media,
    pub head: bool,
}

impl Ctx<'_> {
    fn shape(&self, kind: Kind, resolution_applies: bool) -> Shape {
        let mutation = matches!(kind, Kind::Insert | Kind::Update | Kind::Delete);
        let p = &self.prefer;
        let mut applied = Vec::new();
        if kind == Kind::Insert && resolution_applies {
            applied.extend(p.resolution.map(|r| match r {
                Resolution::Merge => "resolution=merge-duplicates",
                Resolution::Ignore => "resolution=ignore-duplicates",
            }));
        }
        if matches!(kind, Kind::Insert | Kind::Update) {
            applied.extend(
                p.missing_default
                    .map(|d| if d { "missing=default" } else { "missing=null" }),
            );
        }
        if mutation {
            applied.extend(p.representation.map(|r| match r {
                Representation::Full => "return=representation",
                Representation::Minimal => "return=minimal",
                Representation::HeadersOnly => "return=headers-only",
            }));
        }
        applied.extend(p.count);
        applied.extend(p.strict.map(|s| {
            if s {
                "handling=strict"
            } else {
                "handling=lenient"
            }
        }));
        Shape {
            kind,
            head: self.head,
            offset: self.range.lower,
            count: p.count.is_some(),
            media: self.media,
            representation: p.representation == Some(Representation::Full),
            prefer_applied: (!applied.is_empty()).then(|| applied.join(", ")),
        }
    }
}

enum Resource {
    Table(String),
    Rpc(String),
}

fn resource(path: &str) -> Result<Resource, RestError> {
    let segments: Vec<String> = path
        .trim_matches('/')
        .split('/')
        .map(query::path_decode)
        .collect();
    match segments.as_slice() {
        [one] if one.is_empty() => Err(RestError::not_implemented(
            "The OpenAPI description of the schema is not served",
        )),
        [table] => Ok(Resource::Table(table.clone())),
        [rpc, function] if rpc == "rpc" => Ok(Resource::Rpc(function.clone())),
        _ => Err(RestError::new(
            404,
            "PGRST125",
            "Invalid path specified in request URL",
        )),
    }
}

/// Plans one request against the schema cache.
///
/// # Errors
/// The [`RestError`] PostgREST would answer before running anything: 404 PGRST205 for an
/// unknown table, 404 PGRST202 for an unknown function, 400 PGRST100 for a query parameter
/// that does not parse, 400 42703 for an unknown column, 400 PGRST204 for an unknown body
/// column, 400 PGRST102 for a bad body, 406 PGRST107 for an unavailable media type, 416
/// PGRST103 for an empty range, 400 21000 for an unfiltered `PATCH` or `DELETE`, 405
/// PGRST117/PGRST101 for a method the resource does not take, for resource embedding 400
/// PGRST200 (no relationship), 300 PGRST201 (several), 400 PGRST108 (a key naming a
/// resource not embedded), PGRST118/PGRST119 (an order or spread of a to-many resource) and
/// 42712 (two resources under one name), and 400 PGRST127 for what this subset does not
/// implement (JSON paths, `PUT`, limits on mutations).
///
/// Embedded resources (`select=*,author:users(username)`) are lateral subqueries of the one
/// statement, resolved against the cache's relationships (`data-api-embedding.md`).
pub fn plan(req: &RestRequest<'_>, schema: &SchemaCache) -> Result<Plan, RestError> {
    let method = req.method;
    match resource(req.path)? {
        Resource::Table(name) => {
            let kind = match method {
                "GET" | "HEAD" => Kind::Read,
                "POST" => Kind::Insert,
                "PATCH" => Kind::Update,
                "DELETE" => Kind::Delete,
                "PUT" => {
                    return Err(RestError::not_implemented(
                        "PUT (single-row upsert) is not supported yet; POST with Prefer: \
                         resolution=merge-duplicates upserts",
                    ));
                }
                _ => return Err(unsupported(method)),
            };
            let ctx = context(req, false)?;
            let table = schema
                .table(&name)
                .ok_or_else(|| RestError::table_not_found(&name))?;
            match kind {
                Kind::Read => sql::read::table(&ctx, schema, table),
                Kind::Insert => sql::write::insert(&ctx, schema, table),
                Kind::Update => sql::write::update(&ctx, schema, table),
                _ => sql::write::delete(&ctx, schema, table),
            }
        }
        Resource::Rpc(name) => {
            if !matches!(method, "GET" | "HEAD" | "POST") {
                return Err(RestError::new(
                    405,
                    "PGRST101",
                    format!("Cannot use the {method} method on RPC"),
                ));
            }
            let ctx = context(req, method != "POST")?;
            sql::call::call(&ctx, schema, &name)
        }
    }
}

fn unsupported(method: &str) -> RestError {
    RestError::new(
        405,
        "PGRST117",
        format!("Unsupported HTTP method: {method}"),
    )
}

fn context<'a>(req: &'a RestRequest<'a>, rpc_read: bool) -> Result<Ctx<'a>, RestError> {
    let query = query::parse(req.query, rpc_read)?;
    let range = query::range(req.method, req.range, &query)?;
    let prefer = headers::prefer(req.prefer)?;
    let media = headers::accept(req.accept)?;
    Ok(Ctx {
        req,
        query,
        range,
        prefer,
        media,
        head: req.method == "HEAD",
    })
}

/// The keys of a JSON object body, sorted as PostgREST's set of them is.
pub(crate) fn object_keys(v: &serde_json::Value) -> Option<BTreeSet<String>> {
    v.as_object().map(|o| o.keys().cloned().collect())
}

/// The body as JSON text and value; an empty body is `empty`.
///
/// # Errors
/// 400 PGRST102 for a non-JSON `Content-Type`, invalid UTF-8 or invalid JSON.
pub(crate) fn json_body<'a>(
    req: &RestRequest<'a>,
    empty: &'static str,
) -> Result<(std::borrow::Cow<'a, str>, serde_json::Value), RestError> {
    headers::json_body(req.content_type)?;
    let text = std::str::from_utf8(req.body)
        .map_err(|_| RestError::invalid_body("Empty or invalid json"))?;
    let text = if text.trim().is_empty() {
        std::borrow::Cow::Borrowed(empty)
    } else {
        std::borrow::Cow::Borrowed(text)
    };
    let value = serde_json::from_str(&text)
        .map_err(|_| RestError::invalid_body("Empty or invalid json"))?;
    Ok((text, value))
}
