//! The settings PostgREST leaves off by default, planned: each refused or ignored as
//! PostgREST refuses or ignores it while off, and planned as PostgREST plans it once on.

use crate::embed::tests::chat;
use crate::tests::{cache, req};
use crate::{Plan, PlanRow, RestError, RestRequest, Settings, plan_with, respond};

const ON: Settings = Settings {
    aggregates: true,
    explain: true,
    tx_override: true,
    max_rows: None,
};

fn get_with(settings: Settings, path: &str, query: &str) -> Result<Plan, RestError> {
    let r = RestRequest {
        method: "GET",
        path,
        query,
        ..RestRequest::default()
    };
    plan_with(&r, &chat(), settings)
}

fn refused(r: Result<Plan, RestError>) -> RestError {
    r.expect_err("refused")
}

#[test]
fn aggregates_are_refused_at_any_depth_while_off() {
    for q in [
        "select=count()",
        "select=id.sum()",
        "select=username,messages(id.count())",
        "select=id,...channel_details(details_n:id.max())",
    ] {
        let path = if q.contains("channel_details") {
            "channels"
        } else if q.contains("messages") {
            "users"
        } else {
            "messages"
        };
        let e = refused(get_with(Settings::default(), path, q));
        assert_eq!(
            (e.status, e.code.as_str(), e.message.as_str()),
            (400, "PGRST123", "Use of aggregate functions is not allowed"),
            "{q}"
        );
        assert!(get_with(ON, path, q).is_ok(), "{q}");
    }
    // `rel(count)` is a field PostgreSQL reads as a count, not an aggregate of PostgREST's.
    assert!(get_with(Settings::default(), "users", "select=messages(count)").is_ok());
}

#[test]
fn aggregates_group_by_the_other_columns_by_position() {
    let p = get_with(
        ON,
        "messages",
        "select=username,n:count(),total:id.sum()::text",
    )
    .unwrap();
    assert!(
        p.sql.contains(
            "SELECT \"public\".\"messages\".\"username\" AS \"username\", \
             pg_catalog.count(*) AS \"n\", CAST(pg_catalog.sum(\"public\".\"messages\".\"id\") \
             AS text) AS \"total\" FROM \"public\".\"messages\" GROUP BY 1"
        ),
        "{}",
        p.sql
    );
    // Alone, an aggregate groups nothing; named by its function without an alias.
    let p = get_with(ON, "messages", "select=id::text.max()").unwrap();
    assert!(
        p.sql
            .contains("pg_catalog.max(CAST(\"public\".\"messages\".\"id\" AS text)) AS \"max\""),
        "{}",
        p.sql
    );
    assert!(!p.sql.contains("GROUP BY"), "{}", p.sql);
    // `*` beside an aggregate is written out, so each column is grouped by.
    let p = get_with(ON, "channels", "select=*,count()").unwrap();
    assert!(p.sql.contains("GROUP BY 1, 2"), "{}", p.sql);
    // In an embedded resource, grouped within it.
    let p = get_with(ON, "users", "select=username,messages(channel_id,count())").unwrap();
    assert!(
        p.sql
            .contains("pg_catalog.count(*) AS \"count\" FROM \"public\".\"messages\""),
        "{}",
        p.sql
    );
    assert!(p.sql.contains("GROUP BY 1"), "{}", p.sql);
}

#[test]
fn a_spread_resources_aggregate_is_computed_in_its_parent() {
    let p = get_with(
        ON,
        "channels",
        "select=slug,...channel_details(details_n:id.sum(),details)",
    )
    .unwrap();
    // The resource selects the column under its alias; the parent sums it and groups by the
    // rest.
    assert!(
        p.sql.contains("\"pgrst_t1\".\"id\" AS \"details_n\""),
        "{}",
        p.sql
    );
    assert!(
        p.sql
            .contains("pg_catalog.sum(\"pgrst_e1\".\"details_n\") AS \"details_n\""),
        "{}",
        p.sql
    );
    assert!(p.sql.contains("GROUP BY 1, 3"), "{}", p.sql);
}

