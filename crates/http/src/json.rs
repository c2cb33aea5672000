//! Reading JSON bodies field by field, so each kind of mistake gets the error code the spec
//! gives it: unparseable JSON is always `invalid_json`; a missing or mistyped field gets the
//! code of the route (`invalid_body`, `invalid_project`, …).

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::web::{Bytes, BytesMut};
use actix_web::{FromRequest, HttpRequest, http::header};
use futures_util::StreamExt;
use quire_kernel::ErrorCode;
use serde_json::{Map, Value};

use crate::MAX_PLATFORM_BODY;
use crate::error::ApiError;

/// A request body of at most the scope's [`BodyLimit`] (default [`MAX_PLATFORM_BODY`]);
/// larger ones are refused with a JSON `413 payload_too_large` (before reading them when
/// `Content-Length` says so).
#[derive(Debug)]
pub struct Body(pub Bytes);

/// The largest body a scope accepts, as app data.
#[derive(Debug, Clone, Copy)]
pub struct BodyLimit(pub usize);

fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        ErrorCode::PayloadTooLarge,
        format!("request body exceeds {limit} bytes"),
    )
    .with_field("limit", Value::from("request_size"))
}

impl FromRequest for Body {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let declared = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        let limit = req
            .app_data::<BodyLimit>()
            .map_or(MAX_PLATFORM_BODY, |l| l.0);
        let mut payload = payload.take();
        Box::pin(async move {
            if declared.is_some_and(|n| n > limit) {
                return Err(too_large(limit));
            }
            // Reserve up front only a little: a declared length costs nothing to lie about.
            let mut buf = BytesMut::with_capacity(declared.unwrap_or(0).min(limit).min(1 << 20));
            while let Some(chunk) = payload.next().await {
                let chunk = chunk.map_err(|e| {
                    ApiError::new(
                        ErrorCode::InvalidJson,
                        format!("request body unreadable: {e}"),
                    )
                })?;
                if buf.len() + chunk.len() > limit {
                    return Err(too_large(limit));
                }
                buf.extend_from_slice(&chunk);
            }
            Ok(Body(buf.freeze()))
        })
    }
}

/// Parses a body that must be a JSON object.
///
/// # Errors
/// `invalid_json` when the bytes are not JSON; `invalid_body` when the JSON is not an object.
pub fn object(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::new(
            ErrorCode::InvalidJson,
            format!("request body is not valid JSON: {e}"),
        )
    })?;
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(ApiError::new(
            ErrorCode::InvalidBody,
            "request body must be a JSON object",
        )),
    }
}

/// The fields of a body, with the code to use when one is missing or of the wrong type.
#[derive(Debug)]
pub struct Fields {
    map: Map<String, Value>,
    code: ErrorCode,
}

impl Fields {
    pub fn new(map: Map<String, Value>, code: ErrorCode) -> Self {
        Self { map, code }
    }

    fn wrong(&self, name: &str, expected: &str) -> ApiError {
        ApiError::new(self.code, format!("{name} must be {expected}"))
    }

    pub fn has(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.map.get(name)
    }

    /// # Errors
    /// The route's code when the field is absent or not a string.
    pub fn required_str(&self, name: &str) -> Result<String, ApiError> {
        match self.map.get(name) {
            Some(Value::String(s)) => Ok(s.clone()),
            _ => Err(self.wrong(name, "a string")),
        }
    }

    /// Absent (or `null`) is `None`.
    ///
    /// # Errors
    /// The route's code when present and not a string.
    pub fn optional_str(&self, name: &str) -> Result<Option<String>, ApiError> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(self.wrong(name, "a string")),
        }
    }

    /// Absent is `None`, `null` is `Some(None)`.
    ///
    /// # Errors
    /// The route's code when present and neither a string nor `null`.
    pub fn nullable_str(&self, name: &str) -> Result<Option<Option<String>>, ApiError> {
        match self.map.get(name) {
            None => Ok(None),
            Some(Value::Null) => Ok(Some(None)),
            Some(Value::String(s)) => Ok(Some(Some(s.clone()))),
            Some(_) => Err(self.wrong(name, "a string or null")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unparseable_is_invalid_json_and_non_objects_are_invalid_body() {
        assert_eq!(object(b"{").unwrap_err().code(), "invalid_json");
        assert_eq!(object(b"").unwrap_err().code(), "invalid_json");
        assert_eq!(object(b"[1]").unwrap_err().code(), "invalid_body");
        assert!(object(br#"{"a":1}"#).is_ok());
    }

    #[test]
    fn fields_use_the_route_code() {
        let f = Fields::new(
            object(br#"{"s":"x","n":1,"z":null}"#).unwrap(),
            ErrorCode::InvalidProject,
        );
        assert_eq!(f.required_str("s").unwrap(), "x");
        assert_eq!(f.required_str("n").unwrap_err().code(), "invalid_project");
        assert_eq!(
            f.required_str("missing").unwrap_err().code(),
            "invalid_project"
        );
        assert_eq!(f.optional_str("z").unwrap(), None);
        assert_eq!(f.optional_str("n").unwrap_err().code(), "invalid_project");
        assert_eq!(f.nullable_str("z").unwrap(), Some(None));
        assert_eq!(f.nullable_str("absent").unwrap(), None);
        assert_eq!(f.nullable_str("s").unwrap(), Some(Some("x".into())));
    }
}
