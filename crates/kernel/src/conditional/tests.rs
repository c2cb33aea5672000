use super::*;

const TAG: &str = "abc";
const GZ: &str = "abc-gz";
/// 2024-01-01T00:00:00Z
const MODIFIED: i64 = 1_704_067_200;

fn validators() -> Validators<'static> {
    Validators {
        etag: TAG,
        same_content: &[GZ],
        last_modified: Some(MODIFIED),
    }
}

fn get(conditions: Conditions<'_>) -> Outcome {
    evaluate(&conditions, &validators(), Method::Get, Some(1000))
}

fn range(value: &str) -> Outcome {
    get(Conditions {
        range: Some(value),
        ..Conditions::default()
    })
}

#[test]
fn dates_read_and_write_as_http_dates() {
    assert_eq!(http_date(MODIFIED), "Mon, 01 Jan 2024 00:00:00 GMT");
    assert_eq!(
        parse_http_date("Mon, 01 Jan 2024 00:00:00 GMT"),
        Some(MODIFIED)
    );
    assert_eq!(
        parse_http_date("Monday, 01-Jan-24 00:00:00 GMT"),
        Some(MODIFIED)
    );
    assert_eq!(
        parse_http_date("Mon, 01 Jan 2024 00:00:00 GMT, Tue, 02 Jan 2024 00:00:00 GMT"),
        None
    );
    assert_eq!(parse_http_date("yesterday"), None);
}

#[test]
fn single_byte_ranges_are_served_and_others_give_the_whole() {
    assert_eq!(range("bytes=0-99"), Outcome::Partial { start: 0, end: 99 });
    assert_eq!(
        range("BYTES=10-"),
        Outcome::Partial {
            start: 10,
            end: 999
        }
    );
    assert_eq!(
        range("bytes=10-"),
        Outcome::Partial {
            start: 10,
            end: 999
        }
    );
    assert_eq!(
        range("bytes=990-5000"),
        Outcome::Partial {
            start: 990,
            end: 999
        }
    );
    assert_eq!(
        range("bytes=-100"),
        Outcome::Partial {
            start: 900,
            end: 999
        }
    );
    assert_eq!(
        range("bytes=-5000"),
        Outcome::Partial { start: 0, end: 999 }
    );
    assert_eq!(
        range("bytes=999-999"),
        Outcome::Partial {
            start: 999,
            end: 999
        }
    );
    assert_eq!(range("bytes=1000-"), Outcome::Unsatisfiable);
    assert_eq!(range("bytes=5000-6000"), Outcome::Unsatisfiable);
    assert_eq!(range("bytes=-0"), Outcome::Unsatisfiable);
    assert_eq!(
        range("bytes=99999999999999999999999-"),
        Outcome::Unsatisfiable
    );
    for ignored in [
        "bytes=0-9,100-109",
        "bytes=5-1",
        "items=0-9",
        "bytes=a-b",
        "bytes=+1-2",
        "bytes",
        "bytes=-",
    ] {
        assert_eq!(range(ignored), Outcome::Full, "{ignored}");
    }
    // Not for HEAD, not where ranges are not served, not of an empty representation.
    let only_range = Conditions {
        range: Some("bytes=0-0"),
        ..Conditions::default()
    };
    assert_eq!(
        evaluate(&only_range, &validators(), Method::Head, Some(1000)),
        Outcome::Full
    );
    assert_eq!(
        evaluate(&only_range, &validators(), Method::Get, None),
        Outcome::Full
    );
    assert_eq!(
        evaluate(&only_range, &validators(), Method::Get, Some(0)),
        Outcome::Full
    );
}

#[test]
fn if_range_takes_only_the_strong_tag_of_the_selected_representation_or_its_date() {
    let with = |if_range| {
        get(Conditions {
            range: Some("bytes=0-9"),
            if_range: Some(if_range),
            ..Conditions::default()
        })
    };
    let partial = Outcome::Partial { start: 0, end: 9 };
    assert_eq!(with("\"abc\""), partial);
    assert_eq!(with("Mon, 01 Jan 2024 00:00:00 GMT"), partial);
    for whole in [
        "\"nope\"",
        "W/\"abc\"",
        "\"abc-gz\"",
        "Mon, 01 Jan 2024 00:00:01 GMT",
        "Sun, 31 Dec 2023 23:59:59 GMT",
        "junk",
    ] {
        assert_eq!(with(whole), Outcome::Full, "{whole}");
    }
}