#[test]
fn a_plan_is_answered_only_with_explain_on() {
    let mut r = req("GET", "channels", "select=id", "");
    r.accept = Some("application/vnd.pgrst.plan");
    let e = refused(plan_with(&r, &chat(), Settings::default()));
    assert_eq!((e.status, e.code.as_str()), (406, "PGRST107"));
    assert_eq!(
        e.message,
        "None of these media types are available: application/vnd.pgrst.plan+text; \
         for=\"application/json\""
    );
    // Another type offered besides is answered instead, as PostgREST skips the plan.
    r.accept = Some("application/vnd.pgrst.plan+json, application/json;q=0.5");
    let p = plan_with(&r, &chat(), Settings::default()).unwrap();
    assert!(!p.explains() && !p.sql.starts_with("EXPLAIN"));

    r.accept = Some("application/vnd.pgrst.plan");
    let p = plan_with(&r, &chat(), ON).unwrap();
    assert!(p.explains());
    assert!(
        p.sql.starts_with("EXPLAIN (FORMAT TEXT) WITH "),
        "{}",
        p.sql
    );
    // postgrest-js's header, with its trailing `;` and a `for=` in quotes.
    r.accept = Some(
        "application/vnd.pgrst.plan+json; for=\"application/vnd.pgrst.object+json\"; \
         options=analyze|verbose|buffers;",
    );
    let p = plan_with(&r, &chat(), ON).unwrap();
    assert!(
        p.sql
            .starts_with("EXPLAIN (FORMAT JSON, ANALYZE, VERBOSE, BUFFERS) WITH "),
        "{}",
        p.sql
    );
    let answer = respond(&p, PlanRow::explained(&["[{\"Plan\": {}}]"])).unwrap();
    assert_eq!(answer.status, 200);
    assert_eq!(answer.body.as_deref(), Some("[{\"Plan\": {}}]\n"));
    assert_eq!(
        answer.header("Content-Type"),
        Some(
            "application/vnd.pgrst.plan+json; for=\"application/vnd.pgrst.object+json\"; \
             options=analyze|verbose|buffers; charset=utf-8"
        )
    );
    assert_eq!(answer.header("Content-Range"), None);
    // A plan for a media type not served is none.
    r.accept = Some("application/vnd.pgrst.plan; for=\"text/xml\"");
    let e = refused(plan_with(&r, &chat(), ON));
    assert_eq!(
        e.message,
        "None of these media types are available: application/vnd.pgrst.plan+text; \
         for=\"text/xml\""
    );
}

#[test]
fn tx_rollback_is_honoured_only_when_allowed() {
    let mut r = req("POST", "items", "", r#"{"id": 1}"#);
    r.prefer = Some("return=representation, tx=rollback");
    let off = plan_with(&r, &cache(), Settings::default()).unwrap();
    assert!(!off.rolls_back());
    let on = plan_with(&r, &cache(), ON).unwrap();
    assert!(on.rolls_back());
    let row = PlanRow {
        page_total: 1,
        body: Some("[]".into()),
        ..PlanRow::default()
    };
    assert_eq!(
        respond(&off, row.clone())
            .unwrap()
            .header("Preference-Applied"),
        Some("return=representation")
    );
    assert_eq!(
        respond(&on, row.clone())
            .unwrap()
            .header("Preference-Applied"),
        Some("return=representation, tx=rollback")
    );
    // The first `tx` wins; `tx=commit` commits, and says so.
    r.prefer = Some("tx=commit, tx=rollback");
    let commit = plan_with(&r, &cache(), ON).unwrap();
    assert!(!commit.rolls_back());
    assert_eq!(
        respond(&commit, row).unwrap().header("Preference-Applied"),
        Some("tx=commit")
    );
    // Known to `handling=strict` either way.
    r.prefer = Some("handling=strict, tx=rollback");
    assert!(plan_with(&r, &cache(), Settings::default()).is_ok());
}

#[test]
fn max_rows_caps_reads_calls_and_their_resources_but_not_writes() {
    let capped = Settings {
        max_rows: Some(2),
        ..Settings::default()
    };
    let p = get_with(capped, "users", "select=username,messages(id)").unwrap();
    assert_eq!(p.sql.matches(" LIMIT 2 OFFSET 0").count(), 2, "{}", p.sql);
    // A smaller limit stays; an offset moves the cap with it.
    let p = get_with(capped, "users", "limit=1&offset=3").unwrap();
    assert!(p.sql.contains(" LIMIT 1 OFFSET 3"), "{}", p.sql);
    let p = get_with(capped, "users", "offset=3").unwrap();
    assert!(p.sql.contains(" LIMIT 2 OFFSET 3"), "{}", p.sql);
    let p = get_with(capped, "users", "limit=0").unwrap();
    assert!(p.sql.contains(" LIMIT 0 OFFSET 0"), "{}", p.sql);
    let p = plan_with(
        &req("POST", "rpc/user_messages", "", r#"{"who": "a"}"#),
        &chat(),
        capped,
    )
    .unwrap();
    assert!(p.sql.contains(" LIMIT 2 OFFSET 0"), "{}", p.sql);
    let mut w = req("POST", "users", "select=username", r#"[{"username": "a"}]"#);
    w.prefer = Some("return=representation");
    let p = plan_with(&w, &chat(), capped).unwrap();
    assert!(!p.sql.contains("LIMIT"), "{}", p.sql);
    // What a capped page answers: PostgREST's range of the rows given, of an unknown total.
    let answer = respond(
        &get_with(capped, "users", "").unwrap(),
        PlanRow {
            page_total: 2,
            body: Some("[]".into()),
            ..PlanRow::default()
        },
    )
    .unwrap();
    assert_eq!(answer.header("Content-Range"), Some("0-1/*"));
}
