//! Shared fixtures (a hand-built schema cache, requests), and the tests of answers, PostgreSQL
//! error mapping and query-string decoding.

use crate::query::{decode_pairs, form_decode};
use crate::sql::array_literal;
use crate::{
    Argument, Column, Function, Plan, PlanRow, RestError, RestRequest, Returns, SchemaCache, Table,
    Volatility, from_pg_error, plan, respond,
};

pub(crate) fn col(name: &str, ty: &str) -> Column {
    Column {
        name: name.into(),
        type_name: ty.into(),
        nullable: true,
        has_default: false,
        default: None,
    }
}

pub(crate) fn table(name: &str, columns: Vec<Column>) -> Table {
    Table {
        schema: "public".into(),
        name: name.into(),
        columns,
        primary_key: vec!["id".into()],
        insertable: true,
        updatable: true,
        deletable: true,
        computed: Vec::new(),
    }
}

pub(crate) fn cache() -> SchemaCache {
    let arg = |name: &str| Argument {
        name: name.into(),
        type_name: "integer".into(),
        required: true,
        variadic: false,
    };
    SchemaCache::from_parts(
        vec![
            table(
                "items",
                vec![
                    col("id", "integer"),
                    col("name", "text"),
                    col("note", "character varying"),
                ],
            ),
            table(
                "a\"; drop table x; --",
                vec![col("id", "integer"), col("we\"ird", "text")],
            ),
        ],
        vec![
            Function {
                schema: "public".into(),
                name: "add".into(),
                args: vec![arg("a"), arg("b")],
                returns_set: false,
                returns: Returns::Scalar("integer".into()),
                returns_table: None,
                volatility: Volatility::Immutable,
            },
            Function {
                schema: "public".into(),
                name: "nothing".into(),
                args: vec![],
                returns_set: false,
                returns: Returns::Void,
                returns_table: None,
                volatility: Volatility::Volatile,
            },
        ],
    )
}

pub(crate) fn get(path: &str, query: &str) -> Result<Plan, RestError> {
    plan(
        &RestRequest {
            method: "GET",
            path,
            query,
            ..RestRequest::default()
        },
        &cache(),
    )
}

pub(crate) fn req<'a>(
    method: &'a str,
    path: &'a str,
    query: &'a str,
    body: &'a str,
) -> RestRequest<'a> {
    RestRequest {
        method,
        path,
        query,
        body: body.as_bytes(),
        ..RestRequest::default()
    }
}

pub(crate) fn code(r: Result<Plan, RestError>) -> (u16, String) {
    let e = r.unwrap_err();
    (e.status, e.code)
}

fn row(total: Option<i64>, page_total: i64, body: &str) -> PlanRow {
    PlanRow {
        total,
        page_total,
        body: Some(body.to_owned()),
        inserted: None,
    }
}

