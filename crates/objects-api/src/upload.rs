//! Reading an upload off the wire: a `multipart/form-data` body (text fields, then one
//! `file` part) or a raw body, streamed piece by piece into the domain's [`Upload`], which
//! hashes, counts and caps the bytes on their way to storage. Nothing here holds the file.

use std::cell::Cell;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_multipart::Multipart;
use actix_web::error::PayloadError;
use actix_web::web::Bytes;
use actix_web::{HttpRequest, http::header, web};
use futures_util::future::Either;
use futures_util::{Stream, StreamExt};
use quire_edge::ApiError;
use quire_edge::streamed::StreamedBody;
use quire_kernel::ErrorCode;
use quire_objects::{ObjectError, ObjectView, Upload};

/// Longest text field of a multipart upload.
pub(crate) const MAX_FIELD_BYTES: usize = 64 * 1024;
/// Most text fields of one upload.
const MAX_FIELDS: usize = 32;
/// The most a multipart body can hold besides the file: its fields, part heads and
/// boundaries.
const MULTIPART_ROOM: u64 = (MAX_FIELDS as u64 + 1) * (MAX_FIELD_BYTES as u64 + 8 * 1024);

fn malformed(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::InvalidMultipartBody, message)
}

/// The text fields of a multipart upload, by name.
pub(crate) type Fields = HashMap<String, String>;

/// What the file part said of itself.
#[derive(Debug, Default)]
pub(crate) struct PartInfo {
    pub filename: Option<String>,
    pub declared_size: Option<u64>,
}

/// A place among the bodies in flight for an upload sent with the request's credential.
pub(crate) fn admit(req: &HttpRequest) -> Result<StreamedBody, ApiError> {
    let credential = req
        .headers()
        .get(header::AUTHORIZATION)
        .map(header::HeaderValue::as_bytes);
    StreamedBody::admit(req, credential)
}

/// The request's declared length.
pub(crate) fn declared_length(req: &HttpRequest) -> Option<u64> {
    req.headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
}

/// Reads a multipart upload: its text fields, then the `file` part, which `begin` (given
/// the fields) turns into an [`Upload`] that the part's bytes stream into. A malformed body,
/// no `file` part or two of them, a field after the file or over [`MAX_FIELD_BYTES`], is
/// `invalid_multipart_body`; whatever was stored by then goes. The file's bytes are counted
/// in `body`'s place among the bodies in flight as they arrive.
pub(crate) async fn multipart<F, Fut>(
    req: &HttpRequest,
    payload: web::Payload,
    body: &mut StreamedBody,
    begin: F,
) -> Result<ObjectView, ApiError>
where
    F: FnOnce(Fields, PartInfo) -> Fut,
    Fut: Future<Output = Result<Upload, ObjectError>>,
{
    let is_multipart = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| {
            t.trim_start()
                .to_ascii_lowercase()
                .starts_with("multipart/form-data")
        });
    if !is_multipart {
        return Err(malformed(
            "the body must be multipart/form-data with one file part",
        ));
    }
    let ended = Rc::new(Cell::new(false));
    let mut parts = Multipart::new(
        req.headers(),
        Watched {
            inner: payload,
            ended: ended.clone(),
        },
    );
    let mut fields = Fields::new();
    let mut begin = Some(begin);
    let mut upload: Option<Upload> = None;
    while let Some(part) = settle(&ended, parts.next()).await? {
        let mut part = match part {
            Ok(p) => p,
            Err(e) => {
                return Err(
                    give_up(upload, malformed(format!("malformed multipart body: {e}"))).await,
                );
            }
        };
        let name = part.name().unwrap_or("").to_owned();
        if name == "file" {
            let Some(begin) = begin.take() else {
                return Err(give_up(upload, malformed("send exactly one file part")).await);
            };
            let info = PartInfo {
                filename: part
                    .content_disposition()
                    .and_then(|d| d.get_filename())
                    .map(str::to_owned),
                // The file is at least the body less what its fields and part heads can
                // take: when even that passes the cap, nothing is stored.
                declared_size: declared_length(req).map(|n| n.saturating_sub(MULTIPART_ROOM)),
            };
            let mut started = begin(std::mem::take(&mut fields), info).await?;
            loop {
                match settle(&ended, part.next()).await {
                    Ok(None) => break,
                    Ok(Some(Ok(bytes))) => {
                        if let Err(busy) = body.arrived(bytes.len()) {
                            started.abandon().await;
                            return Err(busy);
                        }
                        started.write(bytes).await?;
                    }
                    Ok(Some(Err(e))) => {
                        started.abandon().await;
                        return Err(malformed(format!("malformed multipart body: {e}")));
                    }
                    Err(e) => {
                        started.abandon().await;
                        return Err(e);
                    }
                }
            }
            upload = Some(started);
            continue;
        }
        if upload.is_some() {
            return Err(give_up(
                upload,
                malformed("text fields must come before the file part"),
            )
            .await);
        }
        if fields.len() >= MAX_FIELDS || fields.contains_key(&name) {
            return Err(malformed(format!(
                "at most {MAX_FIELDS} text fields, each once"
            )));
        }
        let mut value = Vec::new();
        while let Some(piece) = settle(&ended, part.next()).await? {
            let piece = piece.map_err(|e| malformed(format!("malformed multipart body: {e}")))?;
            if value.len() + piece.len() > MAX_FIELD_BYTES {
                return Err(malformed(format!(
                    "field {name:?} is over {MAX_FIELD_BYTES} bytes"
                )));
            }
            value.extend_from_slice(&piece);
        }
        let value = String::from_utf8(value)
            .map_err(|_| malformed(format!("field {name:?} is not UTF-8 text")))?;
        fields.insert(name, value);
    }
    match upload {
        Some(upload) => Ok(upload.finish().await?),
        None => Err(malformed(
            "no file part: send the file as a part named file",
        )),
    }
}

