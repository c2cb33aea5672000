//! Computed relationships (a function of a row returning rows) in the chat schema: named by
//! the function, to-one or to-many by what it returns, overloads told apart by the row type,
//! a function named as a table replacing the foreign keys' relationships to it, and the
//! plans that call it on the parent's row.

use serde_json::{Value, json};

use super::tests::chat;
use crate::schema::Cardinality;
use crate::{ComputedRelationship, Plan, RestError, RestRequest, SchemaCache, plan};

fn computed(
    function: &str,
    table: &str,
    foreign_table: &str,
    single: bool,
) -> ComputedRelationship {
    ComputedRelationship {
        function: function.into(),
        table: table.into(),
        foreign_table: foreign_table.into(),
        single,
    }
}

/// The chat schema with functions as relationships: `get_messages` for a channel's and a
/// user's rows, a user's first message (`ROWS 1`), an active user's recent messages (view
/// to view), `users(messages)` standing in for the key to `users`, `channel_id(messages)`
/// named as the key's column, and one whose argument is no table of the schema.
fn cache() -> SchemaCache {
    chat().with_computed_relationships(&[
        computed("get_messages", "channels", "messages", false),
        computed("get_messages", "users", "messages", false),
        computed("first_message", "users", "messages", true),
        computed("recent", "active_users", "recent_messages", false),
        computed("users", "messages", "users", true),
        computed("channel_id", "messages", "channels", true),
        computed("elsewhere", "nowhere", "messages", false),
    ])
}

fn request<'a>(method: &'a str, path: &'a str, query: &'a str) -> RestRequest<'a> {
    RestRequest {
        method,
        path,
        query,
        body: if method == "GET" { b"" } else { b"{}" },
        prefer: Some("return=representation"),
        ..RestRequest::default()
    }
}

fn get(path: &str, query: &str) -> Result<Plan, RestError> {
    plan(&request("GET", path, query), &cache())
}

fn sql(path: &str, query: &str) -> String {
    get(path, query)
        .unwrap_or_else(|e| panic!("{path}?{query}: {e:?}"))
        .sql
}

#[test]
fn a_function_of_a_row_is_a_relationship_named_by_the_function() {
    let s = cache();
    let found = |origin: &str, target: &str| s.find_rel(origin, target, None).unwrap();
    let r = found("channels", "get_messages");
    assert_eq!((r.foreign_table.as_str(), r.to_one()), ("messages", false));
    assert!(found("users", "get_messages").table == "users");
    assert!(found("users", "first_message").to_one());
    assert_eq!(
        found("active_users", "recent").foreign_table,
        "recent_messages"
    );
    // The hint is no part of a function's name.
    assert!(s.find_rel("users", "first_message", Some("x")).is_ok());
    // Its argument's table has it; no other does.
    assert!(s.find_rel("messages", "get_messages", None).is_err());
    assert!(s.find_rel("nowhere", "elsewhere", None).is_err());
    // One named as a table replaces the foreign key's relationship to that table.
    assert_eq!(
        found("messages", "users").cardinality,
        Cardinality::Computed {
            function: "users".into(),
            single: true
        }
    );
    // Without the function the key is still there.
    assert_eq!(
        chat()
            .find_rel("messages", "users", None)
            .unwrap()
            .cardinality,
        Cardinality::ManyToOne
    );
}

#[test]
fn the_resource_is_the_function_called_on_the_parent_s_row() {
    let s = sql("channels", "select=id,all:get_messages(id,message)");
    assert!(
        s.contains(
            "LEFT JOIN LATERAL (SELECT json_agg(\"pgrst_r1\".*)::jsonb AS \"pgrst_agg\" FROM \
             (SELECT \"pgrst_t1\".\"id\" AS \"id\", \"pgrst_t1\".\"message\" AS \"message\" FROM \
             \"public\".\"get_messages\"(\"public\".\"channels\".*) AS \"pgrst_t1\") AS \
             \"pgrst_r1\") AS \"pgrst_e1\" ON TRUE"
        ),
        "{s}"
    );
    assert!(s.contains("COALESCE(\"pgrst_e1\".\"pgrst_agg\", '[]') AS \"all\""));
    // To-one: its row, or null.
    let s = sql("users", "select=username,first_message(*)");
    assert!(
        s.contains(
            "LEFT JOIN LATERAL (SELECT \"pgrst_t1\".* FROM \"public\".\"first_message\"\
             (\"public\".\"users\".*) AS \"pgrst_t1\") AS \"pgrst_e1\" ON TRUE"
        ),
        "{s}"
    );
    assert!(s.contains("row_to_json(\"pgrst_e1\".*)::jsonb AS \"first_message\""));
    // The row of a view is the view's, which picks the function of that type.
    let s = sql("active_users", "select=name,recent(id)");
    assert!(
        s.contains("\"public\".\"recent\"(\"public\".\"active_users\".*) AS \"pgrst_t1\""),
        "{s}"
    );
}

