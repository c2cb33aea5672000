//! The errors of the data API, in PostgREST's shape and with PostgREST's codes, statuses and
//! messages wherever the same check is made, so that supabase-js and supabase-py report them
//! as they would behind PostgREST.

use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::answer::RestAnswer;

/// An error answer: `status` is the HTTP status; the rest is the JSON body
/// `{"code", "details", "hint", "message"}` PostgREST sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestError {
    pub status: u16,
    /// `PGRST…` for the gateway's own checks, the SQLSTATE for PostgreSQL's.
    pub code: String,
    /// Text, except for an ambiguous embedding (`PGRST201`): the JSON array of the
    /// candidate relationships, which the body carries as an array, as PostgREST's does.
    pub details: Option<String>,
    pub hint: Option<String>,
    pub message: String,
}

impl Serialize for RestError {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut body = s.serialize_struct("RestError", 4)?;
        body.serialize_field("code", &self.code)?;
        let listed = self
            .details
            .as_deref()
            .filter(|_| self.code == "PGRST201")
            .and_then(|d| serde_json::from_str::<serde_json::Value>(d).ok())
            .filter(serde_json::Value::is_array);
        match listed {
            Some(list) => body.serialize_field("details", &list)?,
            None => body.serialize_field("details", &self.details)?,
        }
        body.serialize_field("hint", &self.hint)?;
        body.serialize_field("message", &self.message)?;
        body.end()
    }
}

impl RestError {
    pub(crate) fn new(status: u16, code: &str, message: impl Into<String>) -> Self {
        RestError {
            status,
            code: code.to_owned(),
            details: None,
            hint: None,
            message: message.into(),
        }
    }

    pub(crate) fn with_details(mut self, details: impl Into<String>) -> Self {
        self.details = Some(details.into());
        self
    }

    pub(crate) fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The JSON body, `{"code":…,"details":…,"hint":…,"message":…}`.
    #[must_use]
    pub fn body(&self) -> String {
        // Four strings and nulls cannot fail to serialize.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The whole HTTP answer: status, `Content-Type`, PostgREST's `Proxy-Status`, and
    /// `WWW-Authenticate: Bearer` on a 401 as PostgREST sends it.
    #[must_use]
    pub fn to_answer(&self) -> RestAnswer {
        let mut headers = vec![
            (
                "Content-Type".to_owned(),
                "application/json; charset=utf-8".to_owned(),
            ),
            (
                "Proxy-Status".to_owned(),
                format!("PostgREST; error={}", self.code),
            ),
        ];
        if self.status == 401 {
            headers.push(("WWW-Authenticate".to_owned(), "Bearer".to_owned()));
        }
        RestAnswer {
            status: self.status,
            headers,
            body: Some(self.body()),
        }
    }

    /// PGRST100: a query parameter that does not parse. `what` is PostgREST's label, e.g.
    /// `filter (eq.1x)`; the column is 1-based as Parsec counts it.
    pub(crate) fn parse(what: &str, column: usize, details: String) -> Self {
        let label = format!("failed to parse {what}");
        let shown = label.replace('\\', "\\\\").replace('"', "\\\"");
        RestError::new(
            400,
            "PGRST100",
            format!("\"{shown}\" (line 1, column {column})"),
        )
        .with_details(details)
    }

    pub(crate) fn invalid_body(message: &str) -> Self {
        RestError::new(400, "PGRST102", message)
    }

    pub(crate) fn not_implemented(details: impl Into<String>) -> Self {
        RestError::new(400, "PGRST127", "Feature not implemented").with_details(details)
    }

    pub(crate) fn table_not_found(schema: &str, table: &str) -> Self {
        RestError::new(
            404,
            "PGRST205",
            format!("Could not find the table '{schema}.{table}' in the schema cache"),
        )
    }

    /// PGRST204: a body or `columns=` key that names no column (PostgREST checks these itself).
    pub(crate) fn column_not_found(table: &str, column: &str) -> Self {
        RestError::new(
            400,
            "PGRST204",
            format!("Could not find the '{column}' column of '{table}' in the schema cache"),
        )
    }

    /// What PostgreSQL answers (42703, 400 through PostgREST) for a `select`, filter, order or
    /// `on_conflict` column that does not exist; refused here before any SQL is built.
    pub(crate) fn undefined_column(table: &str, column: &str) -> Self {
        RestError::new(
            400,
            "42703",
            format!("column {table}.{column} does not exist"),
        )
    }

    pub(crate) fn range_not_satisfiable(details: String) -> Self {
        RestError::new(416, "PGRST103", "Requested range not satisfiable").with_details(details)
    }

    pub(crate) fn singular(rows: i64) -> Self {
        RestError::new(
            406,
            "PGRST116",
            "Cannot coerce the result to a single JSON object",
        )
        .with_details(format!("The result contains {rows} rows"))
    }
}

impl std::fmt::Display for RestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.status, self.code, self.message)
    }
}

