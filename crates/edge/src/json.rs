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
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)] // the fields are read through Debug and the assertions
    struct Sample {
        s: String,
        #[serde(default)]
        z: Option<String>,
        #[serde(default, deserialize_with = "nullable")]
        n: Option<Option<String>>,
        #[serde(default)]
        items: Vec<Item>,
    }
    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Item {
        path: String,
    }
    impl RequestBody for Sample {
        const CODE: ErrorCode = ErrorCode::InvalidProject;
    }

    fn refused(body: &str) -> (String, String) {
        let e = parse::<Sample>(body.as_bytes()).unwrap_err();
        (e.code().to_owned(), e.message().to_owned())
    }

    #[derive(Debug, serde::Deserialize)]
    struct Shared {
        texts: Vec<SharedText>,
    }
    impl RequestBody for Shared {}

    #[test]
    fn text_without_escapes_shares_the_lent_body() {
        let body = Bytes::from_static(br#"{"texts":["plain text","line\nbreak","two"]}"#);
        let shared = parse_sharing::<Shared>(&body).unwrap();
        assert_eq!(shared.texts[0], SharedText::InBody(11..21));
        assert_eq!(shared.texts[2], SharedText::InBody(38..41));
        let plain = shared.texts[0].clone().bytes_in(&body);
        assert_eq!(plain, "plain text");
        let inside = body.as_ptr_range();
        assert!(
            inside.contains(&plain.as_ptr()),
            "plain text is a slice of the body"
        );
        let escaped = shared.texts[1].clone().bytes_in(&body);
        assert_eq!(escaped, "line\nbreak");
        assert!(
            !inside.contains(&escaped.as_ptr()),
            "unescaped text is a copy"
        );

        // Without a loan (or after one ended), text is copied.
        let copied = parse::<Shared>(&body).unwrap();
        assert_eq!(
            copied.texts[0],
            SharedText::Copied(Bytes::from_static(b"plain text"))
        );
        assert!(LENT.with(|lent| lent.borrow().is_none()));
        assert_eq!(
            parse_sharing::<Shared>(b"{").unwrap_err().code(),
            "invalid_json"
        );
        assert!(
            LENT.with(|lent| lent.borrow().is_none()),
            "a failed parse ends the loan"
        );
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Bundle {
        title: String,
        files: Vec<Sent>,
    }
    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Sent {
        path: String,
        content: SharedText,
    }
    impl RequestBody for Bundle {
        const CODE: ErrorCode = ErrorCode::InvalidRequest;
    }

    /// What parsing the whole body, with no skeleton, gives.
    fn whole(body: &str) -> Result<Bundle, (String, String)> {
        let bytes = body.as_bytes();
        lent(bytes, bytes, Holes::default(), || parse::<Bundle>(bytes))
            .0
            .map_err(|e| (e.code().to_owned(), e.message().to_owned()))
    }

    fn sharing(body: &str) -> Result<Bundle, (String, String)> {
        parse_sharing::<Bundle>(body.as_bytes())
            .map_err(|e| (e.code().to_owned(), e.message().to_owned()))
    }

    fn base64_like(n: usize) -> String {
        "QUJD".repeat(n / 4 + 1)
    }

    #[test]
    fn long_contents_are_parsed_as_holes_and_read_back_from_the_body() {
        let (one, two) = (base64_like(5_000), base64_like(70_000));
        let body = format!(
            r#"{{"title":"T","files":[{{"path":"a","content":"{one}"}},{{"path":"b\u0041","content":"x\/y"}},{{"content":"{two}","path":"c"}}]}}"#
        );
        let bundle = parse_skeleton::<Bundle>(body.as_bytes()).expect("parsed as its skeleton");
        assert_eq!(Ok(&bundle), whole(&body).as_ref());
        assert_eq!(bundle.files[1].path, "bA");
        let bytes = Bytes::from(body);
        let texts: Vec<Bytes> = bundle
            .files
            .into_iter()
            .map(|f| f.content.bytes_in(&bytes))
            .collect();
        assert_eq!(texts, [one.as_str(), "x/y", two.as_str()]);
        assert!(LENT.with(|lent| lent.borrow().is_none()));
    }

    #[test]
    fn a_long_string_that_is_not_a_content_is_parsed_from_the_whole_body() {
        let long = base64_like(5_000);
        let title = format!(r#"{{"title":"{long}","files":[{{"path":"a","content":"{long}"}}]}}"#);
        assert!(parse_skeleton::<Bundle>(title.as_bytes()).is_none());
        assert_eq!(sharing(&title).unwrap().title, long);
        let unknown =
            format!(r#"{{"title":"T","extra":"{long}","files":[{{"path":"a","content":"x"}}]}}"#);
        assert!(parse_skeleton::<Bundle>(unknown.as_bytes()).is_none());
        assert_eq!(sharing(&unknown), whole(&unknown));
        assert!(sharing(&unknown).is_ok());
    }

    /// An untagged enum replays what it parsed for each variant it tries, so a hole can be
    /// met twice: the skeleton's result is then dropped and the whole body parsed.
    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(untagged)]
    enum Tried {
        Sized { content: SharedText, size: u64 },
        Plain { content: SharedText },
    }
    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Replayed {
        item: Tried,
    }
    impl RequestBody for Replayed {}

    #[test]
    fn a_hole_met_twice_sends_the_whole_body_to_serde() {
        let long = base64_like(5_000);
        let body = format!(r#"{{"item":{{"content":"{long}"}}}}"#);
        assert!(Skeleton::of(body.as_bytes()).is_some());
        assert!(parse_skeleton::<Replayed>(body.as_bytes()).is_none());
        let Tried::Plain { content } = parse_sharing::<Replayed>(body.as_bytes()).unwrap().item
        else {
            panic!("the second variant fits");
        };
        let at = body.find('Q').unwrap();
        assert_eq!(content, SharedText::InBody(at..at + long.len()));
    }

    #[test]
    fn a_body_with_long_strings_is_refused_as_the_whole_body_would_be() {
        let long = base64_like(5_000);
        let file = format!(r#"{{"path":"a","content":"{long}"}}"#);
        let refused = [
            format!(r#"{{"title":"T","files":[{file}]}} trailing"#),
            format!(r#"{{"files":[{file}]}}"#),
            format!(r#"{{"title":"T","files":[{file},{{"path":1,"content":"{long}"}}]}}"#),
            format!(
                r#"{{"title":"T","files":[{{"path":"a","content":"{long}{}"}}]}}"#,
                '\u{1}'
            ),
            format!(r#"{{"title":"T","files":[{file}],"title":"again"}}"#),
            format!(r#"{{"title":"T","files":[{{"path":"a","content":"{long}"#),
        ];
        for body in refused {
            let expected = whole(&body).unwrap_err();
            assert_eq!(sharing(&body).unwrap_err(), expected, "{}", expected.1);
        }
    }

    #[test]
    fn unparseable_is_invalid_json_and_non_objects_are_invalid_body() {
        assert_eq!(refused("{").0, "invalid_json");
        assert_eq!(refused("").0, "invalid_json");
        assert_eq!(refused(r#"{"s":"x"} trailing"#).0, "invalid_json");
        assert_eq!(refused("[1]").0, "invalid_body");
        assert_eq!(refused("7").0, "invalid_body");
    }

    #[test]
    fn fields_use_the_route_code_and_are_named() {
        let (code, message) = refused(r#"{"z":null}"#);
        assert_eq!(
            (code.as_str(), message.as_str()),
            ("invalid_project", "s is required")
        );
        let (code, message) = refused(r#"{"s":1}"#);
        assert_eq!(code, "invalid_project");
        assert!(message.starts_with("s: invalid type: integer"), "{message}");
        let (_, message) = refused(r#"{"s":"x","items":[{"path":"a"},{"path":2}]}"#);
        assert!(message.starts_with("items[1].path: "), "{message}");
        let (_, message) = refused(r#"{"s":"x","items":[{}]}"#);
        assert_eq!(message, "items[0].path is required");

        // A key sent twice is named, with the route's code, at the top as inside.
        assert_eq!(
            refused(r#"{"s":"a","z":"b","s":"c"}"#),
            ("invalid_project".into(), "duplicate field `s`".into())
        );
        assert_eq!(
            refused(r#"{"s":"a","items":[{"path":"a","path":"b"}]}"#),
            (
                "invalid_project".into(),
                "items[0]: duplicate field `path`".into()
            )
        );

        let ok = parse::<Sample>(br#"{"s":"x","z":null,"n":null}"#).unwrap();
        assert_eq!((ok.z, ok.n), (None, Some(None)));
        let ok = parse::<Sample>(br#"{"s":"x"}"#).unwrap();
        assert_eq!(ok.n, None);
    }
}
