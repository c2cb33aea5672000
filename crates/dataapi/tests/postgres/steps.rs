//! The requests, grouped by concern; each checks statuses, headers and bodies.

use quire_dataapi::RestRequest;
use serde_json::json;

use crate::{Db, json_of, names};

pub(crate) async fn reads(db: &Db) {
    let a = db
        .get("items", "select=name&qty=gte.7&order=qty.desc")
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(names(&a), ["Grape \"big\"", "banana", "a, b"]);
    assert_eq!(a.header("Content-Range"), Some("0-2/*"));

    let a = db
        .get("items", "select=name&name=in.(apple,%22a,+b%22)&order=id")
        .await;
    assert_eq!(names(&a), ["apple", "a, b"]);
    let a = db
        .get(
            "items",
            "select=name&name=not.in.(apple,banana)&qty=not.is.null&order=id",
        )
        .await;
    assert_eq!(names(&a), ["a, b", "Grape \"big\""]);
    let a = db.get("items", "select=name&qty=is.null").await;
    assert_eq!(names(&a), ["carrot"]);
    let a = db
        .get("items", "select=name&name=like.*an*&order=name")
        .await;
    assert_eq!(names(&a), ["banana"]);
    let a = db
        .get("items", "select=name&name=ilike.G*&done=is.false")
        .await;
    assert_eq!(names(&a), ["Grape \"big\""]);
    let a = db
        .get(
            "items",
            "select=name&or=(qty.lt.6,and(done.is.true,qty.gt.10))&order=id",
        )
        .await;
    assert_eq!(names(&a), ["apple", "banana"]);
    let a = db
        .get("items", "select=name&qty=gt.1&qty=lt.10&order=id")
        .await;
    assert_eq!(
        names(&a),
        ["apple", "a, b"],
        "the same column twice is ANDed"
    );
    let a = db
        .get("items", "select=name&tags=cs.{fruit}&order=id")
        .await;
    assert_eq!(names(&a), ["apple", "banana"]);
    let a = db.get("items", "select=name&note=eq.c").await;
    assert_eq!(names(&a), ["carrot"]);
    let a = db.get("items", "select=name&note=eq.abcdefgh").await;
    assert!(
        names(&a).is_empty(),
        "varchar(5) must not truncate the value: {a:?}"
    );
    let a = db
        .get("items", "select=label:name,q:qty::text&id=eq.1")
        .await;
    assert_eq!(json_of(&a), json!([{"label": "apple", "q": "5"}]));
    let a = db
        .get("items", "select=name&order=qty.desc.nullsfirst&limit=2")
        .await;
    assert_eq!(names(&a), ["carrot", "Grape \"big\""]);
    let a = db.get("cheap", "select=name&order=id").await;
    assert_eq!(names(&a), ["apple", "a, b"]);

    let a = db.get("items", "id=eq.abc").await;
    assert_eq!(
        (a.status, json_of(&a)["code"].as_str()),
        (400, Some("22P02"))
    );
    let a = db.get("nope", "").await;
    assert_eq!(
        (a.status, json_of(&a)["code"].as_str()),
        (404, Some("PGRST205"))
    );
    let a = db.get("items", "select=nope").await;
    assert_eq!(
        (a.status, json_of(&a)["code"].as_str()),
        (400, Some("42703"))
    );

    let single = |query: &'static str| RestRequest {
        method: "GET",
        path: "items",
        query,
        accept: Some("application/vnd.pgrst.object+json"),
        ..RestRequest::default()
    };
    let a = db.run(single("select=name&id=eq.2")).await;
    assert_eq!(json_of(&a), json!({"name": "banana"}));
    assert!(
        a.header("Content-Type")
            .unwrap()
            .starts_with("application/vnd.pgrst.object+json")
    );
    let a = db.run(single("select=name")).await;
    assert_eq!(a.status, 406);
    assert_eq!(json_of(&a)["details"], "The result contains 5 rows");
    let a = db.run(single("id=eq.99")).await;
    assert_eq!(json_of(&a)["details"], "The result contains 0 rows");
}

