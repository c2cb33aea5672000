//! The rest of PostgREST's grammar on a real PostgreSQL: JSON paths, computed fields, a
//! function's one unnamed argument, `missing=default` into identity columns,
//! `max-affected`, CSV, and schemas chosen by profile.

use quire_dataapi::RestRequest;
use serde_json::json;

use crate::{Db, json_of};

fn with<'a>(method: &'a str, path: &'a str, query: &'a str, body: &'a str) -> RestRequest<'a> {
    RestRequest {
        method,
        path,
        query,
        body: body.as_bytes(),
        ..RestRequest::default()
    }
}

pub(crate) async fn computed_and_json_paths(db: &Db) {
    let a = db
        .get(
            "docs",
            "select=title,data->a->>b,n:data->>n::int,first:data->list->0,doc->>k&order=id",
        )
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(
        json_of(&a),
        json!([
            {"title": "one", "b": "x", "n": 1, "first": 10, "k": "v1"},
            {"title": "two", "b": "y", "n": 2, "first": 30, "k": "v2"},
            {"title": "three", "b": null, "n": null, "first": null, "k": null}
        ])
    );
    // Filters and order on paths, `->` compared as JSON, `->>` as text.
    let a = db
        .get("docs", "select=title&data->a->>b=eq.y&data->n=gt.1")
        .await;
    assert_eq!(json_of(&a), json!([{"title": "two"}]), "{a:?}");
    let a = db
        .get("docs", "select=title&data=not.is.null&order=data->>n.desc")
        .await;
    assert_eq!(json_of(&a), json!([{"title": "two"}, {"title": "one"}]));
    let a = db
        .get(
            "docs",
            "select=title&data->list=cs.[20]&data->list->-1=eq.20",
        )
        .await;
    assert_eq!(json_of(&a), json!([{"title": "one"}]));
    let a = db.get("docs", "select=title&tags->>0=eq.c").await;
    assert_eq!(
        json_of(&a),
        json!([{"title": "two"}]),
        "to_jsonb of an array"
    );
    let a = db
        .get(
            "docs",
            "select=title&or=(data->>n.eq.1,doc->>k.eq.v2)&order=id",
        )
        .await;
    assert_eq!(json_of(&a), json!([{"title": "one"}, {"title": "two"}]));

    // A computed field: selected, filtered, ordered, and on a function's rows.
    let a = db
        .get(
            "docs",
            "select=id,full_title&full_title=like.t*&order=full_title.desc",
        )
        .await;
    assert_eq!(
        json_of(&a),
        json!([{"id": 2, "full_title": "two #2"}, {"id": 3, "full_title": "three #3"}]),
        "{a:?}"
    );
    let a = db
        .run(with(
            "GET",
            "rpc/docs_titled",
            "prefix=t&select=label:full_title&order=id",
            "",
        ))
        .await;
    assert_eq!(
        json_of(&a),
        json!([{"label": "two #2"}, {"label": "three #3"}]),
        "{a:?}"
    );
    let a = db
        .run(RestRequest {
            prefer: Some("return=representation"),
            ..with(
                "PATCH",
                "docs",
                "id=eq.3&select=full_title",
                r#"{"title": "3"}"#,
            )
        })
        .await;
    assert_eq!(json_of(&a), json!([{"full_title": "3 #3"}]), "{a:?}");
    // A function of another table's row is not a field of this one.
    let a = db.get("items", "select=full_title").await;
    assert_eq!(
        (a.status, json_of(&a)["code"].as_str()),
        (400, Some("42703"))
    );
}

