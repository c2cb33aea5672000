//! The size-limited request [`Body`] every surface reads its posts through.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::web::{Bytes, BytesMut};
use actix_web::{FromRequest, HttpRequest, http::header};
use futures_util::StreamExt;
use quire_kernel::ErrorCode;
use serde_json::Value;

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
        let limit = req
            .app_data::<BodyLimit>()
            .map_or(MAX_PLATFORM_BODY, |l| l.0);
        read(req, payload, limit)
    }
}

/// A request body of at most `LIMIT` bytes, whatever the scope's limit: for a route whose
/// largest valid body is larger than its scope's (an email's 64 KiB of text, JSON-escaped).
#[derive(Debug)]
pub struct BodyUpTo<const LIMIT: usize>(pub Bytes);

impl<const LIMIT: usize> FromRequest for BodyUpTo<LIMIT> {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let body = read(req, payload, LIMIT);
        Box::pin(async move { body.await.map(|b| Self(b.0)) })
    }
}

fn read(
    req: &HttpRequest,
    payload: &mut Payload,
    limit: usize,
) -> Pin<Box<dyn Future<Output = Result<Body, ApiError>>>> {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
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
            // Once the first reservation is full, a client that really is sending gets room
            // for all it declared at once: growing by doubling would hold the old buffer and
            // one twice its size at the same moment (48 MiB for a 27 MiB body).
            if buf.len() + chunk.len() > buf.capacity()
                && let Some(declared) = declared.filter(|&d| d >= buf.len() + chunk.len())
            {
                buf.reserve(declared - buf.len());
            }
            buf.extend_from_slice(&chunk);
        }
        Ok(Body(buf.freeze()))
    })
}