pub(crate) async fn ranges_and_counts(db: &Db) {
    let counted = |query: &'static str, range: Option<&'static str>| RestRequest {
        method: "GET",
        path: "items",
        query,
        range,
        prefer: Some("count=exact"),
        ..RestRequest::default()
    };
    let a = db.run(counted("select=id&order=id", Some("0-1"))).await;
    assert_eq!((a.status, a.header("Content-Range")), (206, Some("0-1/5")));
    assert_eq!(a.header("Preference-Applied"), Some("count=exact"));
    let a = db
        .run(counted("select=id&order=id&offset=3&limit=10", None))
        .await;
    assert_eq!((a.status, a.header("Content-Range")), (206, Some("3-4/5")));
    let a = db.run(counted("select=id", None)).await;
    assert_eq!((a.status, a.header("Content-Range")), (200, Some("0-4/5")));
    let a = db.run(counted("select=id&id=gt.100", None)).await;
    assert_eq!((a.status, a.header("Content-Range")), (200, Some("*/0")));
    let a = db.run(counted("select=id&offset=9", None)).await;
    assert_eq!((a.status, a.header("Content-Range")), (416, Some("*/5")));
    assert_eq!(json_of(&a)["code"], "PGRST103");
    let a = db.get("items", "select=id&limit=0").await;
    assert_eq!((a.status, json_of(&a)), (200, json!([])));
    assert_eq!(a.header("Content-Range"), Some("*/*"));
    let a = db
        .run(RestRequest {
            method: "HEAD",
            path: "items",
            prefer: Some("count=exact"),
            ..RestRequest::default()
        })
        .await;
    assert_eq!(
        (a.status, a.body.as_deref(), a.header("Content-Range")),
        (200, None, Some("0-4/5"))
    );
}