pub(crate) async fn unnamed_arguments(db: &Db) {
    let a = db
        .run(with("POST", "rpc/echo_json", "", r#"{"A": 1, "B": [2]}"#))
        .await;
    assert_eq!((a.status, json_of(&a)), (200, json!({"A": 1, "B": [2]})));
    // postgrest-js's `{"": v}`: the whole body, as PostgREST passes it.
    let a = db
        .run(with("POST", "rpc/echo_text", "", r#"{"": "test"}"#))
        .await;
    assert_eq!((a.status, json_of(&a)), (200, json!(r#"{"": "test"}"#)));
    let a = db
        .run(RestRequest {
            content_type: Some("text/plain"),
            ..with("POST", "rpc/echo_text", "", "plain words")
        })
        .await;
    assert_eq!(json_of(&a), json!("plain words"));
    let bytes = [0_u8, 159, 146, 150, 255];
    let a = db
        .run(RestRequest {
            content_type: Some("application/octet-stream"),
            body: &bytes,
            ..with("POST", "rpc/byte_count", "", "")
        })
        .await;
    assert_eq!((a.status, json_of(&a)), (200, json!(5)), "{a:?}");
    // An unnamed argument of another type is not callable, as in PostgREST.
    let a = db
        .run(with("POST", "rpc/unnamed_int", "", r#"{"": 1}"#))
        .await;
    assert_eq!(
        (a.status, json_of(&a)["code"].as_str()),
        (404, Some("PGRST202"))
    );
}

pub(crate) async fn limits_and_defaults(db: &Db) {
    // `missing=default` with `columns=`: the identity, serial and plain defaults apply to
    // the rows that leave them out.
    let a = db
        .run(RestRequest {
            prefer: Some("missing=default, return=representation"),
            ..with(
                "POST",
                "docs",
                "columns=id,serial_no,title,tags&select=title,tags",
                r#"[{"title": "four"}, {"title": "five", "tags": ["z"]}]"#,
            )
        })
        .await;
    assert_eq!(a.status, 201, "{a:?}");
    assert_eq!(
        json_of(&a),
        json!([{"title": "four", "tags": ["a"]}, {"title": "five", "tags": ["z"]}])
    );
    let a = db
        .get("docs", "select=id,serial_no&title=in.(four,five)&order=id")
        .await;
    assert_eq!(
        json_of(&a),
        json!([{"id": 4, "serial_no": 4}, {"id": 5, "serial_no": 5}])
    );
    // On a `PATCH` too: a column `columns=` names and the body leaves out is reset.
    let a = db
        .run(RestRequest {
            prefer: Some("missing=default, return=representation"),
            ..with(
                "PATCH",
                "docs",
                "title=eq.five&columns=title,tags&select=tags",
                r#"{"title": "five"}"#,
            )
        })
        .await;
    assert_eq!(
        (a.status, json_of(&a)),
        (200, json!([{"tags": ["a"]}])),
        "{a:?}"
    );
    // An empty body changes nothing, whatever the filters bind.
    let a = db
        .run(RestRequest {
            prefer: Some("return=representation"),
            ..with("PATCH", "docs", "title=eq.five&data->>n=eq.1", "{}")
        })
        .await;
    assert_eq!((a.status, json_of(&a)), (200, json!([])), "{a:?}");
    // Without it, the missing keys are NULL, and an identity column refuses NULL.
    let a = db
        .run(with(
            "POST",
            "docs",
            "columns=id,title",
            r#"{"title": "six"}"#,
        ))
        .await;
    assert_eq!(
        (a.status, json_of(&a)["code"].as_str()),
        (400, Some("23502"))
    );

    // `max-affected` with `handling=strict`: more rows than allowed is refused, and
    // nothing changed.
    let capped = |prefer: &'static str| RestRequest {
        prefer: Some(prefer),
        ..with("PATCH", "docs", "id=gt.3", r#"{"title": "capped"}"#)
    };
    let a = db.run(capped("handling=strict, max-affected=1")).await;
    assert_eq!(
        (a.status, json_of(&a)["code"].as_str()),
        (400, Some("PGRST124")),
        "{a:?}"
    );
    assert_eq!(
        json_of(&a)["details"].as_str(),
        Some("The query affects 2 rows")
    );
    let a = db.get("docs", "select=title&id=gt.3&order=id").await;
    assert_eq!(json_of(&a), json!([{"title": "four"}, {"title": "five"}]));
    let a = db.run(capped("handling=strict, max-affected=2")).await;
    assert_eq!(
        (a.status, a.header("Preference-Applied")),
        (204, Some("handling=strict, max-affected=2"))
    );
    let a = db
        .run(RestRequest {
            prefer: Some("handling=strict, max-affected=1"),
            ..with("DELETE", "docs", "title=eq.capped", "")
        })
        .await;
    assert_eq!(a.status, 400);
    let a = db
        .run(RestRequest {
            prefer: Some("handling=strict, max-affected=1"),
            ..with("GET", "rpc/docs_titled", "prefix=capped", "")
        })
        .await;
    assert_eq!(
        (a.status, json_of(&a)["code"].as_str()),
        (400, Some("PGRST124"))
    );

    // An upsert that only updated answers 200, one that inserted 201.
    let upsert = |body: &'static str| RestRequest {
        prefer: Some("resolution=merge-duplicates"),
        ..with("POST", "kv", "", body)
    };
    let a = db.run(upsert(r#"{"k": "a", "v": 41}"#)).await;
    assert_eq!(a.status, 200, "{a:?}");
    let a = db
        .run(upsert(r#"[{"k": "a", "v": 42}, {"k": "new", "v": 1}]"#))
        .await;
    assert_eq!(a.status, 201);
    let a = db.get("kv", "select=v&k=in.(a,new)&order=k").await;
    assert_eq!(json_of(&a), json!([{"v": 42}, {"v": 1}]));
}

pub(crate) async fn csv(db: &Db) {
    let a = db
        .run(RestRequest {
            accept: Some("text/csv"),
            ..with(
                "GET",
                "items",
                "select=id,name,qty,note&id=in.(1,3,4,5)&order=id",
                "",
            )
        })
        .await;
    assert_eq!(a.header("Content-Type"), Some("text/csv; charset=utf-8"));
    assert_eq!(
        a.body.as_deref(),
        Some(
            "id,name,qty,note\n1,apple,5,a\n3,carrot,,c\n4,\"a, b\",7,x\n5,\"Grape \"\"big\"\"\",30,"
        )
    );
    let a = db
        .run(RestRequest {
            accept: Some("text/csv"),
            ..with("GET", "items", "id=eq.0", "")
        })
        .await;
    assert_eq!(a.body.as_deref(), Some("\n"));
    let a = db
        .run(RestRequest {
            content_type: Some("text/csv"),
            prefer: Some("return=representation"),
            ..with("POST", "kv", "", "k,v,stamp\ncsv1,1,NULL\n\"c,2\",2,s\n")
        })
        .await;
    assert_eq!(a.status, 201, "{a:?}");
    assert_eq!(
        json_of(&a),
        json!([{"k": "csv1", "v": 1, "stamp": null}, {"k": "c,2", "v": 2, "stamp": "s"}])
    );
}

pub(crate) async fn profiles(db: &Db) {
    let a = db
        .run(RestRequest {
            accept_profile: Some("personal"),
            ..with("GET", "items", "", "")
        })
        .await;
    assert_eq!(
        (a.status, json_of(&a)),
        (200, json!([{"id": 1, "label": "mine"}]))
    );
    assert_eq!(a.header("Content-Profile"), Some("personal"));
    let a = db
        .run(RestRequest {
            content_profile: Some("personal"),
            prefer: Some("return=representation"),
            ..with("POST", "items", "", r#"{"id": 2, "label": "also"}"#)
        })
        .await;
    assert_eq!(a.status, 201, "{a:?}");
    let a = db
        .run(RestRequest {
            content_profile: Some("personal"),
            ..with("POST", "rpc/whoami", "", "")
        })
        .await;
    assert_eq!(json_of(&a), json!("personal"));
    // Not exposed: refused before any SQL.
    let a = db
        .run(RestRequest {
            accept_profile: Some("nosuchschema"),
            ..with("GET", "items", "", "")
        })
        .await;
    assert_eq!(
        (a.status, json_of(&a)["message"].as_str()),
        (
            406,
            Some("The schema must be one of the following: public, personal")
        )
    );
    // The default schema still answers without a profile, naming itself.
    let a = db.get("items", "select=id&id=eq.1").await;
    assert_eq!(a.header("Content-Profile"), Some("public"));
}
