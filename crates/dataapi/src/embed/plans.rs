//! Plans with embedded resources: one statement of lateral joins, values bound, every
//! identifier quoted; what PostgREST refuses, refused with its code and body; and a request
//! without embedding planned exactly as before embedding existed.

use serde_json::json;

use super::tests::{chat, get};
use crate::tests::{cache, code, req};
use crate::{RestRequest, plan};

#[test]
fn resources_are_lateral_subqueries_of_one_statement() {
    let p = get(
        "messages",
        "select=id,author:users(username),channels(slug,channel_details(*))&users.status=eq.ON",
    )
    .unwrap();
    assert_eq!(p.sql.matches("LEFT JOIN LATERAL").count(), 3, "{}", p.sql);
    assert!(
        p.sql.contains(
            "row_to_json(\"pgrst_e1\".*)::jsonb AS \"author\", row_to_json(\"pgrst_e2\".*)::jsonb \
             AS \"channels\""
        ),
        "{}",
        p.sql
    );
    // The filter is the resource's, on its table, with its value bound.
    assert!(
        p.sql
            .contains("\"pgrst_t1\".\"username\" = \"public\".\"messages\".\"username\" AND \"pgrst_t1\".\"status\" = $1::text::text"),
        "{}",
        p.sql
    );
    assert_eq!(p.params, [Some("ON".to_owned())]);
    assert!(!p.sql.contains(';'));

    let p = get(
        "users",
        "select=username,messages!inner(id)&messages.order=id.desc&messages.limit=2&messages.offset=1",
    )
    .unwrap();
    assert!(
        p.sql.contains(
            "INNER JOIN LATERAL (SELECT json_agg(\"pgrst_r1\".*)::jsonb AS \"pgrst_agg\" FROM \
             (SELECT \"pgrst_t1\".\"id\" AS \"id\" FROM \"public\".\"messages\" AS \"pgrst_t1\" \
             WHERE \"pgrst_t1\".\"username\" = \"public\".\"users\".\"username\" ORDER BY \
             \"pgrst_t1\".\"id\" DESC LIMIT 2 OFFSET 1) AS \"pgrst_r1\") AS \"pgrst_e1\" ON \
             \"pgrst_e1\".\"pgrst_agg\" IS NOT NULL"
        ),
        "{}",
        p.sql
    );
    assert!(
        p.sql
            .contains("COALESCE(\"pgrst_e1\".\"pgrst_agg\", '[]') AS \"messages\"")
    );

    let p = get("products", "select=name,categories(name)").unwrap();
    assert!(
        p.sql.contains(
            "FROM \"public\".\"categories\" AS \"pgrst_t1\" JOIN \"public\".\"product_categories\" \
             AS \"pgrst_j1\" ON \"pgrst_j1\".\"category_id\" = \"pgrst_t1\".\"id\" WHERE \
             \"pgrst_j1\".\"product_id\" = \"public\".\"products\".\"id\""
        ),
        "{}",
        p.sql
    );
}

