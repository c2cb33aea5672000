//! The size-limited request [`Body`] every surface reads its posts through, and [`WritableBody`],
//! the same still open to change, for a route that decodes what it was sent in place.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::web::{Bytes, BytesMut};
use actix_web::{FromRequest, HttpRequest, http::header};
use futures_util::StreamExt;
use quire_kernel::ErrorCode;
use serde_json::Value;

use crate::MAX_PLATFORM_BODY;
use crate::common::mapping::BodyMapping;
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
        let room = read(req, payload, scope_limit(req));
        Box::pin(async move { room.await?.into_bytes().map(Body) })
    }
}

fn scope_limit(req: &HttpRequest) -> usize {
    req.app_data::<BodyLimit>()
        .map_or(MAX_PLATFORM_BODY, |l| l.0)
}

/// A [`Body`] still open to change: a route that decodes what it was sent (a publish's
/// base64) does so in the body's own memory, then freezes it.
#[derive(Debug)]
pub struct WritableBody(Room);

impl WritableBody {
    /// The body as it came, to parse.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        match &self.0 {
            Room::Heap(buf) => buf,
            Room::Mapped { map, filled, .. } => &map.room()[..*filled],
        }
    }

    /// The body, to change in place.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        match &mut self.0 {
            Room::Heap(buf) => buf,
            Room::Mapped { map, filled, .. } => &mut map.room_mut()[..*filled],
        }
    }

    /// The body as it now stands, shareable.
    ///
    /// # Errors
    /// `internal_error` if a mapped body cannot be made read-only.
    pub fn freeze(self) -> Result<Bytes, ApiError> {
        self.0.into_bytes()
    }
}

impl From<BytesMut> for WritableBody {
    fn from(bytes: BytesMut) -> Self {
        WritableBody(Room::Heap(bytes))
    }
}

impl FromRequest for WritableBody {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let room = read(req, payload, scope_limit(req));
        Box::pin(async move { room.await.map(WritableBody) })
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
        let room = read(req, payload, LIMIT);
        Box::pin(async move { room.await?.into_bytes().map(Self) })
    }
}

fn read(
    req: &HttpRequest,
    payload: &mut Payload,
    limit: usize,
) -> Pin<Box<dyn Future<Output = Result<Room, ApiError>>>> {
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
        let mut room = Room::for_declared(declared)?;
        while let Some(chunk) = payload.next().await {
            let chunk = chunk.map_err(|e| {
                ApiError::new(
                    ErrorCode::InvalidJson,
                    format!("request body unreadable: {e}"),
                )
            })?;
            if room.len() + chunk.len() > limit {
                return Err(too_large(limit));
            }
            room.append(&chunk)?;
        }
        Ok(room)
    })
}

/// Bodies declared at least this long are read into an anonymous mapping of their own.
const MAPPED_BODY: usize = 1 << 20;

/// Where a body is read to. A long one gets a mapping of its own (see
/// [`crate::common::mapping`]), of at least its declared length (which costs address space,
/// not memory, until the bytes arrive, so a lying client gains nothing). On the heap, freeing
/// a body of 27 MiB makes glibc raise its mmap threshold to that size, and later bodies then
/// stay on the heap after they are freed: five publishes in a row peaked at 63 MiB above the
/// server's start against 31 MiB for one.
#[derive(Debug)]
enum Room {
    Heap(BytesMut),
    Mapped {
        map: BodyMapping,
        filled: usize,
        declared: usize,
    },
}

impl Room {
    fn for_declared(declared: Option<usize>) -> Result<Self, ApiError> {
        match declared {
            Some(n) if n >= MAPPED_BODY => Ok(Room::Mapped {
                map: BodyMapping::for_length(n).map_err(|e| ApiError::internal(&e))?,
                filled: 0,
                declared: n,
            }),
            _ => Ok(Room::Heap(BytesMut::with_capacity(declared.unwrap_or(0)))),
        }
    }

    fn len(&self) -> usize {
        match self {
            Room::Heap(buf) => buf.len(),
            Room::Mapped { filled, .. } => *filled,
        }
    }

    fn append(&mut self, chunk: &[u8]) -> Result<(), ApiError> {
        match self {
            Room::Heap(buf) => buf.extend_from_slice(chunk),
            Room::Mapped {
                map,
                filled,
                declared,
            } => {
                let end = *filled + chunk.len();
                // The server frames a body by its Content-Length, so this cannot happen.
                let Some(to) = map
                    .room_mut()
                    .get_mut(*filled..end)
                    .filter(|_| end <= *declared)
                else {
                    return Err(ApiError::new(
                        ErrorCode::InvalidJson,
                        "request body is longer than its Content-Length",
                    ));
                };
                to.copy_from_slice(chunk);
                *filled = end;
            }
        }
        Ok(())
    }

    fn into_bytes(self) -> Result<Bytes, ApiError> {
        match self {
            Room::Heap(buf) => Ok(buf.freeze()),
            Room::Mapped { map, filled, .. } => {
                map.freeze(filled).map_err(|e| ApiError::internal(&e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_bodies_are_read_into_a_mapping_that_holds_exactly_what_came() {
        let mut room = Room::for_declared(Some(MAPPED_BODY + 10)).unwrap();
        assert!(matches!(room, Room::Mapped { .. }));
        room.append(&[7; MAPPED_BODY]).unwrap();
        room.append(b"tail").unwrap();
        assert_eq!(room.len(), MAPPED_BODY + 4);
        let too_long = room.append(&[0; 7]).unwrap_err();
        assert_eq!(too_long.code(), "invalid_json");
        let body = room.into_bytes().unwrap();
        assert_eq!(body.len(), MAPPED_BODY + 4);
        assert!(body[..MAPPED_BODY].iter().all(|&b| b == 7));
        assert_eq!(&body[MAPPED_BODY..], b"tail");

        let mut short = Room::for_declared(Some(5)).unwrap();
        assert!(matches!(short, Room::Heap(_)));
        short.append(b"hello").unwrap();
        assert_eq!(short.into_bytes().unwrap(), "hello");
    }
}
