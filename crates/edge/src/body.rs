//! The size-limited request [`Body`] every surface reads its posts through, and [`WritableBody`],
//! the same still open to change, for a route that decodes what it was sent in place.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::web::{Bytes, BytesMut};
use actix_web::{FromRequest, HttpRequest, http::header, web};
use futures_util::StreamExt;
use quire_kernel::ErrorCode;
use serde_json::Value;

use crate::MAX_PLATFORM_BODY;
use crate::error::ApiError;
use crate::in_flight::{BodiesInFlight, BodyBytes, Busy, RETRY_AFTER_SECS};
use crate::mapping::BodyMapping;

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
pub struct WritableBody(Received);

impl WritableBody {
    /// The body as it came, to parse.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        match &self.0.room {
            Room::Heap(buf) => buf,
            Room::Mapped { map, filled, .. } => &map.room()[..*filled],
        }
    }

    /// The body, to change in place.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        match &mut self.0.room {
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
        WritableBody(Received {
            room: Room::Heap(bytes),
            place: None,
        })
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
) -> Pin<Box<dyn Future<Output = Result<Received, ApiError>>>> {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    let place = (declared.is_none_or(|n| n <= limit))
        .then(|| admit(req, declared.unwrap_or(limit)))
        .flatten();
    let mut payload = payload.take();
    Box::pin(async move {
        if declared.is_some_and(|n| n > limit) {
            return Err(too_large(limit));
        }
        let place = place.transpose()?;
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
        Ok(Received { room, place })
    })
}

/// A long body's place among the bodies in flight (none for a short one, or where the app
/// sets no bound). A body of unknown length counts as the largest it may grow to.
fn admit(req: &HttpRequest, length: usize) -> Option<Result<BodyBytes, ApiError>> {
    if length < MAPPED_BODY {
        return None;
    }
    let bound = req.app_data::<web::Data<BodiesInFlight>>()?;
    let authorization = req
        .headers()
        .get(header::AUTHORIZATION)
        .map(header::HeaderValue::as_bytes);
    let length = u64::try_from(length).unwrap_or(u64::MAX);
    Some(
        bound
            .clone()
            .into_inner()
            .admit(authorization, length)
            .map_err(busy),
    )
}

pub(crate) fn busy(why: Busy) -> ApiError {
    let refused = match why {
        Busy::Key => ApiError::new(
            ErrorCode::RateLimited,
            "this credential is sending as many long bodies as it may at once; \
             retry when one has been answered",
        ),
        Busy::Server => ApiError::new(
            ErrorCode::ServerBusy,
            "the server is receiving as many long bodies as it takes at once; retry shortly",
        ),
    };
    refused
        .with_field("limit", Value::from("bodies_in_flight"))
        .with_retry_after(RETRY_AFTER_SECS)
        .closing()
}

/// A body as read, with its place among the bodies in flight.
#[derive(Debug)]
struct Received {
    room: Room,
    /// Held until the last of the body's bytes is dropped.
    place: Option<BodyBytes>,
}

impl Received {
    fn into_bytes(self) -> Result<Bytes, ApiError> {
        let bytes = self.room.into_bytes()?;
        Ok(match self.place {
            None => bytes,
            Some(place) => Bytes::from_owner(Counted {
                bytes,
                _place: place,
            }),
        })
    }
}

/// A body's bytes with its place among the bodies in flight, which goes with the last slice.
struct Counted {
    bytes: Bytes,
    _place: BodyBytes,
}

