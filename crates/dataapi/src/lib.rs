//! `quire-dataapi`: the PostgREST-compatible REST subset that Quire serves at
//! `/db/<slug>/rest/v1/*`, as a pure parser and SQL builder. [`plan`] reads a request (method,
//! path, raw query string, `Prefer`, `Accept`, `Range`, `Content-Type`, the profile headers,
//! body) against the tenant's [`SchemaCache`] (the tables and functions of the schemas it
//! exposes, and the relationships their foreign keys and views give, for resource
//! embedding) and answers one SQL statement with its parameters; the gateway runs it and
//! hands the one row back to [`respond`], which builds the HTTP answer. Errors keep
//! PostgREST's codes, statuses and messages ([`RestError`], [`from_pg_error`]), so
//! supabase-js and supabase-py work unchanged. [`plan_with`] plans under a database's
//! [`Settings`], what PostgREST leaves off by default: aggregates, EXPLAIN, `Prefer:
//! tx=rollback` and a cap on rows.
//!
//! No I/O happens here: no tokio, no database driver, no HTTP types. It depends on serde and
//! serde_json only (tokio and tokio-postgres are dev-dependencies, for the integration test
//! against a real PostgreSQL).
//!
//! Safety rests on two rules: every identifier written into SQL comes from the schema cache
//! (an unknown table, column or function is refused before any SQL is built) and is
//! double-quoted; every value (a JSON path's keys included) is a bound parameter, written
//! `$n::text` and cast on to the column's base type.
//!
//! The gateway's side of the contract, in one transaction: `SET LOCAL ROLE <role>`,
//! `set_config('request.jwt.claims', $1, true)`, `search_path` set to
//! [`Plan::search_path`], then [`Plan::sql`] with [`Plan::params`] bound as `text` (each
//! `Option<String>`, `None` being NULL), in a `READ ONLY` transaction when
//! [`Plan::read_only`]. The statement returns exactly one row, `total bigint`,
//! `page_total bigint`, `body text` (and for an upsert that merges, `inserted bigint`:
//! [`PlanRow`]); or, when [`Plan::explains`], the plan's lines, one text column a row
//! ([`PlanRow::explained`]). When [`respond`] answers an error, roll back (so `max-affected`
//! leaves nothing changed); when PostgreSQL raises one, roll back and answer
//! [`from_pg_error`]; when [`Plan::rolls_back`], `SET CONSTRAINTS ALL IMMEDIATE` and roll
//! back whatever the answer.

mod answer;
#[cfg(test)]
mod answer_tests;
mod body;
mod embed;
mod error;
#[cfg(test)]
mod error_bodies;
mod explain;
mod fuzzy;
mod grammar;
mod headers;
mod query;
mod schema;
mod settings;
#[cfg(test)]
mod settings_tests;
mod sql;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;

pub use answer::{PlanRow, RestAnswer, Shape, respond};
pub use error::{RestError, from_pg_error};
pub use schema::{
    Argument, Column, Computed, ComputedRelationship, ForeignKey, Function, Returns, SchemaCache,
    SchemaError, Table, ViewColumn, Volatility,
};
pub use settings::Settings;

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
    /// `Accept-Profile`: the schema a `GET` or `HEAD` reads.
    pub accept_profile: Option<&'a str>,
    /// `Content-Profile`: the schema a `POST`, `PATCH`, `DELETE` or `PUT` writes or calls.
    pub content_profile: Option<&'a str>,
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

impl Plan {
    /// Whether the statement is `EXPLAIN` of the request's: it returns the plan's lines,
    /// one text column a row, which [`PlanRow::explained`] makes the row [`respond`] takes.
    #[must_use]
    pub fn explains(&self) -> bool {
        self.shape.explain.is_some()
    }

    /// Whether the transaction ends with `ROLLBACK` whatever the answer (`Prefer:
    /// tx=rollback`, honoured): after `SET CONSTRAINTS ALL IMMEDIATE`, so a deferred
    /// constraint still refuses the write, as PostgREST does it.
    #[must_use]
    pub fn rolls_back(&self) -> bool {
        self.shape.rollback
    }

