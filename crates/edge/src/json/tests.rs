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
    let Tried::Plain { content } = parse_sharing::<Replayed>(body.as_bytes()).unwrap().item else {
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
