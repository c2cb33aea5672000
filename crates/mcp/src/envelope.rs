//! What the adapter reads of a message before rmcp does: its JSON-RPC envelope, so a body
//! that is not one message is answered with JSON-RPC's own error, as the MCP transport
//! asks, instead of rmcp's plain-text `415`. rmcp reads a body it cannot type as a failure
//! to deserialize, and `tools/call` with `arguments` that is not an object as some other
//! method (so "method not found").
//!
//! The reading walks the whole body without keeping it (only `jsonrpc`, `id` and `method`
//! are kept), under serde_json's nesting limit, the one rmcp's own reading has: a
//! 100,000-deep body stops at depth 128.

use std::fmt;

use actix_web::http::StatusCode;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Value, json};

/// JSON-RPC's codes this module answers with.
pub(crate) const PARSE_ERROR: i32 = -32700;
pub(crate) const INVALID_REQUEST: i32 = -32600;
pub(crate) const INVALID_PARAMS: i32 = -32602;
pub(crate) const INTERNAL_ERROR: i32 = -32603;
/// MCP's (2026-07-28): the request's protocol version is not one the server speaks.
pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;

/// A JSON-RPC error answer: the HTTP status and the body.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refusal {
    pub status: StatusCode,
    pub body: Value,
}

impl Refusal {
    /// `id` is `null` where the request's id could not be read.
    pub(crate) fn new(status: StatusCode, id: Option<&Value>, code: i32, message: &str) -> Self {
        Self {
            status,
            body: json!({
                "jsonrpc": "2.0",
                "id": id.cloned().unwrap_or(Value::Null),
                "error": {"code": code, "message": message},
            }),
        }
    }

    pub(crate) fn with_data(mut self, data: Value) -> Self {
        self.body["error"]["data"] = data;
        self
    }
}

/// The JSON type of a value, its contents skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    Scalar,
    String,
    Array,
    Object,
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(KindVisitor)
    }
}

/// Skips a value through `deserialize_any`, not `deserialize_ignored_any`: serde_json
/// counts nesting only on the former.
struct KindVisitor;