#[test]
fn spreads_orders_and_null_filters_use_the_resources_lateral() {
    let p = get(
        "messages",
        "select=id,...users(status),...channels(*)&order=users(status).desc.nullslast",
    )
    .unwrap();
    assert!(
        p.sql.contains(
            "\"public\".\"messages\".\"id\" AS \"id\", \"pgrst_e1\".\"status\", \"pgrst_e2\".*"
        ),
        "{}",
        p.sql
    );
    assert!(
        p.sql
            .contains("ORDER BY \"pgrst_e1\".\"status\" DESC NULLS LAST")
    );
    let mut r = req(
        "GET",
        "users",
        "select=*,messages(id)&messages=not.is.null",
        "",
    );
    r.prefer = Some("count=exact");
    r.range = Some("0-9");
    let p = plan(&r, &chat()).unwrap();
    assert!(
        p.sql
            .contains("WHERE \"pgrst_e1\".\"pgrst_agg\" IS DISTINCT FROM NULL LIMIT 10"),
        "{}",
        p.sql
    );
    // The count asks only whether a message exists.
    assert!(
        p.sql.contains(
            "pgrst_source_count AS (SELECT 1 FROM \"public\".\"users\" WHERE EXISTS (SELECT 1 \
             FROM \"public\".\"messages\" AS \"pgrst_t2\" WHERE \"pgrst_t2\".\"username\" = \
             \"public\".\"users\".\"username\"))"
        ),
        "{}",
        p.sql
    );
    let p = get(
        "messages",
        "select=id,users(username)&or=(users.is.null,id.eq.1)",
    )
    .unwrap();
    assert!(
        p.sql.contains(
            "WHERE (row_to_json(\"pgrst_e1\".*) IS NOT DISTINCT FROM NULL OR \
             \"public\".\"messages\".\"id\" = $1::text::text)"
        ),
        "{}",
        p.sql
    );
    // `rel(count)` counts the resource's rows, where `count` is no column.
    let p = get("users", "select=username,messages(count)").unwrap();
    assert!(
        p.sql
            .contains("SELECT pg_catalog.count(*) AS \"count\" FROM \"public\".\"messages\"")
    );
}

#[test]
fn hostile_aliases_stay_quoted() {
    let p = get(
        "messages",
        "select=%22a%5C%22b%22:users(%22x%5C%22y%22:username)",
    )
    .unwrap();
    assert!(p.sql.contains("AS \"a\"\"b\""), "{}", p.sql);
    assert!(p.sql.contains("AS \"x\"\"y\""), "{}", p.sql);
    assert_eq!(p.sql.matches('"').count() % 2, 0);
}

#[test]
fn what_postgrest_refuses_is_refused_with_its_body() {
    let body = |q: &str, path: &str| {
        let e = get(path, q).unwrap_err();
        (
            e.status,
            serde_json::from_str::<serde_json::Value>(&e.body()).unwrap(),
        )
    };
    assert_eq!(
        body("select=id&users.status=eq.x", "messages"),
        (
            400,
            json!({
                "code": "PGRST108",
                "details": null,
                "hint": "Verify that 'users' is included in the 'select' query parameter.",
                "message": "'users' is not an embedded resource in this request"
            })
        )
    );
    assert_eq!(
        code(get("messages", "select=id,users(*)&users.nope.id=eq.1")),
        (400, "PGRST108".into())
    );
    assert_eq!(
        code(get("messages", "select=id&order=users(status)")),
        (400, "PGRST108".into())
    );
    assert_eq!(
        body("select=username,messages(id)&order=messages(id)", "users"),
        (
            400,
            json!({
                "code": "PGRST118",
                "details": "'users' and 'messages' do not form a many-to-one or one-to-one relationship",
                "hint": null,
                "message": "A related order on 'messages' is not possible"
            })
        )
    );
    assert_eq!(
        body("select=username,...messages(id)", "users"),
        (
            400,
            json!({
                "code": "PGRST119",
                "details": "'users' and 'messages' do not form a many-to-one or one-to-one relationship",
                "hint": null,
                "message": "A spread operation on 'messages' is not possible"
            })
        )
    );
    assert_eq!(
        body(
            "select=users!first_user(*),users!second_user(*)",
            "best_friends"
        ),
        (
            400,
            json!({
                "code": "42712",
                "details": null,
                "hint": null,
                "message": "table name \"best_friends_users_1\" specified more than once"
            })
        )
    );
    // Named by the alias PostgREST gives the embedded table (its name and depth), as
    // PostgreSQL then words it.
    let e = get("messages", "select=id,users(username,nope)").unwrap_err();
    assert_eq!(
        (e.status, e.message.as_str()),
        (400, "column users_1.nope does not exist")
    );
    let e = get("messages", "select=id,users(username)&order=users(status)").unwrap_err();
    assert_eq!(e.message, "column messages_users_1.status does not exist");
    assert_eq!(
        code(get("messages", "select=id,users(status.max())")),
        (400, "PGRST123".into())
    );
}

