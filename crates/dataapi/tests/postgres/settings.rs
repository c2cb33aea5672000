//! The settings PostgREST leaves off by default, run for real on the chat schema of
//! `embedding.rs`: aggregates (grouped, embedded, hoisted out of a spread), EXPLAIN, `Prefer:
//! tx=rollback` (a deferred constraint still refusing) and a cap on rows; each also off.

use quire_dataapi::{RestAnswer, RestRequest, Settings};
use serde_json::{Value, json};

use crate::{Db, json_of};

/// A table whose foreign key is checked at commit: `tx=rollback` must still check it.
pub(crate) const SCHEMA: &str = r#"
CREATE TABLE parents (id integer PRIMARY KEY);
CREATE TABLE kids (
  id integer PRIMARY KEY,
  parent integer REFERENCES parents DEFERRABLE INITIALLY DEFERRED
);
INSERT INTO parents VALUES (1);
CREATE TABLE notes (id integer PRIMARY KEY, body text);
"#;

const ON: Settings = Settings {
    aggregates: true,
    explain: true,
    tx_override: true,
    max_rows: None,
};

fn with<'a>(method: &'a str, path: &'a str, query: &'a str, body: &'a str) -> RestRequest<'a> {
    RestRequest {
        method,
        path,
        query,
        body: body.as_bytes(),
        ..RestRequest::default()
    }
}

async fn ok(db: &Db, settings: Settings, req: RestRequest<'_>) -> Value {
    let a = db.run_with(req, settings).await;
    assert!(a.status < 300, "{a:?}");
    json_of(&a)
}

async fn get(db: &Db, settings: Settings, path: &str, query: &str) -> Value {
    ok(db, settings, with("GET", path, query, "")).await
}

fn error(a: &RestAnswer) -> (u16, String) {
    (
        a.status,
        json_of(a)["code"].as_str().unwrap_or("").to_owned(),
    )
}

pub(crate) async fn aggregates(db: &Db) {
    let grouped = get(
        db,
        ON,
        "messages",
        "select=username,n:count(),total:id.sum(),last:id.max()::text&order=username",
    )
    .await;
    assert_eq!(
        grouped,
        json!([
            {"username": "alice", "n": 2, "total": 4, "last": "3"},
            {"username": "bob", "n": 1, "total": 2, "last": "2"},
            {"username": "carol", "n": 1, "total": 4, "last": "4"}
        ])
    );
    assert_eq!(
        get(db, ON, "messages", "select=count(),id.avg()::int,id.min()").await,
        json!([{"count": 4, "avg": 3, "min": 1}])
    );
    // In an embedded resource, as PostgREST 12 counts it: one row of the count, 0 for none.
    let counted = get(
        db,
        ON,
        "users",
        "select=username,messages(n:count())&order=username",
    )
    .await;
    let counts: Vec<Value> = counted
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["messages"].clone())
        .collect();
    assert_eq!(
        counts,
        [
            json!([{"n": 2}]),
            json!([{"n": 1}]),
            json!([{"n": 1}]),
            json!([{"n": 0}])
        ]
    );
    let mut by_channel = get(
        db,
        ON,
        "users",
        "select=messages(channel_id,count())&username=eq.alice",
    )
    .await[0]["messages"]
        .as_array()
        .unwrap()
        .clone();
    by_channel.sort_by_key(|m| m["channel_id"].as_i64());
    assert_eq!(
        by_channel,
        [
            json!({"channel_id": 1, "count": 1}),
            json!({"channel_id": 2, "count": 1})
        ]
    );
    // A spread resource's columns are grouped by; its aggregate is computed over the
    // parent's rows (the ids of the messages' channels summed per channel).
    assert_eq!(
        get(
            db,
            ON,
            "messages",
            "select=n:count(),...channels(slug,ids:id.sum())&order=channels(slug)",
        )
        .await,
        json!([
            {"n": 2, "slug": "general", "ids": 2},
            {"n": 2, "slug": "random", "ids": 4}
        ])
    );
    // Off: refused before any SQL, at any depth.
    for q in ["select=count()", "select=id,channels(id.max())"] {
        let a = db
            .run_with(with("GET", "messages", q, ""), Settings::default())
            .await;
        assert_eq!(error(&a), (400, "PGRST123".into()), "{q}");
        assert_eq!(
            json_of(&a)["message"],
            "Use of aggregate functions is not allowed"
        );
    }
}

fn explaining<'a>(
    accept: &'a str,
    method: &'a str,
    path: &'a str,
    body: &'a str,
) -> RestRequest<'a> {
    RestRequest {
        accept: Some(accept),
        ..with(method, path, "", body)
    }
}

