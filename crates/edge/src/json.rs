//! Typed JSON request bodies: [`parse`] turns a [`crate::body::Body`] straight into
//! its typed request so each kind of mistake gets the error code the spec gives it:
//! unparseable JSON is always `invalid_json`; a missing or mistyped field gets the code of the
//! route (`invalid_body`, `invalid_project`, …) with the field named.

use std::cell::RefCell;
use std::ops::Range;

use bytes::Bytes;
use quire_kernel::ErrorCode;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::error::ApiError;
use crate::skeleton::{Holes, Place, Skeleton};

/// A request body type: parsed from JSON by serde and documented by utoipa, written once.
/// `CODE` is the route's error for a missing or mistyped field (the spec gives `invalid_body`
/// on platform routes, `invalid_project` on project create and patch, `invalid_request` on
/// page routes).
pub trait RequestBody: DeserializeOwned {
    const CODE: ErrorCode = ErrorCode::InvalidBody;

    /// The error for a field that is missing or of the wrong type; `message` names it.
    fn refuse(field: &str, message: String) -> ApiError {
        let _ = field;
        ApiError::new(Self::CODE, message)
    }
}

/// Parses a JSON body straight into `T` (no intermediate `Value`). Handlers call it once
/// they have checked the credential and the path: an extractor would race the
/// authentication extractor (actix polls them together), and a bad body must never answer
/// before `401`, `403 not_activated` or a scope check.
///
/// # Errors
/// Bytes that are not JSON are `invalid_json`; JSON that is not an object is `invalid_body`; a
/// missing, mistyped or repeated field is `T`'s error, naming the field (`files[2].content`,
/// ``duplicate field `access` ``).
pub fn parse<T: RequestBody>(bytes: &[u8]) -> Result<T, ApiError> {
    let not_json = |e: &serde_json::Error| {
        ApiError::new(
            ErrorCode::InvalidJson,
            format!("request body is not valid JSON: {e}"),
        )
    };
    // Derived structs also take JSON arrays (as tuples); the contract wants objects only.
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(
            match serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
                Ok(_) => {
                    ApiError::new(ErrorCode::InvalidBody, "request body must be a JSON object")
                }
                Err(e) => not_json(&e),
            },
        );
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if !inner.is_data() {
            return not_json(&inner);
        }
        // serde reports a missing field at its parent, and says which in the message.
        let message = without_position(&inner.to_string());
        let missing = message
            .strip_prefix("missing field `")
            .and_then(|rest| rest.split('`').next());
        match (path.as_str(), missing) {
            (".", None) if message.starts_with("invalid type") => {
                ApiError::new(ErrorCode::InvalidBody, "request body must be a JSON object")
            }
            // Any other error of the object as a whole is about its keys (``duplicate field
            // `access` ``): serde's words say which.
            (".", None) => T::refuse(".", message),
            (".", Some(field)) => T::refuse(field, format!("{field} is required")),
            (_, Some(field)) => {
                let field = format!("{path}.{field}");
                let message = format!("{field} is required");
                T::refuse(&field, message)
            }
            (field, None) => T::refuse(field, format!("{field}: {message}")),
        }
    })?;
    de.end().map_err(|e| not_json(&e))?;
    Ok(value)
}

/// [`parse`], with `body`'s place lent to every [`SharedText`] field so that text needing no
/// unescaping is recorded as where it lies in the body rather than copied: a publish then
/// holds its files' content once, in the request, instead of twice. A body with long strings
/// is parsed as its [`Skeleton`], those strings cut out; when one of them would land anywhere
/// but a [`SharedText`] (or the skeleton is refused), the whole body is parsed instead, so
/// every value and every error is what parsing the body gives.
///
/// # Errors
/// As [`parse`].
pub fn parse_sharing<T: RequestBody>(body: &[u8]) -> Result<T, ApiError> {
    if let Some(value) = parse_skeleton(body) {
        return Ok(value);
    }
    lent(body, body, Holes::default(), || parse(body)).0
}

/// `body` parsed as its [`Skeleton`], when it has one, it parses, and each of its holes
/// landed in a [`SharedText`], once.
fn parse_skeleton<T: RequestBody>(body: &[u8]) -> Option<T> {
    let (text, holes) = Skeleton::of(body)?.into_parts();
    let expected = holes.len();
    match lent(body, &text, holes, || parse::<T>(&text)) {
        (Ok(value), Some(filled)) if filled == expected => Some(value),
        _ => None,
    }
}

/// Runs `parse` with `text` (`body` itself, or its skeleton with `holes`) lent to the
/// [`SharedText`] fields it meets; returns its result and how many holes they took, or
/// `None` if one was taken twice.
fn lent<R>(
    body: &[u8],
    text: &[u8],
    holes: Holes,
    parse: impl FnOnce() -> R,
) -> (R, Option<usize>) {
    /// Ends the loan however parsing ends.
    struct Loan;
    impl Drop for Loan {
        fn drop(&mut self) {
            LENT.with(|lent| lent.borrow_mut().take());
        }
    }
    let place = text.as_ptr_range();
    LENT.with(|lent| {
        *lent.borrow_mut() = Some(Lent {
            text: place.start as usize..place.end as usize,
            body_len: body.len(),
            taken: vec![false; holes.len()],
            holes,
            spoiled: false,
        });
    });
    let loan = Loan;
    let result = parse();
    let filled = LENT.with(|lent| {
        let lent = lent.borrow();
        let lent = lent.as_ref().filter(|l| !l.spoiled)?;
        Some(lent.taken.iter().filter(|t| **t).count())
    });
    drop(loan);
    (result, filled)
}

