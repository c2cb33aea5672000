//! Every refusal of the REST subset as the gateway sends it (status, headers, body), made
//! by a request that draws it, and PostgreSQL's errors as [`from_pg_error`] answers them,
//! compared with a reviewed snapshot: supabase-js and supabase-py read these bodies, so a
//! code, status or wording that changes shows in review.

use serde_json::{Value, json};

use crate::tests::{cache, col, table};
use crate::{
    Argument, Function, PlanRow, RestAnswer, RestRequest, Returns, SchemaCache, Volatility,
    from_pg_error, plan, respond,
};

/// The fixtures' schema, and `pick` overloaded on one argument's type (PGRST203).
fn schema() -> SchemaCache {
    let base = cache();
    let pick = |type_name: &str| Function {
        schema: "public".into(),
        name: "pick".into(),
        args: vec![Argument {
            name: "a".into(),
            type_name: type_name.into(),
            required: true,
            variadic: false,
        }],
        returns_set: false,
        returns: Returns::Scalar("integer".into()),
        returns_table: None,
        volatility: Volatility::Stable,
    };
    let mut functions: Vec<Function> = ["add", "nothing"]
        .iter()
        .flat_map(|name| base.functions(name).to_vec())
        .collect();
    functions.extend([pick("integer"), pick("text")]);
    let items = table(
        "items",
        vec![
            col("id", "integer"),
            col("name", "text"),
            col("note", "character varying"),
        ],
    );
    SchemaCache::from_parts(vec![items], functions)
}

fn request<'a>(method: &'a str, path: &'a str, query: &'a str) -> RestRequest<'a> {
    RestRequest {
        method,
        path,
        query,
        ..RestRequest::default()
    }
}

/// The answer as the gateway sends it: status, headers in order, the body as JSON.
fn sent(label: &str, answer: &RestAnswer) -> Value {
    let headers: Vec<Value> = answer
        .headers
        .iter()
        .map(|(name, value)| json!(format!("{name}: {value}")))
        .collect();
    let body = answer
        .body
        .as_deref()
        .map_or(Value::Null, |b| serde_json::from_str(b).unwrap_or(json!(b)));
    json!({ "request": label, "status": answer.status, "headers": headers, "body": body })
}

/// The refusal `req` draws before any SQL runs.
fn refused(label: &str, req: &RestRequest<'_>) -> Value {
    match plan(req, &schema()) {
        Ok(p) => panic!("{label} was planned: {}", p.sql),
        Err(e) => sent(label, &e.to_answer()),
    }
}

