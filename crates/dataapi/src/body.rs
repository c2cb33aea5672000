//! The request body by its `Content-Type`, as PostgREST reads it: JSON (also when the header
//! is missing), CSV (a header line and rows, made a JSON array of objects whose values are
//! text, `NULL` being null), and for a function's one unnamed argument the raw bytes of
//! `text/plain`, `text/xml` and `application/octet-stream`.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::RestRequest;
use crate::error::RestError;

/// The body's media type, parameters dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyType {
    Json,
    Csv,
    Text,
    Xml,
    Octet,
}

impl BodyType {
    /// The types a function's one unnamed argument may have to take this body whole.
    pub fn raw_arguments(self) -> &'static [&'static str] {
        match self {
            BodyType::Json => &["json", "jsonb"],
            BodyType::Csv => &[],
            BodyType::Text => &["text"],
            BodyType::Xml => &["xml"],
            BodyType::Octet => &["bytea"],
        }
    }

    /// Whether the body can only be a function's one unnamed argument.
    pub fn raw_only(self) -> bool {
        matches!(self, BodyType::Text | BodyType::Xml | BodyType::Octet)
    }

    /// How PostgREST's messages name the unnamed argument this body would be.
    pub fn label(self) -> &'static str {
        match self {
            BodyType::Json | BodyType::Csv => "json/jsonb",
            BodyType::Text => "text",
            BodyType::Xml => "xml",
            BodyType::Octet => "bytea",
        }
    }
}

/// # Errors
/// 400 PGRST102 "Content-Type not acceptable: …" for any other type.
pub(crate) fn body_type(content_type: Option<&str>) -> Result<BodyType, RestError> {
    let mime = content_type
        .and_then(|c| c.split(';').next())
        .map(|c| c.trim().to_ascii_lowercase())
        .unwrap_or_default();
    match mime.as_str() {
        "" | "application/json" => Ok(BodyType::Json),
        "text/csv" => Ok(BodyType::Csv),
        "text/plain" => Ok(BodyType::Text),
        "text/xml" => Ok(BodyType::Xml),
        "application/octet-stream" => Ok(BodyType::Octet),
        _ => Err(not_acceptable(&mime)),
    }
}

fn not_acceptable(mime: &str) -> RestError {
    RestError::invalid_body(&format!("Content-Type not acceptable: {mime}"))
}

/// The body of a table's write or a function's call as JSON text and value; an empty body
/// is `empty`.
///
/// # Errors
/// 400 PGRST102 for a type other than JSON and CSV, invalid UTF-8, invalid JSON, or CSV
/// whose lines do not all have the header's number of fields.
pub(crate) fn json_body<'a>(
    req: &RestRequest<'a>,
    empty: &'static str,
) -> Result<(Cow<'a, str>, Value), RestError> {
    let kind = body_type(req.content_type)?;
    let text = std::str::from_utf8(req.body)
        .map_err(|_| RestError::invalid_body("Empty or invalid json"))?;
    match kind {
        BodyType::Json => {
            let text = if text.trim().is_empty() {
                Cow::Borrowed(empty)
            } else {
                Cow::Borrowed(text)
            };
            let value = serde_json::from_str(&text)
                .map_err(|_| RestError::invalid_body("Empty or invalid json"))?;
            Ok((text, value))
        }
        BodyType::Csv => {
            let value = csv_to_json(text)?;
            Ok((Cow::Owned(value.to_string()), value))
        }
        _ => Err(not_acceptable(
            req.content_type
                .and_then(|c| c.split(';').next())
                .unwrap_or("")
                .trim(),
        )),
    }
}

/// CSV as PostgREST takes it for a write: the first line names the fields, each further
/// line is an object of those fields, every value text except `NULL`, which is null.
///
/// # Errors
/// 400 PGRST102 for a quote left open or a line with another number of fields.
pub(crate) fn csv_to_json(text: &str) -> Result<Value, RestError> {
    let mut lines = csv_records(text)?.into_iter();
    let Some(header) = lines.next() else {
        return Ok(Value::Array(Vec::new()));
    };
    let mut rows = Vec::new();
    for line in lines {
        if line.len() != header.len() {
            return Err(RestError::invalid_body(
                "All lines must have same number of fields",
            ));
        }
        let object: Map<String, Value> = header
            .iter()
            .cloned()
            .zip(line.into_iter().map(|v| {
                if v == "NULL" {
                    Value::Null
                } else {
                    Value::String(v)
                }
            }))
            .collect();
        rows.push(Value::Object(object));
    }
    Ok(Value::Array(rows))
}

/// RFC 4180 records: fields split by commas, lines by LF or CRLF, a quoted field taking
/// commas, line breaks and `""` for a quote. A final line break ends no further record.
fn csv_records(text: &str) -> Result<Vec<Vec<String>>, RestError> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut at_line_start = true;
    while let Some(c) = chars.next() {
        match c {
            '"' if field.is_empty() => loop {
                match chars.next() {
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    Some('"') => break,
                    Some(other) => field.push(other),
                    None => {
                        return Err(RestError::invalid_body(
                            "Invalid CSV: a quoted field is not closed",
                        ));
                    }
                }
            },
            ',' => record.push(std::mem::take(&mut field)),
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
                at_line_start = true;
                continue;
            }
            other => field.push(other),
        }
        at_line_start = false;
    }
    if !at_line_start {
        record.push(field);
        records.push(record);
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn csv_becomes_objects_of_text_with_null_for_null() {
        let v = csv_to_json("name,qty\r\n\"a, \"\"b\"\"\",3\nNULL,\n").unwrap();
        assert_eq!(
            v,
            json!([{"name": "a, \"b\"", "qty": "3"}, {"name": null, "qty": ""}])
        );
        assert_eq!(csv_to_json("a,b").unwrap(), json!([]));
        assert_eq!(
            csv_to_json("a\n\"line\nbreak\"").unwrap(),
            json!([{"a": "line\nbreak"}])
        );
        for bad in ["a,b\n1\n", "a\n\"open\n"] {
            let e = csv_to_json(bad).unwrap_err();
            assert_eq!((e.status, e.code.as_str()), (400, "PGRST102"), "{bad}");
        }
    }

    #[test]
    fn body_types_are_read_without_their_parameters() {
        assert_eq!(body_type(None).unwrap(), BodyType::Json);
        assert_eq!(
            body_type(Some("text/csv; charset=utf-8")).unwrap(),
            BodyType::Csv
        );
        assert_eq!(
            body_type(Some("Application/Octet-Stream")).unwrap(),
            BodyType::Octet
        );
        let e = body_type(Some("application/x-www-form-urlencoded")).unwrap_err();
        assert_eq!(
            e.message,
            "Content-Type not acceptable: application/x-www-form-urlencoded"
        );
    }
}