impl<'de> Visitor<'de> for KindVisitor {
    type Value = Kind;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Kind, E> {
        Ok(Kind::Null)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Kind, E> {
        Ok(Kind::Scalar)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Kind, E> {
        Ok(Kind::Scalar)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Kind, E> {
        Ok(Kind::Scalar)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Kind, E> {
        Ok(Kind::Scalar)
    }

    fn visit_str<E>(self, _: &str) -> Result<Kind, E> {
        Ok(Kind::String)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Kind, A::Error> {
        while seq.next_element::<Kind>()?.is_some() {}
        Ok(Kind::Array)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Kind, A::Error> {
        while map.next_entry::<IgnoredAny, Kind>()?.is_some() {}
        Ok(Kind::Object)
    }
}

/// What `params` holds, as far as the checks here look.
#[derive(Debug, Default)]
struct Params {
    kind: Option<Kind>,
    name: Option<Kind>,
    arguments: Option<Kind>,
}

impl<'de> Deserialize<'de> for Params {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ParamsVisitor)
    }
}

struct ParamsVisitor;

impl<'de> Visitor<'de> for ParamsVisitor {
    type Value = Params;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("params")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Params, A::Error> {
        let mut params = Params {
            kind: Some(Kind::Object),
            ..Params::default()
        };
        while let Some(key) = map.next_key::<String>()? {
            let kind = map.next_value::<Kind>()?;
            match key.as_str() {
                "name" => params.name = Some(kind),
                "arguments" => params.arguments = Some(kind),
                _ => {}
            }
        }
        Ok(params)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Params, A::Error> {
        KindVisitor.visit_seq(seq).map(other)
    }

    fn visit_unit<E>(self) -> Result<Params, E> {
        Ok(other(Kind::Null))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Params, E> {
        Ok(other(Kind::Scalar))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Params, E> {
        Ok(other(Kind::Scalar))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Params, E> {
        Ok(other(Kind::Scalar))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Params, E> {
        Ok(other(Kind::Scalar))
    }

    fn visit_str<E>(self, _: &str) -> Result<Params, E> {
        Ok(other(Kind::String))
    }
}

fn other(kind: Kind) -> Params {
    Params {
        kind: Some(kind),
        ..Params::default()
    }
}

/// A message's envelope.
#[derive(Debug, Default)]
struct Envelope {
    jsonrpc: Option<Value>,
    id: Option<Value>,
    method: Option<Value>,
    params: Params,
    /// `result` or `error`: a response the client sends (to a server's request).
    answers: bool,
}

/// A body: one message, a batch, or some other JSON value.
#[derive(Debug)]
enum Body {
    Message(Envelope),
    Batch,
    Other,
}

impl<'de> Deserialize<'de> for Body {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(BodyVisitor)
    }
}

struct BodyVisitor;

impl<'de> Visitor<'de> for BodyVisitor {
    type Value = Body;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Body, A::Error> {
        let mut envelope = Envelope::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "jsonrpc" => envelope.jsonrpc = Some(map.next_value()?),
                "id" => envelope.id = Some(map.next_value()?),
                "method" => envelope.method = Some(map.next_value()?),
                "params" => envelope.params = map.next_value()?,
                "result" | "error" => {
                    map.next_value::<Kind>()?;
                    envelope.answers = true;
                }
                _ => {
                    map.next_value::<Kind>()?;
                }
            }
        }
        Ok(Body::Message(envelope))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Body, A::Error> {
        KindVisitor.visit_seq(seq).map(|_| Body::Batch)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Body, E> {
        Ok(Body::Other)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Body, E> {
        Ok(Body::Other)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Body, E> {
        Ok(Body::Other)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Body, E> {
        Ok(Body::Other)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Body, E> {
        Ok(Body::Other)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Body, E> {
        Ok(Body::Other)
    }
}

/// An id JSON-RPC allows and MCP keeps: a string or an integer (never `null`).
fn usable_id(id: &Value) -> bool {
    id.is_string() || id.as_i64().is_some()
}

/// The checks on a body rmcp is about to read: `Ok` with the request's id (when it has a
/// usable one, for an error rmcp answers in plain text), or the JSON-RPC error to answer.
///
/// # Errors
/// A [`Refusal`]: `-32700` for a body that is not JSON (or nests deeper than 128); `-32600`
/// for a batch, a value that is not an object, a `jsonrpc` other than `"2.0"`, an id that
/// is not a string or an integer, a method that is not a string, a message that is neither
/// a request, a notification nor a response (each with status 400); `-32602` for a
/// `tools/call` whose `params` are not an object with a string `name` and an object (or
/// no) `arguments`, in the answer to that request (status 200).
pub(crate) fn check(body: &[u8]) -> Result<Option<Value>, Refusal> {
    let invalid = |id: Option<&Value>, message: &str| {
        Refusal::new(StatusCode::BAD_REQUEST, id, INVALID_REQUEST, message)
    };
    let envelope = match serde_json::from_slice::<Body>(body) {
        Ok(Body::Message(envelope)) => envelope,
        Ok(Body::Batch) => {
            return Err(invalid(
                None,
                "Invalid Request: a batch (JSON array) is not accepted; send one message per request",
            ));
        }
        Ok(Body::Other) => {
            return Err(invalid(None, "Invalid Request: a message is a JSON object"));
        }
        Err(e) => {
            return Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                None,
                PARSE_ERROR,
                &format!("Parse error: {e}"),
            ));
        }
    };
    let id = match envelope.id {
        Some(id) if usable_id(&id) => Some(id),
        Some(_) => {
            return Err(invalid(
                None,
                "Invalid Request: id must be a string or an integer",
            ));
        }
        None => None,
    };
    if envelope.jsonrpc.as_ref().and_then(Value::as_str) != Some("2.0") {
        return Err(invalid(
            id.as_ref(),
            "Invalid Request: jsonrpc must be \"2.0\"",
        ));
    }
    let method = match &envelope.method {
        Some(Value::String(method)) => method.as_str(),
        Some(_) => {
            return Err(invalid(
                id.as_ref(),
                "Invalid Request: method must be a string",
            ));
        }
        None if envelope.answers && id.is_some() => return Ok(id),
        None => {
            return Err(invalid(
                id.as_ref(),
                "Invalid Request: neither a request, a notification nor a response",
            ));
        }
    };
    if method == "tools/call" && id.is_some() {
        let params = &envelope.params;
        let message = if params.kind != Some(Kind::Object) {
            Some("Invalid params: tools/call takes an object of params")
        } else if params.name != Some(Kind::String) {
            Some("Invalid params: name must be the tool's name, a string")
        } else if !matches!(params.arguments, None | Some(Kind::Null | Kind::Object)) {
            Some("Invalid params: arguments must be an object")
        } else {
            None
        };
        if let Some(message) = message {
            return Err(Refusal::new(
                StatusCode::OK,
                id.as_ref(),
                INVALID_PARAMS,
                message,
            ));
        }
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(body: &str) -> (u16, i64, Value) {
        let refusal = check(body.as_bytes()).expect_err(body);
        (
            refusal.status.as_u16(),
            refusal.body["error"]["code"].as_i64().unwrap_or_default(),
            refusal.body["id"].clone(),
        )
    }

    #[test]
    fn messages_pass_with_their_id() {
        for (body, id) in [
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
                json!(1),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"t","arguments":{"x":[1]}}}"#,
                json!("a"),
            ),
            (
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t"}}"#,
                json!(2),
            ),
            (r#"{"jsonrpc":"2.0","id":3,"result":{}}"#, json!(3)),
        ] {
            assert_eq!(check(body.as_bytes()), Ok(Some(id)), "{body}");
        }
        let notification = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(check(notification.as_bytes()), Ok(None));
    }

    #[test]
    fn what_is_not_json_is_a_parse_error() {
        for body in [
            "",
            "{",
            "not json",
            r#"{"jsonrpc":"2.0"} trailing"#,
            "\u{0}",
        ] {
            assert_eq!(code(body), (400, -32700, Value::Null), "{body:?}");
        }
    }

    #[test]
    fn deep_nesting_is_a_parse_error_found_at_once() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let started = std::time::Instant::now();
        assert_eq!(code(&deep), (400, -32700, Value::Null));
        let nested = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"a":{}1{}}}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert_eq!(code(&nested), (400, -32700, Value::Null));
        assert!(started.elapsed() < std::time::Duration::from_millis(100));
    }

    #[test]
    fn what_is_not_one_message_is_an_invalid_request() {
        for (body, id) in [
            ("[]", Value::Null),
            (r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, Value::Null),
            ("1", Value::Null),
            (r#""text""#, Value::Null),
            ("null", Value::Null),
            (r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#, json!(1)),
            (r#"{"id":1,"method":"ping"}"#, json!(1)),
            (
                r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
                Value::Null,
            ),
            (r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#, Value::Null),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
                Value::Null,
            ),
            (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, Value::Null),
            (r#"{"jsonrpc":"2.0","id":1,"method":7}"#, json!(1)),
            (r#"{"jsonrpc":"2.0","id":1}"#, json!(1)),
            ("{}", Value::Null),
        ] {
            assert_eq!(code(body), (400, -32600, id), "{body}");
        }
    }

    #[test]
    fn tools_call_params_that_are_not_an_object_are_invalid_params() {
        for params in [
            r#""params":{"name":"t","arguments":[1,2]}"#,
            r#""params":{"name":"t","arguments":"x"}"#,
            r#""params":{"name":"t","arguments":3}"#,
            r#""params":{"arguments":{}}"#,
            r#""params":{"name":5}"#,
            r#""params":[1]"#,
        ] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call",{params}}}"#);
            assert_eq!(code(&body), (200, -32602, json!(9)), "{body}");
        }
    }
}