#[test]
fn every_refusal_of_the_rest_subset_answers_its_reviewed_body() {
    let mut answers = vec![
        refused("GET /", &request("GET", "", "")),
        refused("GET /a/b/c", &request("GET", "a/b/c", "")),
        refused("GET /nope", &request("GET", "nope", "")),
        refused("TRACE /items", &request("TRACE", "items", "")),
        refused("PUT /items", &request("PUT", "items", "id=eq.1")),
        refused("DELETE /rpc/add", &request("DELETE", "rpc/add", "")),
        refused("GET /rpc/nope", &request("GET", "rpc/nope", "")),
        refused("GET /rpc/add?a=1", &request("GET", "rpc/add", "a=1")),
        refused("GET /rpc/pick?a=1", &request("GET", "rpc/pick", "a=1")),
        refused("GET /items?id=eq", &request("GET", "items", "id=eq")),
        refused("GET /items?id=like", &request("GET", "items", "id=like")),
        refused(
            "GET /items?select=id,(",
            &request("GET", "items", "select=id,("),
        ),
        refused(
            "GET /items?order=id.up",
            &request("GET", "items", "order=id.up"),
        ),
        refused(
            "GET /items?or=(id.eq.1",
            &request("GET", "items", "or=(id.eq.1"),
        ),
        refused(
            "GET /items?select=nope",
            &request("GET", "items", "select=nope"),
        ),
        refused(
            "GET /items?nope=eq.1",
            &request("GET", "items", "nope=eq.1"),
        ),
        refused(
            "GET /items?select=count()",
            &request("GET", "items", "select=count()"),
        ),
        refused(
            "GET /items?select=clients(*)",
            &request("GET", "items", "select=clients(*)"),
        ),
        refused(
            "GET /items?clients.id=eq.1",
            &request("GET", "items", "clients.id=eq.1"),
        ),
        refused(
            "GET /items (Accept-Profile: personal)",
            &RestRequest {
                accept_profile: Some("personal"),
                ..request("GET", "items", "")
            },
        ),
        refused(
            "POST /rpc/add (Prefer: handling=strict, max-affected=1)",
            &RestRequest {
                body: br#"{"a":1,"b":2}"#,
                prefer: Some("handling=strict, max-affected=1"),
                ..request("POST", "rpc/add", "")
            },
        ),
        refused(
            "POST /rpc/add (text/plain)",
            &RestRequest {
                body: b"x",
                content_type: Some("text/plain"),
                ..request("POST", "rpc/add", "")
            },
        ),
        refused(
            "POST /rpc/adds {\"a\":1}",
            &RestRequest {
                body: br#"{"a":1}"#,
                ..request("POST", "rpc/adds", "")
            },
        ),
        refused(
            "PATCH /items (no filter)",
            &RestRequest {
                body: br#"{"name":"x"}"#,
                ..request("PATCH", "items", "")
            },
        ),
        refused("DELETE /items (no filter)", &request("DELETE", "items", "")),
        refused(
            "DELETE /items?id=eq.1&limit=1",
            &request("DELETE", "items", "id=eq.1&limit=1"),
        ),
        refused(
            "POST /items {\"nope\":1}",
            &RestRequest {
                body: br#"{"nope":1}"#,
                ..request("POST", "items", "")
            },
        ),
        refused(
            "POST /items (not JSON)",
            &RestRequest {
                body: b"{",
                ..request("POST", "items", "")
            },
        ),
        refused(
            "POST /items (keys differ)",
            &RestRequest {
                body: br#"[{"id":1},{"name":"x"}]"#,
                ..request("POST", "items", "")
            },
        ),
        refused(
            "POST /items (text/plain)",
            &RestRequest {
                body: b"x",
                content_type: Some("text/plain"),
                ..request("POST", "items", "")
            },
        ),
        refused(
            "POST /items?columns=nope",
            &RestRequest {
                body: br#"{"id":1}"#,
                ..request("POST", "items", "columns=nope")
            },
        ),
        refused(
            "POST /items?on_conflict=nope",
            &RestRequest {
                body: br#"{"id":1}"#,
                prefer: Some("resolution=merge-duplicates"),
                ..request("POST", "items", "on_conflict=nope")
            },
        ),
        refused(
            "GET /items (Range: 5-2)",
            &RestRequest {
                range: Some("5-2"),
                ..request("GET", "items", "")
            },
        ),
        refused("GET /items?limit=-1", &request("GET", "items", "limit=-1")),
        refused(
            "GET /items (Accept: application/geo+json)",
            &RestRequest {
                accept: Some("application/geo+json"),
                ..request("GET", "items", "")
            },
        ),
        refused(
            "GET /items (Prefer: handling=strict, nope)",
            &RestRequest {
                prefer: Some("handling=strict, nope"),
                ..request("GET", "items", "")
            },
        ),
    ];
    answers.extend(answered_after_running());
    insta::assert_json_snapshot!(answers);
}

/// Resource embedding's refusals, on the chat schema of `embed::tests`.
#[test]
fn every_refusal_of_resource_embedding_answers_its_reviewed_body() {
    let chat = crate::embed::tests::chat();
    let answers: Vec<Value> = [
        ("messages", "select=*,user(*)"),
        ("messages", "select=*,users!nope(*)"),
        ("best_friends", "select=users(*)"),
        ("products", "select=*,categories!nope(*)"),
        ("messages", "select=id&users.status=eq.x"),
        ("users", "select=username,messages(id)&order=messages(id)"),
        ("users", "select=username,...messages(id)"),
        (
            "best_friends",
            "select=users!first_user(*),users!second_user(*)",
        ),
        ("messages", "select=id,users(username)&order=users(status)"),
    ]
    .iter()
    .map(|(path, query)| {
        let label = format!("GET /{path}?{query}");
        match plan(&request("GET", path, query), &chat) {
            Ok(p) => panic!("{label} was planned: {}", p.sql),
            Err(e) => sent(&label, &e.to_answer()),
        }
    })
    .collect();
    insta::assert_json_snapshot!(answers);
}