impl AsRef<[u8]> for Counted {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

/// Bodies declared at least this long are read into an anonymous mapping of their own.
pub(crate) const MAPPED_BODY: usize = 1 << 20;

/// A short body's first room on the heap; it grows (doubling) as more arrives.
const FIRST_ROOM: usize = 16 * 1024;

/// Where a body is read to. A long one gets a mapping of its own (see
/// [`crate::mapping`]), of at least its declared length: address space, of which
/// only what the bytes that arrived touched is resident, and which the bound on bodies in
/// flight ([`BodiesInFlight`]) limits. On the heap, freeing a body of 27 MiB makes glibc
/// raise its mmap threshold to that size, and later bodies then stay on the heap after they
/// are freed: five publishes in a row peaked at 63 MiB above the server's start against
/// 31 MiB for one. A short one grows on the heap as its bytes arrive, from at most
/// [`FIRST_ROOM`]: reserved at its declared length, 10,000 connections that declare 60 kB and
/// send a byte would hold 600 MB.
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
            _ => Ok(Room::Heap(BytesMut::with_capacity(
                declared.unwrap_or(0).min(FIRST_ROOM),
            ))),
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

    #[test]
    fn a_short_body_grows_with_what_arrives_not_with_its_declared_length() {
        let mut room = Room::for_declared(Some(60_000)).unwrap();
        room.append(b"x").unwrap();
        let Room::Heap(buf) = &room else {
            panic!("a short body is read on the heap")
        };
        assert!(buf.capacity() <= FIRST_ROOM, "{} reserved", buf.capacity());
        room.append(&[b'y'; 59_999]).unwrap();
        assert_eq!(room.into_bytes().unwrap().len(), 60_000);
    }

    mod in_flight {
        use std::sync::Arc;

        use actix_web::{App, HttpResponse, test, web};

        use super::super::*;

        const MIB: usize = 1 << 20;

        /// Posts `length` bytes with `key`: the status, `Retry-After` and the JSON body.
        macro_rules! post {
            ($app:expr, $key:expr, $length:expr) => {{
                let req = test::TestRequest::post()
                    .uri("/")
                    .insert_header((header::AUTHORIZATION, format!("Bearer {}", $key)))
                    .set_payload(vec![b'a'; $length])
                    .to_request();
                let res = test::call_service($app, req).await;
                let status = res.status().as_u16();
                let retry = res
                    .headers()
                    .get(header::RETRY_AFTER)
                    .map(|v| v.to_str().unwrap().to_owned());
                let body = test::read_body(res).await;
                let json: serde_json::Value =
                    serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
                (status, retry, json)
            }};
        }

        #[actix_web::test]
        async fn long_bodies_past_a_keys_share_or_the_servers_bound_are_refused_with_a_retry() {
            let bound = web::Data::new(BodiesInFlight::new(4 * MIB as u64, 2 * MIB as u64));
            let app = test::init_service(
                App::new()
                    .app_data(bound.clone())
                    .app_data(BodyLimit(8 * MIB))
                    .route(
                        "/",
                        web::post().to(|body: Body| async move {
                            HttpResponse::Ok().body(body.0.len().to_string())
                        }),
                    ),
            )
            .await;
            let bound: Arc<BodiesInFlight> = bound.into_inner();
            // A body of `one` still being received.
            let held = bound.admit(Some(b"Bearer one"), 2 * MIB as u64).unwrap();

            let (status, retry, body) = post!(&app, "one", MIB);
            assert_eq!(status, 429);
            assert_eq!(retry.as_deref(), Some("5"));
            assert_eq!(body["error"], "rate_limited");
            assert_eq!(body["limit"], "bodies_in_flight");

            let (status, _, _) = post!(&app, "two", MIB);
            assert_eq!(status, 200, "another key has a share of its own");
            assert_eq!(bound.held(), 2 * MIB as u64, "its place went with its body");

            let also_held = bound.admit(Some(b"Bearer three"), MIB as u64).unwrap();
            let (status, retry, body) = post!(&app, "four", 2 * MIB);
            assert_eq!(status, 503);
            assert_eq!(retry.as_deref(), Some("5"));
            assert_eq!(body["error"], "server_busy");
            assert_eq!(body["limit"], "bodies_in_flight");

            let (status, _, _) = post!(&app, "four", 1000);
            assert_eq!(status, 200, "short bodies are not counted");

            drop((held, also_held));
            let (status, _, _) = post!(&app, "one", 2 * MIB);
            assert_eq!(status, 200, "the places came back");
            assert_eq!(bound.held(), 0);
        }
    }
}