pub(crate) async fn explain(db: &Db) {
    let a = db
        .run_with(
            explaining("application/vnd.pgrst.plan", "GET", "users", ""),
            ON,
        )
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(
        a.header("Content-Type"),
        Some("application/vnd.pgrst.plan+text; for=\"application/json\"; charset=utf-8")
    );
    let text = a.body.unwrap_or_default();
    assert!(text.starts_with("Aggregate  (cost="), "{text}");
    assert!(text.ends_with('\n'), "{text}");

    let a = db
        .run_with(
            explaining(
                "application/vnd.pgrst.plan+json; for=\"application/json\"; options=verbose;",
                "GET",
                "users",
                "",
            ),
            ON,
        )
        .await;
    let plan = json_of(&a);
    assert!(plan[0]["Plan"]["Node Type"].is_string(), "{plan}");
    assert!(plan[0]["Plan"]["Output"].is_array(), "verbose: {plan}");

    // Without ANALYZE a write is only planned; with it, it runs, and `tx=rollback` undoes it.
    let insert = r#"{"id": 1, "body": "planned"}"#;
    let a = db
        .run_with(
            explaining("application/vnd.pgrst.plan+json", "POST", "notes", insert),
            ON,
        )
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    let a = db
        .run_with(
            RestRequest {
                prefer: Some("tx=rollback"),
                ..explaining(
                    "application/vnd.pgrst.plan+json; options=analyze",
                    "POST",
                    "notes",
                    insert,
                )
            },
            ON,
        )
        .await;
    assert_eq!(json_of(&a)[0]["Plan"]["Actual Loops"], 1, "{a:?}");
    assert_eq!(get(db, ON, "notes", "").await, json!([]));

    // Off: a type not served.
    let a = db
        .run_with(
            explaining("application/vnd.pgrst.plan", "GET", "users", ""),
            Settings::default(),
        )
        .await;
    assert_eq!(error(&a), (406, "PGRST107".into()));
}

pub(crate) async fn tx_rollback(db: &Db) {
    let rolled = |method, path, query, body| RestRequest {
        prefer: Some("return=representation, tx=rollback"),
        ..with(method, path, query, body)
    };
    // Answered as it would commit, then undone.
    let a = db
        .run_with(
            rolled("POST", "notes", "", r#"{"id": 2, "body": "gone"}"#),
            ON,
        )
        .await;
    assert_eq!(a.status, 201);
    assert_eq!(json_of(&a), json!([{"id": 2, "body": "gone"}]));
    assert_eq!(
        a.header("Preference-Applied"),
        Some("return=representation, tx=rollback")
    );
    assert_eq!(get(db, ON, "notes", "").await, json!([]));
    ok(
        db,
        ON,
        with("POST", "notes", "", r#"{"id": 3, "body": "kept"}"#),
    )
    .await;
    let a = db
        .run_with(
            rolled("PATCH", "notes", "id=eq.3", r#"{"body": "changed"}"#),
            ON,
        )
        .await;
    assert_eq!(json_of(&a), json!([{"id": 3, "body": "changed"}]));
    let a = db
        .run_with(rolled("DELETE", "notes", "id=eq.3", ""), ON)
        .await;
    assert_eq!(a.status, 200);
    assert_eq!(
        get(db, ON, "notes", "").await,
        json!([{"id": 3, "body": "kept"}])
    );
    // A deferred constraint is checked before the rollback, so it still refuses the write.
    let a = db
        .run_with(rolled("POST", "kids", "", r#"{"id": 1, "parent": 99}"#), ON)
        .await;
    assert_eq!(error(&a), (409, "23503".into()), "{a:?}");

    // Off: ignored, so the write commits and the answer does not claim the rollback.
    let a = db
        .run_with(
            rolled("POST", "notes", "", r#"{"id": 4, "body": "committed"}"#),
            Settings::default(),
        )
        .await;
    assert_eq!(
        a.header("Preference-Applied"),
        Some("return=representation")
    );
    assert_eq!(
        get(db, ON, "notes", "id=eq.4")
            .await
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

pub(crate) async fn max_rows(db: &Db) {
    let capped = Settings {
        max_rows: Some(2),
        ..Settings::default()
    };
    let a = db
        .run_with(
            with("GET", "users", "select=username&order=username", ""),
            capped,
        )
        .await;
    assert_eq!(
        (a.status, json_of(&a)),
        (200, json!([{"username": "alice"}, {"username": "bob"}]))
    );
    assert_eq!(a.header("Content-Range"), Some("0-1/*"));
    let a = db
        .run_with(
            RestRequest {
                prefer: Some("count=exact"),
                ..with(
                    "GET",
                    "users",
                    "select=username&order=username&offset=1",
                    "",
                )
            },
            capped,
        )
        .await;
    assert_eq!(a.status, 206);
    assert_eq!(a.header("Content-Range"), Some("1-2/4"));
    // Each embedded resource is capped too, and a call's rows.
    let one = Settings {
        max_rows: Some(1),
        ..Settings::default()
    };
    let a = get(db, one, "channels", "select=messages(id)&id=eq.1").await;
    assert_eq!(a[0]["messages"].as_array().unwrap().len(), 1, "{a}");
    let a = ok(
        db,
        one,
        with("POST", "rpc/user_messages", "", r#"{"who": "alice"}"#),
    )
    .await;
    assert_eq!(a.as_array().unwrap().len(), 1, "{a}");
    // A write's returned rows are not, as in PostgREST.
    let a = db
        .run_with(
            RestRequest {
                prefer: Some("return=representation"),
                ..with(
                    "POST",
                    "notes",
                    "",
                    r#"[{"id": 10}, {"id": 11}, {"id": 12}]"#,
                )
            },
            one,
        )
        .await;
    assert_eq!(json_of(&a).as_array().unwrap().len(), 3, "{a:?}");
}