    /// The schemas PostgREST puts in a request's `search_path`: the one it addresses, then
    /// `public` (PostgREST's `db-extra-search-path`), each once, as identifiers
    /// (`"personal", "public"`). The gateway sets it for the transaction, so a function
    /// or view of that schema that names tables unqualified finds them there.
    #[must_use]
    pub fn search_path(&self) -> String {
        let mut path = vec![self.shape.schema.as_str()];
        if !path.contains(&EXTRA_SEARCH_PATH) {
            path.push(EXTRA_SEARCH_PATH);
        }
        let quoted: Vec<String> = path
            .iter()
            .map(|s| format!("\"{}\"", s.replace('"', "\"\"")))
            .collect();
        quoted.join(", ")
    }
}

/// PostgREST's default `db-extra-search-path`: after the request's schema, `public`.
const EXTRA_SEARCH_PATH: &str = "public";

/// What the parsed request holds, for the planners.
pub(crate) struct Ctx<'a> {
    pub req: &'a RestRequest<'a>,
    /// The schema addressed: the profile asked for, else the default.
    pub schema: String,
    /// Whether the schema was negotiated (a profile header, or more than one schema
    /// exposed): the answer then says which, in `Content-Profile`.
    pub negotiated: bool,
    pub query: Query,
    pub range: Range,
    pub prefer: Prefer,
    /// The media type answered, or explained when a plan was asked for.
    pub media: Media,
    pub explain: Option<explain::Explain>,
    pub settings: Settings,
    pub head: bool,
}