#[test]
fn if_match_is_strong_and_if_unmodified_since_compares_the_date() {
    let if_match = |v| {
        get(Conditions {
            if_match: Some(v),
            ..Conditions::default()
        })
    };
    assert_eq!(if_match("\"abc\""), Outcome::Full);
    assert_eq!(if_match("\"x\", \"abc-gz\""), Outcome::Full);
    assert_eq!(if_match("*"), Outcome::Full);
    assert_eq!(if_match("\"nope\""), Outcome::PreconditionFailed);
    assert_eq!(if_match("W/\"abc\""), Outcome::PreconditionFailed);
    assert_eq!(if_match("abc"), Outcome::PreconditionFailed);

    let ius = |v| {
        get(Conditions {
            if_unmodified_since: Some(v),
            ..Conditions::default()
        })
    };
    assert_eq!(ius("Mon, 01 Jan 2024 00:00:00 GMT"), Outcome::Full);
    assert_eq!(ius("Sat, 01 Jan 2050 00:00:00 GMT"), Outcome::Full);
    assert_eq!(
        ius("Mon, 01 Jan 2001 00:00:00 GMT"),
        Outcome::PreconditionFailed
    );
    assert_eq!(ius("not a date"), Outcome::Full);
    // If-Match present: If-Unmodified-Since is ignored.
    assert_eq!(
        get(Conditions {
            if_match: Some("\"abc\""),
            if_unmodified_since: Some("Mon, 01 Jan 2001 00:00:00 GMT"),
            ..Conditions::default()
        }),
        Outcome::Full
    );
    // No modification date: the date preconditions are ignored.
    let undated = Validators {
        last_modified: None,
        ..validators()
    };
    let old = Conditions {
        if_unmodified_since: Some("Mon, 01 Jan 2001 00:00:00 GMT"),
        ..Conditions::default()
    };
    assert_eq!(
        evaluate(&old, &undated, Method::Get, Some(10)),
        Outcome::Full
    );
}

#[test]
fn if_none_match_is_weak_and_wins_over_if_modified_since() {
    let inm = |v| {
        get(Conditions {
            if_none_match: Some(v),
            ..Conditions::default()
        })
    };
    for matching in ["\"abc\"", "W/\"abc\"", "\"zzz\", \"abc-gz\"", "*"] {
        assert_eq!(inm(matching), Outcome::NotModified, "{matching}");
    }
    assert_eq!(inm("\"zzz\""), Outcome::Full);
    assert_eq!(inm("\"a,b\", \"abc\""), Outcome::NotModified);
    let ims = |v| {
        get(Conditions {
            if_modified_since: Some(v),
            ..Conditions::default()
        })
    };
    assert_eq!(ims("Mon, 01 Jan 2024 00:00:00 GMT"), Outcome::NotModified);
    assert_eq!(ims("Sun, 31 Dec 2023 00:00:00 GMT"), Outcome::Full);
    // If-None-Match present: If-Modified-Since is ignored.
    assert_eq!(
        get(Conditions {
            if_none_match: Some("\"zzz\""),
            if_modified_since: Some("Mon, 01 Jan 2024 00:00:00 GMT"),
            ..Conditions::default()
        }),
        Outcome::Full
    );
    // A failed If-Match wins over a matching If-None-Match; other methods get 412.
    assert_eq!(
        get(Conditions {
            if_match: Some("\"nope\""),
            if_none_match: Some("\"abc\""),
            ..Conditions::default()
        }),
        Outcome::PreconditionFailed
    );
    let matching = Conditions {
        if_none_match: Some("\"abc\""),
        ..Conditions::default()
    };
    assert_eq!(
        evaluate(&matching, &validators(), Method::Other, None),
        Outcome::PreconditionFailed
    );
    // A 304 wins over a range.
    assert_eq!(
        get(Conditions {
            if_none_match: Some("\"abc\""),
            range: Some("bytes=0-1"),
            ..Conditions::default()
        }),
        Outcome::NotModified
    );
}