/// What [`parse_sharing`] lends the [`SharedText`] fields on this thread: where the parsed
/// text lies in memory, and the holes of a skeleton, with which of them were taken.
struct Lent {
    text: Range<usize>,
    body_len: usize,
    holes: Holes,
    taken: Vec<bool>,
    /// A hole was taken twice (by a type that replays what it parsed): the skeleton's
    /// result cannot be trusted.
    spoiled: bool,
}

thread_local! {
    /// The loan of [`parse_sharing`] on this thread, if any. Parsing is synchronous, so the
    /// loan never spans an await.
    static LENT: RefCell<Option<Lent>> = const { RefCell::new(None) };
}

impl Lent {
    /// Where `text`, borrowed from the lent text, lies in the body; `None` if it was not
    /// borrowed from there, or is a hole already taken.
    fn place_of(&mut self, text: &str) -> Option<Range<usize>> {
        let place = text.as_bytes().as_ptr_range();
        let (start, end) = (place.start as usize, place.end as usize);
        if start < self.text.start || end > self.text.end {
            return None;
        }
        let in_text = start - self.text.start..end - self.text.start;
        let in_body = match self.holes.place(in_text) {
            Place::Body(range) => range,
            Place::Hole(n, range) => {
                if std::mem::replace(&mut self.taken[n], true) {
                    self.spoiled = true;
                    return None;
                }
                range
            }
        };
        (in_body.end <= self.body_len).then_some(in_body)
    }
}

/// A JSON string held as bytes: where it lies in the request body when it was sent without
/// escapes and the body was lent by [`parse_sharing`], a copy otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SharedText {
    /// The string's bytes are `body[range]`.
    InBody(Range<usize>),
    Copied(Bytes),
}

impl SharedText {
    /// The text's bytes, out of `body` (the body it was parsed from, or that body changed
    /// in place without moving this text) when it lies there.
    #[must_use]
    pub fn bytes_in(self, body: &Bytes) -> Bytes {
        match self {
            SharedText::InBody(range) => body.slice(range),
            SharedText::Copied(bytes) => bytes,
        }
    }
}

impl<'de> Deserialize<'de> for SharedText {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        de.deserialize_str(SharedTextVisitor)
    }
}

struct SharedTextVisitor;

impl<'de> serde::de::Visitor<'de> for SharedTextVisitor {
    type Value = SharedText;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, text: &'de str) -> Result<SharedText, E> {
        let shared = LENT.with(|lent| lent.borrow_mut().as_mut()?.place_of(text));
        Ok(shared.map_or_else(
            || SharedText::Copied(Bytes::copy_from_slice(text.as_bytes())),
            SharedText::InBody,
        ))
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<SharedText, E> {
        Ok(SharedText::Copied(Bytes::copy_from_slice(text.as_bytes())))
    }

    fn visit_string<E: serde::de::Error>(self, text: String) -> Result<SharedText, E> {
        Ok(SharedText::Copied(Bytes::from(text)))
    }
}

/// serde_json's message without its " at line 1 column 9" suffix.
fn without_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(cut) => message[..cut].to_owned(),
        None => message.to_owned(),
    }
}

/// `Option<Option<T>>` for a patch: absent is `None`, `null` is `Some(None)`.
///
/// # Errors
/// When the value is neither `null` nor a `T`.
pub fn nullable<'de, D, T>(de: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    Option::<T>::deserialize(de).map(Some)
}

/// Whether a field was present at all, whatever its value.
///
/// # Errors
/// Never: any JSON value is accepted.
pub fn present<'de, D: serde::Deserializer<'de>>(de: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(de).map(|_| true)
}

#[cfg(test)]
mod tests;

/// `maxViews` (and other counts) as sent: an integer, or (as in JSON Schema) a number with no fraction, such as
/// `5.0`; the domain judges its range.
#[derive(Debug, Clone, Copy)]
pub struct MaxViews(i128);

impl MaxViews {
    #[must_use]
    pub fn get(self) -> i128 {
        self.0
    }
}

impl<'de> serde::Deserialize<'de> for MaxViews {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        let n = <serde_json::Number as serde::Deserialize>::deserialize(de)?;
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
            .or_else(|| {
                // `as` saturates past i128's range; the domain refuses anything past 2^63.
                n.as_f64()
                    .filter(|x| x.fract() == 0.0 && x.is_finite())
                    .map(|x| x as i128)
            })
            .map(MaxViews)
            .ok_or_else(|| serde::de::Error::custom("must be a positive integer"))
    }
}