/// The refusals made from what the statement returned: more rows changed than
/// `max-affected` allows and one object asked for and two rows found (the gateway rolls back
/// and sends them), and an offset past the count.
fn answered_after_running() -> Vec<Value> {
    let one = RestRequest {
        accept: Some("application/vnd.pgrst.object+json"),
        ..request("GET", "items", "")
    };
    let singular = plan(&one, &schema()).unwrap();
    let two = PlanRow {
        total: None,
        page_total: 2,
        body: Some("[{},{}]".into()),
        inserted: None,
    };
    let past = RestRequest {
        prefer: Some("count=exact"),
        ..request("GET", "items", "offset=10")
    };
    let counted = plan(&past, &schema()).unwrap();
    let none = PlanRow {
        total: Some(3),
        page_total: 0,
        body: Some("[]".into()),
        inserted: None,
    };
    let capped = RestRequest {
        body: br#"{"name":"x"}"#,
        prefer: Some("handling=strict, max-affected=1"),
        ..request("PATCH", "items", "id=gt.0")
    };
    let capped = plan(&capped, &schema()).unwrap();
    let three = PlanRow {
        page_total: 3,
        ..PlanRow::default()
    };
    vec![
        sent(
            "PATCH /items?id=gt.0 (Prefer: handling=strict, max-affected=1; three rows)",
            &respond(&capped, three).unwrap_err().to_answer(),
        ),
        sent(
            "GET /items (Accept: object, two rows)",
            &respond(&singular, two).unwrap_err().to_answer(),
        ),
        sent(
            "GET /items?offset=10 (Prefer: count=exact, three rows)",
            &respond(&counted, none).unwrap(),
        ),
    ]
}

/// PostgreSQL's errors as PostgREST answers them: the status by SQLSTATE (and for 42501, by
/// whether the role is `anon`), and `RAISE SQLSTATE 'PGRST'` with its own JSON.
/// SQLSTATE, message, detail, hint, and whether the role was `anon`.
type PgErrorCase<'a> = (&'a str, &'a str, Option<&'a str>, Option<&'a str>, bool);

#[test]
fn postgresql_errors_answer_their_reviewed_bodies() {
    let cases: [PgErrorCase<'_>; 13] = [
        (
            "23505",
            "duplicate key value violates unique constraint \"items_pkey\"",
            Some("Key (id)=(1) already exists."),
            None,
            false,
        ),
        (
            "23503",
            "insert or update on table \"orders\" violates foreign key constraint \"orders_item_fkey\"",
            Some("Key (item)=(9) is not present in table \"items\"."),
            None,
            false,
        ),
        (
            "42501",
            "permission denied for table items",
            None,
            None,
            true,
        ),
        (
            "42501",
            "permission denied for table items",
            None,
            None,
            false,
        ),
        (
            "42883",
            "function nope() does not exist",
            None,
            Some(
                "No function matches the given name and argument types. You might need to add explicit type casts.",
            ),
            false,
        ),
        (
            "42P01",
            "relation \"nope\" does not exist",
            None,
            None,
            false,
        ),
        (
            "P0001",
            "out of stock",
            Some("item 7"),
            Some("order fewer"),
            false,
        ),
        (
            "25006",
            "cannot execute INSERT in a read-only transaction",
            None,
            None,
            false,
        ),
        (
            "57014",
            "canceling statement due to statement timeout",
            None,
            None,
            true,
        ),
        (
            "53400",
            "temporary file size exceeds temp_file_limit (1024kB)",
            None,
            None,
            false,
        ),
        (
            "22P02",
            "invalid input syntax for type integer: \"x\"",
            None,
            None,
            false,
        ),
        ("PT402", "payment required", None, None, false),
        (
            "PGRST",
            r#"{"code":"123","message":"custom refusal","details":"d","hint":"h"}"#,
            Some(r#"{"status":418,"headers":{"X-Powered-By":"Nerds"}}"#),
            None,
            false,
        ),
    ];
    let answers: Vec<Value> = cases
        .iter()
        .map(|&(sqlstate, message, detail, hint, anon)| {
            let role = if anon { "anon" } else { "authenticated" };
            let label = format!("{sqlstate} as {role}");
            sent(
                &label,
                &from_pg_error(sqlstate, message, detail, hint, anon).to_answer(),
            )
        })
        .collect();
    insta::assert_json_snapshot!(answers);
}