/// The body as it arrives, noting when it has all arrived.
struct Watched {
    inner: web::Payload,
    ended: Rc<Cell<bool>>,
}

impl Stream for Watched {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let next = Pin::new(&mut self.inner).poll_next(cx);
        if matches!(next, Poll::Ready(None)) {
            self.ended.set(true);
        }
        next
    }
}

/// How long the parser may take once the whole body is in: it has nothing left to wait for.
const PARSE_AFTER_END: Duration = Duration::from_millis(500);

/// `next` of the multipart parser, which waits for bytes that will never come when a body
/// ends inside a boundary (a truncated body): once the body has ended, a parser that has not
/// answered within [`PARSE_AFTER_END`] is refused as malformed.
async fn settle<T>(ended: &Cell<bool>, next: impl Future<Output = T>) -> Result<T, ApiError> {
    let next = std::pin::pin!(next);
    let stalled = std::pin::pin!(async {
        loop {
            actix_web::rt::time::sleep(PARSE_AFTER_END).await;
            if ended.get() {
                actix_web::rt::time::sleep(PARSE_AFTER_END).await;
                return;
            }
        }
    });
    match futures_util::future::select(next, stalled).await {
        Either::Left((item, _)) => Ok(item),
        Either::Right(((), _)) => Err(malformed(
            "malformed multipart body: it ended before its closing boundary",
        )),
    }
}

async fn give_up(upload: Option<Upload>, error: ApiError) -> ApiError {
    if let Some(upload) = upload {
        upload.abandon().await;
    }
    error
}

/// Streams a raw body into `upload`, counting it in `body`'s place among the bodies in
/// flight as it arrives.
pub(crate) async fn raw(
    mut payload: web::Payload,
    body: &mut StreamedBody,
    mut upload: Upload,
) -> Result<ObjectView, ApiError> {
    while let Some(piece) = payload.next().await {
        match piece {
            Ok(bytes) => {
                if let Err(busy) = body.arrived(bytes.len()) {
                    upload.abandon().await;
                    return Err(busy);
                }
                upload.write(bytes).await?;
            }
            Err(e) => {
                upload.abandon().await;
                return Err(ApiError::new(
                    ErrorCode::InvalidRequest,
                    format!("the body did not arrive whole: {e}"),
                ));
            }
        }
    }
    Ok(upload.finish().await?)
}