pub(crate) async fn writes(db: &Db) {
    let post =
        |query: &'static str, prefer: Option<&'static str>, body: &'static str| RestRequest {
            method: "POST",
            path: "kv",
            query,
            prefer,
            content_type: Some("application/json"),
            body: body.as_bytes(),
            ..RestRequest::default()
        };
    let a = db.run(post("", None, r#"{"k": "a", "v": 1}"#)).await;
    assert_eq!((a.status, a.body.as_deref()), (201, None), "{a:?}");
    let a = db
        .run(post(
            "select=k,stamp",
            Some("return=representation"),
            r#"[{"k": "b", "v": 2}, {"k": "c", "v": 3}]"#,
        ))
        .await;
    assert_eq!(a.status, 201);
    assert_eq!(
        json_of(&a),
        json!([{"k": "b", "stamp": "dflt"}, {"k": "c", "stamp": "dflt"}])
    );
    let a = db.run(post("", None, r#"{"k": "a", "v": 5}"#)).await;
    assert_eq!(
        (a.status, json_of(&a)["code"].as_str()),
        (409, Some("23505"))
    );
    let a = db
        .run(post("", None, r#"[{"k": "x"}, {"k": "y", "v": 1}]"#))
        .await;
    assert_eq!(
        (a.status, json_of(&a)["message"].as_str()),
        (400, Some("All object keys must match"))
    );
    let a = db
        .run(post(
            "columns=%22k%22,%22v%22,%22stamp%22",
            Some("return=representation,missing=default"),
            r#"[{"k": "d", "v": 4}, {"k": "e", "v": 5, "stamp": "own"}]"#,
        ))
        .await;
    assert_eq!(
        json_of(&a),
        json!([{"k": "d", "v": 4, "stamp": "dflt"}, {"k": "e", "v": 5, "stamp": "own"}])
    );
    let a = db.run(post("", None, r#"{"k": "z", "nope": 1}"#)).await;
    assert_eq!(
        (a.status, json_of(&a)["code"].as_str()),
        (400, Some("PGRST204"))
    );

    let a = db
        .run(post(
            "",
            Some("return=representation,resolution=merge-duplicates"),
            r#"[{"k": "a", "v": 10}, {"k": "f", "v": 6}]"#,
        ))
        .await;
    assert_eq!(a.status, 201);
    assert_eq!(
        json_of(&a),
        json!([{"k": "a", "v": 10, "stamp": "dflt"}, {"k": "f", "v": 6, "stamp": "dflt"}])
    );
    assert_eq!(
        a.header("Preference-Applied"),
        Some("resolution=merge-duplicates, return=representation")
    );
    let a = db
        .run(post(
            "on_conflict=k",
            Some("return=representation,resolution=ignore-duplicates"),
            r#"{"k": "a", "v": 99}"#,
        ))
        .await;
    assert_eq!((a.status, json_of(&a)), (201, json!([])));

    let patch =
        |query: &'static str, prefer: Option<&'static str>, body: &'static str| RestRequest {
            method: "PATCH",
            path: "kv",
            query,
            prefer,
            body: body.as_bytes(),
            ..RestRequest::default()
        };
    let a = db
        .run(patch(
            "k=in.(a,b)",
            Some("return=representation"),
            r#"{"v": 0}"#,
        ))
        .await;
    assert_eq!(a.status, 200);
    assert_eq!(json_of(&a).as_array().map(Vec::len), Some(2));
    let a = db
        .run(patch("k=eq.c", None, r#"{"v": 30, "stamp": "p"}"#))
        .await;
    assert_eq!((a.status, a.header("Content-Range")), (204, Some("0-0/*")));
    let a = db.run(patch("", None, r#"{"v": 1}"#)).await;
    assert_eq!(
        (a.status, json_of(&a)["message"].as_str()),
        (400, Some("UPDATE requires a WHERE clause"))
    );
    let a = db
        .run(RestRequest {
            accept: Some("application/vnd.pgrst.object+json"),
            ..patch("v=eq.0", None, r#"{"v": 7}"#)
        })
        .await;
    assert_eq!(a.status, 406, "two rows: refused and rolled back");
    let a = db.get("kv", "select=k&v=eq.0&order=k").await;
    assert_eq!(json_of(&a), json!([{"k": "a"}, {"k": "b"}]));

    let delete = |query: &'static str, prefer: Option<&'static str>| RestRequest {
        method: "DELETE",
        path: "kv",
        query,
        prefer,
        ..RestRequest::default()
    };
    let a = db
        .run(delete("k=eq.f", Some("return=representation")))
        .await;
    assert_eq!(
        (a.status, json_of(&a)),
        (200, json!([{"k": "f", "v": 6, "stamp": "dflt"}]))
    );
    let a = db
        .run(delete("or=(k.eq.d,k.eq.e)", Some("count=exact")))
        .await;
    assert_eq!((a.status, a.header("Content-Range")), (204, Some("*/2")));
    let a = db.run(delete("", None)).await;
    assert_eq!(
        (a.status, json_of(&a)["code"].as_str()),
        (400, Some("21000"))
    );
}

pub(crate) async fn calls(db: &Db) {
    let rpc = |method: &'static str,
               path: &'static str,
               query: &'static str,
               body: &'static str| RestRequest {
        method,
        path,
        query,
        body: body.as_bytes(),
        ..RestRequest::default()
    };
    let a = db
        .run(rpc("POST", "rpc/add", "", r#"{"a": 2, "b": 40}"#))
        .await;
    assert_eq!((a.status, a.body.as_deref()), (200, Some("42")));
    let a = db.run(rpc("GET", "rpc/add", "a=1&b=2", "")).await;
    assert_eq!(a.body.as_deref(), Some("3"));
    let a = db
        .run(rpc(
            "POST",
            "rpc/items_over",
            "select=name&order=qty&limit=2",
            r#"{"min": 6}"#,
        ))
        .await;
    assert_eq!(names(&a), ["a, b", "banana"]);
    let a = db
        .run(rpc(
            "POST",
            "rpc/items_over",
            "select=name&name=like.*a*&order=id",
            r#"{"min": 6}"#,
        ))
        .await;
    assert_eq!(names(&a), ["banana", "a, b", "Grape \"big\""]);
    let a = db.run(rpc("GET", "rpc/pairs", "sq=gt.1", "")).await;
    assert_eq!(json_of(&a), json!([{"x": 2, "sq": 4}, {"x": 3, "sq": 9}]));
    let a = db.run(rpc("GET", "rpc/names", "", "")).await;
    assert_eq!(json_of(&a).as_array().map(Vec::len), Some(5));
    let a = db.run(rpc("POST", "rpc/touch", "", r#"{"k": "a"}"#)).await;
    assert_eq!((a.status, a.body.as_deref()), (204, None));
    let a = db.run(rpc("POST", "rpc/add", "", r#"{"a": 1}"#)).await;
    assert_eq!(
        (a.status, json_of(&a)["code"].as_str()),
        (404, Some("PGRST202"))
    );
    let a = db.run(rpc("POST", "rpc/fail", "", "")).await;
    assert_eq!(
        (a.status, json_of(&a)["message"].as_str()),
        (400, Some("nope"))
    );
    let a = db.run(rpc("GET", "rpc/touch", "k=a", "")).await;
    assert_eq!(
        (a.status, json_of(&a)["code"].as_str()),
        (405, Some("25006"))
    );
}

pub(crate) async fn hostile_names(db: &Db) {
    let path = "a%22%3B%20drop%20table%20items%3B%20--";
    let a = db.get(path, "select=%22we%5C%22ird%22&id=eq.2").await;
    assert_eq!(
        (a.status, json_of(&a)),
        (200, json!([{"we\"ird": "two"}])),
        "{a:?}"
    );
    let a = db.get(path, "%22we%5C%22ird%22=eq.one&select=id").await;
    assert_eq!(json_of(&a), json!([{"id": 1}]));
    let a = db
        .run(RestRequest {
            method: "POST",
            path,
            prefer: Some("return=representation"),
            body: br#"{"id": 3, "we\"ird": "x'); drop table items; --"}"#,
            ..RestRequest::default()
        })
        .await;
    assert_eq!(a.status, 201, "{a:?}");
    let a = db
        .get(
            "items",
            "select=id&name=eq.x%27)%3B%20drop%20table%20items%3B%20--",
        )
        .await;
    assert_eq!(
        (a.status, json_of(&a)),
        (200, json!([])),
        "items still there"
    );
    let a = db
        .get("items", "select=id&name=eq.%27%20OR%20%271%27=%271")
        .await;
    assert_eq!(json_of(&a), json!([]));
}