#[test]
fn answers_follow_postgrest_statuses_and_content_range() {
    let mut r = req("GET", "items", "", "");
    r.prefer = Some("count=exact");
    r.range = Some("0-1");
    let p = plan(&r, &cache()).unwrap();
    let a = respond(&p, row(Some(5), 2, "[1,2]")).unwrap();
    assert_eq!((a.status, a.header("Content-Range")), (206, Some("0-1/5")));
    let a = respond(&p, row(Some(2), 2, "[1,2]")).unwrap();
    assert_eq!((a.status, a.header("Content-Range")), (200, Some("0-1/2")));
    let a = respond(&p, row(Some(0), 0, "[]")).unwrap();
    assert_eq!((a.status, a.header("Content-Range")), (200, Some("*/0")));
    let p = plan(&req("GET", "items", "offset=10", ""), &cache()).unwrap();
    assert_eq!(
        respond(&p, row(None, 0, "[]"))
            .unwrap()
            .header("Content-Range"),
        Some("*/*")
    );
    let mut r = req("GET", "items", "offset=10", "");
    r.prefer = Some("count=exact");
    let a = respond(&plan(&r, &cache()).unwrap(), row(Some(3), 0, "[]")).unwrap();
    assert_eq!((a.status, a.header("Content-Range")), (416, Some("*/3")));
    assert!(
        a.body
            .unwrap()
            .contains("An offset of 10 was requested, but there are only 3 rows.")
    );

    let mut r = req("GET", "items", "", "");
    r.accept = Some("application/vnd.pgrst.object+json");
    let p = plan(&r, &cache()).unwrap();
    let e = respond(&p, row(None, 2, "{}")).unwrap_err();
    assert_eq!((e.status, e.code.as_str()), (406, "PGRST116"));
    assert_eq!(e.details.as_deref(), Some("The result contains 2 rows"));
    assert_eq!(respond(&p, row(None, 1, "{}")).unwrap().status, 200);

    let p = plan(&req("POST", "items", "", r#"{"id": 1}"#), &cache()).unwrap();
    let a = respond(
        &p,
        PlanRow {
            total: None,
            page_total: 1,
            body: None,
            inserted: None,
        },
    )
    .unwrap();
    assert_eq!(
        (a.status, a.body.as_deref(), a.header("Content-Range")),
        (201, None, Some("*/*"))
    );
    let p = plan(
        &req("PATCH", "items", "id=eq.1", r#"{"name": "x"}"#),
        &cache(),
    )
    .unwrap();
    let a = respond(
        &p,
        PlanRow {
            total: None,
            page_total: 3,
            body: None,
            inserted: None,
        },
    )
    .unwrap();
    assert_eq!((a.status, a.header("Content-Range")), (204, Some("0-2/*")));
    let p = plan(&req("POST", "rpc/nothing", "", ""), &cache()).unwrap();
    let a = respond(
        &p,
        PlanRow {
            total: None,
            page_total: 1,
            body: None,
            inserted: None,
        },
    )
    .unwrap();
    assert_eq!((a.status, a.body), (204, None));
}

#[test]
fn postgres_errors_map_to_postgrest_statuses() {
    let status =
        |code: &str, msg: &str, anon: bool| from_pg_error(code, msg, None, None, anon).status;
    assert_eq!(status("23505", "duplicate key", true), 409);
    assert_eq!(status("23503", "fk", true), 409);
    assert_eq!(status("42501", "permission denied", true), 401);
    assert_eq!(status("42501", "permission denied", false), 403);
    assert_eq!(status("42883", "function x() does not exist", false), 404);
    assert_eq!(status("42P01", "relation does not exist", false), 404);
    assert_eq!(status("P0001", "raised", false), 400);
    assert_eq!(status("22P02", "invalid input", false), 400);
    assert_eq!(
        status("21000", "UPDATE requires a WHERE clause", false),
        400
    );
    assert_eq!(status("21000", "more than one row", false), 500);
    assert_eq!(
        status(
            "57014",
            "canceling statement due to statement timeout",
            false
        ),
        500
    );
    assert_eq!(status("25006", "read-only transaction", false), 405);
    assert_eq!(status("08006", "connection", false), 503);
    assert_eq!(status("PT418", "teapot", false), 418);
    let e = from_pg_error(
        "23505",
        "dup",
        Some("Key (id)=(1) exists."),
        Some("h"),
        false,
    );
    assert_eq!(
        e.body(),
        r#"{"code":"23505","details":"Key (id)=(1) exists.","hint":"h","message":"dup"}"#
    );
    let e = from_pg_error(
        "PGRST",
        r#"{"code":"123","message":"custom"}"#,
        Some(r#"{"status":402,"headers":{}}"#),
        None,
        false,
    );
    assert_eq!(
        (e.status, e.code.as_str(), e.message.as_str()),
        (402, "123", "custom")
    );
    assert_eq!(
        e.to_answer().header("Proxy-Status"),
        Some("PostgREST; error=123")
    );
}

#[test]
fn the_query_string_decodes_as_postgrest_decodes_it() {
    assert_eq!(form_decode("a+b%20c%2Bd"), "a b c+d");
    assert_eq!(form_decode("100%"), "100%");
    assert_eq!(form_decode("%E2%9C%93"), "\u{2713}");
    assert_eq!(
        decode_pairs("select=id&name=in.(%22a+b%22,c);limit=1&flag"),
        [("select", "id"), ("name", "in.(\"a b\",c)"), ("limit", "1")]
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
    );
    assert_eq!(
        array_literal(&["a\"b", "c\\d", "e\0f"]),
        r#"{"a\"b","c\\d","ef"}"#
    );
}
