//! What every list route shares: the opt-in `limit` and `cursor` query parameters, and a
//! whole list's JSON written a chunk at a time.
//!
//! Without either parameter a list answers as the spec has it, whole and without
//! `nextCursor`. With one, it answers at most `limit` items (100 when only a cursor is
//! given) and `nextCursor` when more remain; a limit outside 1-1000 is `400 invalid_limit`,
//! a cursor this list did not give `400 invalid_cursor` (`quire_kernel::paging`).

use actix_web::http::header::ContentType;
use actix_web::{HttpRequest, HttpResponse, Responder, body::BoxBody};
use quire_edge::ApiError;
use quire_kernel::{CursorKey, InfraError, Paging};
use serde::{Deserialize, Serialize};

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

/// A 200 whose JSON object was written ahead, a chunk at a time ([`ListWriter`]).
#[derive(Debug)]
pub struct WrittenJson(Vec<u8>);

impl Responder for WrittenJson {
    type Body = BoxBody;

    fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        HttpResponse::Ok()
            .content_type(ContentType::json())
            .body(self.0)
    }
}

/// A JSON object whose first field is an array, written item by item into the answer's
/// bytes: a whole list costs the answer plus the chunk being written, never the list's
/// items all at once. The bytes are what serde would write for the same object.
pub struct ListWriter {
    out: Vec<u8>,
    empty: bool,
}

fn infra(e: &serde_json::Error) -> ApiError {
    ApiError::from(InfraError::new(format!("a list did not serialize: {e}")))
}

impl ListWriter {
    /// `{"<field>":[`.
    pub fn new(field: &str) -> Self {
        let mut out = Vec::with_capacity(64 * 1024);
        out.push(b'{');
        // A field name is one of this crate's literals: no escaping to do.
        out.push(b'"');
        out.extend_from_slice(field.as_bytes());
        out.extend_from_slice(b"\":[");
        Self { out, empty: true }
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
        serde_json::to_writer(&mut self.out, item).map_err(|e| infra(&e))
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
        Ok(WrittenJson(self.out))
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
            let whole = serde_json::to_vec(&Whole {
                pages: items[..n].to_vec(),
                project: "mark\"eting".into(),
            })
            .unwrap();
            assert_eq!(written.0, whole);
        }
    }
}
