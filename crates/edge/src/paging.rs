//! What every list route shares: the opt-in `limit` and `cursor` query parameters, and a
//! whole list's JSON written a chunk at a time.
//!
//! Without either parameter a list answers as the spec has it, whole and without
//! `nextCursor`. With one, it answers at most `limit` items (100 when only a cursor is
//! given) and `nextCursor` when more remain; a limit outside 1-1000 is `400 invalid_limit`,
//! a cursor this list did not give `400 invalid_cursor` (`quire_kernel::paging`).

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use actix_web::body::{BodySize, BoxBody, MessageBody};
use actix_web::http::header::ContentType;
use actix_web::{HttpRequest, HttpResponse, Responder};
use bytes::Bytes;
use quire_kernel::{CursorKey, InfraError, Paging};
use serde::{Deserialize, Serialize};

use crate::ApiError;

/// `limit` and `cursor`, as the query string has them (read as text, so that a bad value is
/// this API's own `invalid_limit`, not the query parser's refusal).
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PagingQuery {
    /// Most items in the answer (1-1000). Given (or with `cursor`), the answer is one page
    /// of the list with `nextCursor` when more remain; neither given: the whole list.
    #[param(schema_with = crate::schema::limit)]
    limit: Option<String>,
    /// The `nextCursor` of the previous answer, to read the page after it.
    #[param(schema_with = crate::schema::cursor)]
    cursor: Option<String>,
}

impl PagingQuery {
    /// The paging asked for on the list `list`; `None` for the whole list.
    ///
    /// # Errors
    /// `400 invalid_limit`, `400 invalid_cursor`.
    pub fn paging<K: CursorKey>(&self, list: &str) -> Result<Option<Paging<K>>, ApiError> {
        Ok(Paging::from_query(
            list,
            self.limit.as_deref(),
            self.cursor.as_deref(),
        )?)
    }
}

/// Bytes of an answer are cut into pieces of about this size as they are written, so the
/// answer never grows by copying itself into a buffer twice its size.
const PIECE: usize = 256 * 1024;

/// A 200 whose JSON object was written ahead, a chunk at a time ([`ListWriter`]), and is
/// sent piece by piece with its `Content-Length`; each piece is freed once written out.
#[derive(Debug)]
pub struct WrittenJson {
    pieces: VecDeque<Bytes>,
    len: u64,
}

impl MessageBody for WrittenJson {
    type Error = std::convert::Infallible;

    fn size(&self) -> BodySize {
        BodySize::Sized(self.len)
    }

    fn poll_next(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        Poll::Ready(self.pieces.pop_front().map(Ok))
    }
}

impl Responder for WrittenJson {
    type Body = BoxBody;

    fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        HttpResponse::Ok()
            .content_type(ContentType::json())
            .body(self)
    }
}

/// A JSON object whose first field is an array, written item by item into the answer's
/// bytes: a whole list costs the answer plus the chunk being written, never the list's
/// items all at once. The bytes are what serde would write for the same object.
#[derive(Debug)]
pub struct ListWriter {
    pieces: VecDeque<Bytes>,
    len: u64,
    out: Vec<u8>,
    empty: bool,
}

fn infra(e: &serde_json::Error) -> ApiError {
    ApiError::from(InfraError::new(format!("a list did not serialize: {e}")))
}

impl ListWriter {
    /// `{"<field>":[`.
    pub fn new(field: &str) -> Self {
        let mut out = Vec::with_capacity(PIECE + PIECE / 4);
        out.push(b'{');
        // A field name is a literal of the route that lists: no escaping to do.
        out.push(b'"');
        out.extend_from_slice(field.as_bytes());
        out.extend_from_slice(b"\":[");
        Self {
            pieces: VecDeque::new(),
            len: 0,
            out,
            empty: true,
        }
    }

    /// Sets the written bytes aside as a piece once they pass [`PIECE`].
    fn cut(&mut self, at_least: usize) {
        if self.out.len() >= at_least {
            let full = std::mem::replace(&mut self.out, Vec::with_capacity(PIECE + PIECE / 4));
            self.len += full.len() as u64;
            self.pieces.push_back(Bytes::from(full));
        }
    }

    /// One more item of the array.
    ///
    /// # Errors
    /// A 500 if the item does not serialize (it always does: the DTOs are plain data).
    pub fn push<T: Serialize>(&mut self, item: &T) -> Result<(), ApiError> {
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        serde_json::to_writer(&mut self.out, item).map_err(|e| infra(&e))?;
        self.cut(PIECE);
        Ok(())
    }

    /// Closes the array, then writes the other fields in order and closes the object.
    ///
    /// # Errors
    /// As [`ListWriter::push`].
    pub fn finish(mut self, fields: &[(&str, &str)]) -> Result<WrittenJson, ApiError> {
        self.out.push(b']');
        for (name, value) in fields {
            self.out.extend_from_slice(b",\"");
            self.out.extend_from_slice(name.as_bytes());
            self.out.extend_from_slice(b"\":");
            serde_json::to_writer(&mut self.out, value).map_err(|e| infra(&e))?;
        }
        self.out.push(b'}');
        self.cut(0);
        Ok(WrittenJson {
            pieces: self.pieces,
            len: self.len,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Whole {
        pages: Vec<serde_json::Value>,
        project: String,
    }

    #[test]
    fn a_written_list_is_what_serde_writes_for_the_whole() {
        let items = [
            serde_json::json!({"a": 1, "b": "x\"y"}),
            serde_json::json!({"a": 2, "b": null}),
        ];
        for n in 0..=items.len() {
            let mut w = ListWriter::new("pages");
            for item in &items[..n] {
                w.push(item).unwrap();
            }
            let written = w.finish(&[("project", "mark\"eting")]).unwrap();
            let written: Vec<u8> = written.pieces.iter().flatten().copied().collect();
            let whole = serde_json::to_vec(&Whole {
                pages: items[..n].to_vec(),
                project: "mark\"eting".into(),
            })
            .unwrap();
            assert_eq!(written, whole);
        }
    }
}

#[cfg(test)]
mod pieces {
    use super::*;

    #[test]
    fn a_long_list_is_cut_into_pieces_that_add_up_to_its_length() {
        let mut w = ListWriter::new("pages");
        let item = serde_json::json!({"title": "x".repeat(1000)});
        for _ in 0..1000 {
            w.push(&item).unwrap();
        }
        let written = w.finish(&[("project", "p")]).unwrap();
        assert!(written.pieces.len() > 3, "{} pieces", written.pieces.len());
        let total: usize = written.pieces.iter().map(Bytes::len).sum();
        assert_eq!(written.len, total as u64);
        let bytes: Vec<u8> = written.pieces.iter().flatten().copied().collect();
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["pages"].as_array().unwrap().len(), 1000);
    }
}
