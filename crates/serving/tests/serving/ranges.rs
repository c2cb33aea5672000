//! Ranges and preconditions against the in-memory fakes: single ranges of the identity
//! bytes, `If-Range`, 412 and 416, and a guarded page answering its form before any of them.

use crate::common;

use quire_serving::{Answer, ByteRange, Conditions, Visit, Visitor};

use common::world;

/// A `GET` of `path` with `conditions`, and gzip accepted.
async fn conditional(w: &common::World, path: &str, conditions: Conditions<'_>) -> Answer {
    w.serving
        .visit(Visit {
            owner: None,
            path,
            query: "",
            head: false,
            visitor: Visitor::default(),
            conditions,
            accepts_gzip: true,
            asker: quire_serving::Asker::default(),
        })
        .await
        .unwrap()
}

#[tokio::test]
async fn single_ranges_of_the_identity_bytes_and_preconditions() {
    let w = world().await;
    w.publish("site", |_| {}).await;
    let index = "<h1>home</h1>\n".repeat(40);
    let Answer::File(whole) = w.get("/ann/site/").await else {
        panic!()
    };
    let etag = whole.etag.clone();
    let range = |value| Conditions {
        range: Some(value),
        ..Conditions::default()
    };

    // A range of a file with a gzip variant is of the identity bytes, whatever is accepted.
    for (value, start, end) in [
        ("bytes=0-9", 0, 9),
        ("bytes=550-", 550, 559),
        ("bytes=-5", 555, 559),
    ] {
        match conditional(&w, "/ann/site/", range(value)).await {
            Answer::File(f) => {
                assert!(!f.gzip && f.varies, "{value}");
                assert_eq!(f.etag, etag);
                assert_eq!(f.body, index.as_bytes()[start..=end], "{value}");
                assert_eq!(
                    f.range,
                    Some(ByteRange {
                        start: start as u64,
                        end: end as u64,
                        length: 560
                    })
                );
            }
            other => panic!("{value}: {other:?}"),
        }
    }
    assert!(matches!(
        conditional(&w, "/ann/site/", range("bytes=560-")).await,
        Answer::RangeNotSatisfiable { length: 560 }
    ));
    // Several ranges: the whole; a false If-Range: the whole (identity, since Range is there).
    for conditions in [
        range("bytes=0-1,5-6"),
        Conditions {
            if_range: Some("\"other\""),
            ..range("bytes=0-9")
        },
    ] {
        match conditional(&w, "/ann/site/", conditions).await {
            Answer::File(f) => assert!(f.range.is_none() && f.body.len() == 560, "{f:?}"),
            other => panic!("{other:?}"),
        }
    }
    let if_range: &'static str = Box::leak(etag.clone().into_boxed_str());
    assert!(matches!(
        conditional(&w, "/ann/site/", Conditions { if_range: Some(if_range), ..range("bytes=0-9") }).await,
        Answer::File(f) if f.range.is_some()
    ));

    // If-Match and If-Unmodified-Since: 412 when false.
    let pre = |if_match, ius| Conditions {
        if_match,
        if_unmodified_since: ius,
        ..Conditions::default()
    };
    assert!(matches!(
        conditional(&w, "/ann/site/", pre(Some("\"nope\""), None)).await,
        Answer::PreconditionFailed
    ));
    assert!(matches!(
        conditional(&w, "/ann/site/", pre(Some(if_range), None)).await,
        Answer::File(_)
    ));
    assert!(matches!(
        conditional(
            &w,
            "/ann/site/",
            pre(None, Some("Mon, 01 Jan 2001 00:00:00 GMT"))
        )
        .await,
        Answer::PreconditionFailed
    ));
    assert!(matches!(
        conditional(
            &w,
            "/ann/site/",
            pre(
                None,
                Some(Box::leak(whole.last_modified.to_string().into_boxed_str()))
            )
        )
        .await,
        Answer::File(_)
    ));
    // If-Modified-Since the page's change: 304.
    assert!(matches!(
        conditional(
            &w,
            "/ann/site/",
            Conditions {
                if_modified_since: Some(Box::leak(
                    whole.last_modified.to_string().into_boxed_str()
                )),
                ..Conditions::default()
            }
        )
        .await,
        Answer::NotModified { .. }
    ));
    // A file larger than the memory cache: the range is read from the bundle store alone.
    let big: String = (0..1_500_000_u32)
        .map(|i| char::from(b'a' + u8::try_from(i % 26).unwrap()))
        .collect();
    let big_file = common::file("big.txt", &big);
    w.publish("large", |r| r.files.push(big_file)).await;
    match conditional(&w, "/ann/large/big.txt", range("bytes=1000000-1000009")).await {
        Answer::File(f) => {
            assert_eq!(f.body, big.as_bytes()[1_000_000..=1_000_009]);
            assert_eq!(f.range.map(|r| r.length), Some(1_500_000));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        conditional(&w, "/ann/large/big.txt", range("bytes=1500000-")).await,
        Answer::RangeNotSatisfiable { length: 1_500_000 }
    ));

    // The page's own 404.html: no precondition or range applies.
    assert!(matches!(
        conditional(&w, "/ann/site/none", pre(Some("\"nope\""), None)).await,
        Answer::File(f) if !f.found
    ));
}

#[tokio::test]
async fn a_guarded_page_answers_its_form_before_any_range_or_precondition() {
    let w = world().await;
    w.publish("secret", |r| {
        r.policy.access = Some("password".into());
        r.policy.password = Some("open sesame please".into());
    })
    .await;
    for conditions in [
        Conditions {
            range: Some("bytes=100000-"),
            ..Conditions::default()
        },
        Conditions {
            if_match: Some("\"nope\""),
            ..Conditions::default()
        },
        Conditions {
            if_none_match: Some("*"),
            ..Conditions::default()
        },
    ] {
        assert!(
            matches!(
                conditional(&w, "/ann/secret/", conditions).await,
                Answer::Password(_)
            ),
            "{conditions:?}"
        );
    }
}