impl std::error::Error for RestError {}

/// A PostgreSQL error raised while executing a plan, as PostgREST answers it: the body keeps
/// the SQLSTATE, message, detail and hint; the status follows PostgREST's table (23505 and
/// 23503 → 409, 42501 → 401 for the anonymous role and 403 otherwise, 42883 and 42P01 → 404,
/// P0001 → 400, 21000 "… requires a WHERE clause" → 400, 57014 → 500, anything unlisted →
/// 400). `RAISE SQLSTATE 'PGRST'` with a JSON message and detail sets code, message, status
/// and headers as PostgREST allows; `PTxyz` sets the status xyz.
#[must_use]
pub fn from_pg_error(
    sqlstate: &str,
    message: &str,
    detail: Option<&str>,
    hint: Option<&str>,
    anon: bool,
) -> RestError {
    if sqlstate == "PGRST"
        && let Some(custom) = raised_pgrst(message, detail)
    {
        return custom;
    }
    RestError {
        status: pg_status(sqlstate, message, !anon),
        code: sqlstate.to_owned(),
        details: detail.map(str::to_owned),
        hint: hint.map(str::to_owned),
        message: message.to_owned(),
    }
}

fn pg_status(code: &str, message: &str, authed: bool) -> u16 {
    let two = code.get(..2).unwrap_or("");
    match code {
        "23503" | "23505" => return 409,
        "25006" => return 405,
        "21000" if message.ends_with("requires a WHERE clause") => return 400,
        "21000" => return 500,
        "22023" if message.starts_with("role") && message.ends_with("does not exist") => {
            return 401;
        }
        "53400" => return 500,
        "57P01" => return 503,
        "P0001" => return 400,
        "42883" if message.starts_with("function xmlagg(") => return 406,
        "42883" | "42P01" => return 404,
        "42P17" => return 500,
        "42501" => return if authed { 403 } else { 401 },
        _ => {}
    }
    match two {
        "08" | "53" => 503,
        "09" | "25" | "2D" | "38" | "39" | "3B" | "40" | "54" | "55" | "57" | "58" | "F0"
        | "HV" | "P0" | "XX" => 500,
        "0L" | "0P" | "28" => 403,
        "PT" => code
            .get(2..)
            .and_then(|n| n.parse::<u16>().ok())
            .filter(|n| (100..=599).contains(n))
            .unwrap_or(500),
        _ => 400,
    }
}

/// `RAISE sqlstate 'PGRST' USING message = '{"code":…,"message":…}', detail =
/// '{"status":…,"headers":{…}}'`: PostgREST's full control of the error answer. Headers are
/// not carried by [`RestError`]; the status, code, message, details and hint are.
fn raised_pgrst(message: &str, detail: Option<&str>) -> Option<RestError> {
    let msg: serde_json::Value = serde_json::from_str(message).ok()?;
    let det: serde_json::Value = serde_json::from_str(detail?).ok()?;
    let text =
        |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_owned);
    let status = u16::try_from(det.get("status")?.as_u64()?).ok()?;
    Some(RestError {
        status,
        code: text(&msg, "code")?,
        message: text(&msg, "message")?,
        details: text(&msg, "details"),
        hint: text(&msg, "hint"),
    })
}