#[test]
fn mutations_and_calls_embed_from_their_rows() {
    let mut r = req(
        "POST",
        "messages",
        "select=id,users(username)&users.status=eq.ON",
        r#"{"id": 1, "username": "a"}"#,
    );
    r.prefer = Some("return=representation");
    let p = plan(&r, &chat()).unwrap();
    assert!(
        p.sql.contains(
            "FROM pgrst_source LEFT JOIN LATERAL (SELECT \"pgrst_t1\".\"username\" AS \"username\" \
             FROM \"public\".\"users\" AS \"pgrst_t1\" WHERE \"pgrst_t1\".\"username\" = \
             pgrst_source.\"username\" AND \"pgrst_t1\".\"status\" = $1::text::text)"
        ),
        "{}",
        p.sql
    );
    assert_eq!(p.params[0].as_deref(), Some("ON"));
    // Checked even when nothing is returned.
    r.prefer = None;
    r.query = "select=id,nope(*)";
    assert_eq!(code(plan(&r, &chat())), (400, "PGRST200".into()));
    let p = plan(
        &req(
            "GET",
            "rpc/user_messages",
            "who=a&select=id,users(status)",
            "",
        ),
        &chat(),
    )
    .unwrap();
    assert!(p.sql.contains("= pgrst_source.\"username\""), "{}", p.sql);
    let e = plan(
        &req("GET", "rpc/add", "a=1&b=2&select=users(*)", ""),
        &cache(),
    )
    .unwrap_err();
    assert_eq!(
        e.message,
        "Could not find a relationship between 'add' and 'users' in the schema cache"
    );
}

#[test]
fn a_request_without_embedding_plans_as_before() {
    let mut r = RestRequest {
        prefer: Some("count=exact"),
        range: Some("0-4"),
        ..req(
            "GET",
            "items",
            "select=id,name&id=eq.1&or=(name.eq.a,note.is.null)&order=name.desc&limit=2",
            "",
        )
    };
    assert_eq!(
        plan(&r, &cache()).unwrap().sql,
        "WITH pgrst_source AS (SELECT \"public\".\"items\".\"id\" AS \"id\", \
         \"public\".\"items\".\"name\" AS \"name\" FROM \"public\".\"items\" WHERE \
         \"public\".\"items\".\"id\" = $1::text::integer AND (\"public\".\"items\".\"name\" = \
         $2::text::text OR \"public\".\"items\".\"note\" IS NULL) ORDER BY \
         \"public\".\"items\".\"name\" DESC LIMIT 2 OFFSET 0), pgrst_source_count AS (SELECT 1 \
         FROM \"public\".\"items\" WHERE \"public\".\"items\".\"id\" = $1::text::integer AND \
         (\"public\".\"items\".\"name\" = $2::text::text OR \"public\".\"items\".\"note\" IS \
         NULL)) SELECT (SELECT pg_catalog.count(*) FROM pgrst_source_count)::bigint AS total, \
         pg_catalog.count(_postgrest_t)::bigint AS page_total, \
         coalesce(json_agg(_postgrest_t), '[]')::text AS body FROM (SELECT * FROM pgrst_source) \
         _postgrest_t"
    );
    r = RestRequest {
        prefer: Some("return=representation"),
        ..req(
            "POST",
            "items",
            "select=id,name",
            r#"[{"id":1,"name":"a"}]"#,
        )
    };
    assert_eq!(
        plan(&r, &cache()).unwrap().sql,
        "WITH pgrst_source AS (INSERT INTO \"public\".\"items\" (\"id\", \"name\") SELECT \
         pgrst_body.\"id\", pgrst_body.\"name\" FROM json_populate_recordset(NULL::\"public\".\
         \"items\", $1::text::json) pgrst_body RETURNING *) SELECT NULL::bigint AS total, \
         pg_catalog.count(_postgrest_t)::bigint AS page_total, \
         coalesce(json_agg(_postgrest_t), '[]')::text AS body FROM (SELECT pgrst_source.\"id\" AS \
         \"id\", pgrst_source.\"name\" AS \"name\" FROM pgrst_source) _postgrest_t"
    );
}