#[test]
fn the_resource_takes_filters_orders_ranges_and_resources_of_its_own() {
    let p = get(
        "channels",
        "select=id,get_messages!inner(id,channels(slug))&get_messages.id=gt.1\
         &get_messages.order=id.desc&get_messages.limit=2",
    )
    .unwrap();
    assert!(
        p.sql.contains(
            "FROM \"public\".\"get_messages\"(\"public\".\"channels\".*) AS \"pgrst_t1\" LEFT \
             JOIN LATERAL (SELECT \"pgrst_t2\".\"slug\" AS \"slug\" FROM \
             \"public\".\"channels\" AS \"pgrst_t2\" WHERE \"pgrst_t2\".\"id\" = \
             \"pgrst_t1\".\"channel_id\") AS \"pgrst_e2\" ON TRUE WHERE \"pgrst_t1\".\"id\" > \
             $1::text::text ORDER BY \"pgrst_t1\".\"id\" DESC LIMIT 2 OFFSET 0"
        ),
        "{}",
        p.sql
    );
    assert!(p.sql.contains("INNER JOIN LATERAL"), "{}", p.sql);
    assert_eq!(p.params, [Some("1".to_owned())]);
    // Ordered by, spread, tested for null; the count asks whether it has a row.
    let s = sql(
        "users",
        "select=username,...first_message(message)&order=first_message(message)",
    );
    assert!(s.contains("ORDER BY \"pgrst_e1\".\"message\""), "{s}");
    let p = plan(
        &RestRequest {
            prefer: Some("count=exact"),
            ..request(
                "GET",
                "users",
                "select=username,first_message()&first_message=not.is.null&limit=1",
            )
        },
        &cache(),
    )
    .unwrap();
    assert!(
        p.sql.contains(
            "EXISTS (SELECT 1 FROM \"public\".\"first_message\"(\"public\".\"users\".*) AS \
             \"pgrst_t2\")"
        ),
        "{}",
        p.sql
    );
}

#[test]
fn over_the_rows_a_statement_returns_the_row_is_cast_to_its_table() {
    for (method, query) in [
        ("PATCH", "id=eq.1&select=id,get_messages(id)"),
        ("DELETE", "id=eq.1&select=id,get_messages(id)"),
        ("POST", "select=id,get_messages(id)"),
    ] {
        let p = plan(&request(method, "channels", query), &cache()).unwrap();
        assert!(
            p.sql.contains(
                "\"public\".\"get_messages\"(pgrst_source::\"public\".\"channels\") AS \"pgrst_t1\""
            ),
            "{method}: {}",
            p.sql
        );
    }
    let p = plan(
        &request(
            "GET",
            "rpc/user_messages",
            "who=alice&select=id,users(status)",
        ),
        &cache(),
    )
    .unwrap();
    assert!(
        p.sql
            .contains("\"public\".\"users\"(pgrst_source::\"public\".\"messages\")"),
        "{}",
        p.sql
    );
}

#[test]
fn a_function_that_is_no_relationship_is_pgrst200_and_two_names_are_pgrst201() {
    let e = get("channels", "select=id,user:function_returning_row(*)").unwrap_err();
    let body: Value = serde_json::from_str(&e.body()).unwrap();
    assert_eq!(
        (e.status, body),
        (
            400,
            json!({
                "code": "PGRST200",
                "details": "Searched for a foreign key relationship between 'channels' and 'function_returning_row' in the schema 'public', but no matches were found.",
                "hint": null,
                "message": "Could not find a relationship between 'channels' and 'function_returning_row' in the schema cache"
            })
        )
    );
    // `channel_id` is both the key's column and a function: PostgREST lists the function
    // as `{}`, with nothing in the hint.
    let e = get("messages", "select=id,channel_id(*)").unwrap_err();
    let body: Value = serde_json::from_str(&e.body()).unwrap();
    assert_eq!((e.status, &body["code"]), (300, &json!("PGRST201")));
    assert_eq!(body["details"][1], json!({}));
    assert_eq!(
        body["hint"],
        json!(
            "Try changing 'channel_id' to one of the following: \
             'channels!messages_channel_id_fkey', . Find the desired relationship in the \
             'details' key."
        )
    );
}