impl Ctx<'_> {
    fn shape(&self, kind: Kind, resolution_applies: bool) -> Shape {
        let mutation = matches!(kind, Kind::Insert | Kind::Update | Kind::Delete);
        let p = &self.prefer;
        let affects = matches!(kind, Kind::Update | Kind::Delete | Kind::Call { .. });
        let max_affected = p.max_affected.filter(|_| affects && p.strict == Some(true));
        let max_applied = max_affected.map(|n| format!("max-affected={n}"));
        let mut applied: Vec<&str> = Vec::new();
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
        let tx = p.rollback.filter(|_| self.settings.tx_override);
        applied.extend(tx.map(|r| if r { "tx=rollback" } else { "tx=commit" }));
        applied.extend(p.strict.map(|s| {
            if s {
                "handling=strict"
            } else {
                "handling=lenient"
            }
        }));
        applied.extend(max_applied.as_deref());
        Shape {
            kind,
            head: self.head,
            offset: self.range.lower,
            count: p.count.is_some(),
            media: self.media,
            representation: p.representation == Some(Representation::Full),
            prefer_applied: (!applied.is_empty()).then(|| applied.join(", ")),
            max_affected,
            merges: kind == Kind::Insert
                && resolution_applies
                && p.resolution == Some(Resolution::Merge),
            profile: self.negotiated.then(|| self.schema.clone()),
            explain: self.explain,
            rollback: tx == Some(true),
            schema: self.schema.clone(),
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

/// The schema a request addresses, as PostgREST negotiates it: `Accept-Profile` for `GET`
/// and `HEAD`, `Content-Profile` for the methods that send a body (and `DELETE`), else the
/// default; and whether that counts as negotiated (a profile given, or several exposed).
///
/// # Errors
/// 406 PGRST106 for a profile that is not exposed.
fn negotiate(req: &RestRequest<'_>, schema: &SchemaCache) -> Result<(String, bool), RestError> {
    let profile = match req.method {
        "POST" | "PATCH" | "PUT" | "DELETE" => req.content_profile,
        _ => req.accept_profile,
    };
    let exposed = schema.schemas();
    match profile {
        Some(p) if exposed.iter().any(|s| s == p) => Ok((p.to_owned(), true)),
        Some(_) => Err(RestError::new(
            406,
            "PGRST106",
            format!(
                "The schema must be one of the following: {}",
                exposed.join(", ")
            ),
        )),
        None => Ok((schema.default_schema().to_owned(), exposed.len() != 1)),
    }
}

/// Plans one request against the schema cache, with every setting off, as PostgREST's
/// defaults have them ([`plan_with`] takes a database's).
///
/// # Errors
/// The [`RestError`] PostgREST would answer before running anything: 404 PGRST205 for an
/// unknown table, 404 PGRST202 for an unknown function, 300 PGRST203 for a call several
/// overloads match, 406 PGRST106 for a schema that is not exposed, 400 PGRST100 for a query
/// parameter that does not parse, 400 42703 for an unknown column, 400 PGRST204 for an
/// unknown body column, 400 PGRST102 for a bad body, 406 PGRST107 for an unavailable media
/// type, 416 PGRST103 for an empty range, 400 21000 for an unfiltered `PATCH` or `DELETE`,
/// 400 PGRST128 for `max-affected` on a function returning one row, 400 PGRST123 for an
/// aggregate, 405 PGRST117/PGRST101
/// for a method the resource does not take, for resource embedding 400 PGRST200 (no
/// relationship), 300 PGRST201 (several), 400 PGRST108 (a key naming a resource not
/// embedded), PGRST118/PGRST119 (an order or spread of a to-many resource) and 42712 (two
/// resources under one name), and 400 PGRST127 for what this subset does not implement
/// (`PUT`, limits on mutations).
///
/// Embedded resources (`select=*,author:users(username)`) are lateral subqueries of the one
/// statement, resolved against the relationships of the request's schema
/// (`data-api-embedding.md`).
pub fn plan(req: &RestRequest<'_>, schema: &SchemaCache) -> Result<Plan, RestError> {
    plan_with(req, schema, Settings::default())
}

/// [`plan`] under a database's [`Settings`]: aggregates (else 400 PGRST123), a plan for
/// `Accept: application/vnd.pgrst.plan` (else 406 PGRST107), `Prefer: tx=rollback` (else
/// ignored) and a cap on the rows of reads and calls (`max_rows`).
///
/// # Errors
/// As [`plan`]; 400 PGRST123 for an aggregate with aggregates off.
pub fn plan_with(
    req: &RestRequest<'_>,
    schema: &SchemaCache,
    settings: Settings,
) -> Result<Plan, RestError> {
    let mut planned = planned(req, schema, settings)?;
    if let Some(e) = planned.shape.explain {
        planned.sql = e.wrap(&planned.sql);
    }
    Ok(planned)
}

fn planned(
    req: &RestRequest<'_>,
    schema: &SchemaCache,
    settings: Settings,
) -> Result<Plan, RestError> {
    let method = req.method;
    let resource = resource(req.path)?;
    let (schema_name, negotiated) = negotiate(req, schema)?;
    match resource {
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
            let ctx = context(req, false, schema_name, negotiated, settings)?;
            let table = schema
                .table_in(&ctx.schema, &name)
                .ok_or_else(|| RestError::table_not_found(&ctx.schema, &name))?;
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
            let ctx = context(req, method != "POST", schema_name, negotiated, settings)?;
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

/// What every planner needs of the request. Reads and calls have their range capped by
/// `max_rows` here (their embedded resources where the forest is built); writes are not,
/// as in PostgREST.
fn context<'a>(
    req: &'a RestRequest<'a>,
    rpc_read: bool,
    schema: String,
    negotiated: bool,
    settings: Settings,
) -> Result<Ctx<'a>, RestError> {
    let query = query::parse(req.query, rpc_read)?;
    settings::check_aggregates(settings, &query.select)?;
    let mut range = query::range(req.method, req.range, &query)?;
    let call = req.path.trim_matches('/').starts_with("rpc/");
    if call || matches!(req.method, "GET" | "HEAD") {
        range = range.capped(settings.max_rows);
    }
    let prefer = headers::prefer(req.prefer)?;
    let (media, explain) = headers::accept(req.accept, settings.explain)?;
    Ok(Ctx {
        req,
        schema,
        negotiated,
        query,
        range,
        prefer,
        media,
        explain,
        settings,
        head: req.method == "HEAD",
    })
}

/// The keys of a JSON object body, sorted as PostgREST's set of them is.
pub(crate) fn object_keys(v: &serde_json::Value) -> Option<BTreeSet<String>> {
    v.as_object().map(|o| o.keys().cloned().collect())
}
