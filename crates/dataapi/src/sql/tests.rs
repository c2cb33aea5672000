//! Plans against a hand-built schema cache: behaviour first (what is refused, with which
//! error; what is bound), SQL structure where it carries the safety argument.

use crate::plan;
use crate::tests::{cache, code, get, req};

#[test]
fn values_are_bound_as_text_and_cast_to_the_base_type() {
    let p = get(
        "items",
        "id=eq.5&note=eq.abcdefgh&name=like.*a*&id=in.(1,%222%22)",
    )
    .unwrap();
    assert!(
        p.sql
            .contains("\"public\".\"items\".\"id\" = $1::text::integer"),
        "{}",
        p.sql
    );
    assert!(
        p.sql.contains("= $2::text::character varying"),
        "no typmod: {}",
        p.sql
    );
    assert!(p.sql.contains("LIKE $3::text::text"), "{}", p.sql);
    assert!(p.sql.contains("= ANY($4::text::integer[])"), "{}", p.sql);
    assert_eq!(
        p.params,
        [
            Some("5"),
            Some("abcdefgh"),
            Some("%a%"),
            Some("{\"1\",\"2\"}")
        ]
        .map(|v| v.map(String::from))
    );
    assert!(p.read_only);
}

#[test]
fn hostile_identifiers_stay_quoted_and_values_stay_out_of_the_sql() {
    let p = get(
        "a%22%3B%20drop%20table%20x%3B%20--",
        "select=%22we%5C%22ird%22&id=eq.1%3B%20drop%20table%20x",
    )
    .unwrap();
    assert!(
        p.sql
            .contains("FROM \"public\".\"a\"\"; drop table x; --\""),
        "{}",
        p.sql
    );
    assert!(p.sql.contains("\"we\"\"ird\""), "{}", p.sql);
    assert_eq!(p.params, [Some("1; drop table x".to_owned())]);
    // Every double quote in the SQL is balanced: no identifier escapes its quotes.
    assert_eq!(p.sql.matches('"').count() % 2, 0);
    for q in [
        "name=eq.'); drop table x; --",
        "name=eq.$1",
        "name=eq.$$x$$",
    ] {
        let p = get("items", q).unwrap();
        assert!(
            !p.sql.contains("drop") && !p.sql.contains("$$"),
            "{q}: {}",
            p.sql
        );
    }
}

#[test]
fn unknown_names_are_refused_as_postgrest_refuses_them() {
    let e = get("nope", "").unwrap_err();
    assert_eq!((e.status, e.code.as_str()), (404, "PGRST205"));
    assert_eq!(
        e.message,
        "Could not find the table 'public.nope' in the schema cache"
    );
    let e = get("items", "select=id,secret").unwrap_err();
    assert_eq!((e.status, e.code.as_str()), (400, "42703"));
    assert_eq!(e.message, "column items.secret does not exist");
    assert_eq!(code(get("items", "secret=eq.1")), (400, "42703".into()));
    assert_eq!(code(get("items", "order=secret")), (400, "42703".into()));
    assert_eq!(
        code(get("items", "or=(id.eq.1,secret.eq.2)")),
        (400, "42703".into())
    );
    let e = plan(
        &req("POST", "items", "", r#"{"id": 1, "secret": 2}"#),
        &cache(),
    )
    .unwrap_err();
    assert_eq!((e.status, e.code.as_str()), (400, "PGRST204"));
    assert_eq!(
        e.message,
        "Could not find the 'secret' column of 'items' in the schema cache"
    );
    let e = plan(&req("POST", "items", "on_conflict=name2", "{}"), &cache());
    assert!(e.is_ok(), "on_conflict without a resolution is not used");
    let mut r = req("POST", "items", "on_conflict=secret", "{}");
    r.prefer = Some("resolution=merge-duplicates");
    assert_eq!(code(plan(&r, &cache())), (400, "42703".into()));
}

#[test]
fn what_the_subset_does_not_do_is_refused_clearly() {
    // Embedding a table no foreign key relates is PostgREST's PGRST200.
    assert_eq!(
        code(get("items", "select=id,clients(*)")),
        (400, "PGRST200".into())
    );
    assert_eq!(
        code(get("items", "select=c:clients!inner(id)")),
        (400, "PGRST200".into())
    );
    assert_eq!(
        code(get("items", "select=count()")),
        (400, "PGRST123".into())
    );
    assert_eq!(
        code(get("items", "clients.id=eq.1")),
        (400, "PGRST108".into())
    );
    assert_eq!(
        code(get("items", "clients.order=id")),
        (400, "PGRST108".into())
    );
    assert_eq!(
        code(plan(&req("PUT", "items", "id=eq.1", "{}"), &cache())),
        (400, "PGRST127".into())
    );
    assert_eq!(
        code(plan(&req("TRACE", "items", "", ""), &cache())),
        (405, "PGRST117".into())
    );
    assert_eq!(
        code(plan(&req("PATCH", "rpc/add", "", ""), &cache())),
        (405, "PGRST101".into())
    );
    assert_eq!(code(get("a/b/c", "")), (404, "PGRST125".into()));
}

#[test]
fn grammar_errors_carry_postgrest_messages() {
    let e = get("items", "id=noop.0").unwrap_err();
    assert_eq!((e.status, e.code.as_str()), (400, "PGRST100"));
    assert_eq!(
        e.message,
        "\"failed to parse filter (noop.0)\" (line 1, column 1)"
    );
    let e = get("items", "select=id,").unwrap_err();
    assert!(
        e.message
            .starts_with("\"failed to parse select parameter (id,)\""),
        "{}",
        e.message
    );
    let e = get("items", "order=id.ac").unwrap_err();
    assert_eq!(
        e.message,
        "\"failed to parse order (id.ac)\" (line 1, column 4)"
    );
    let e = get("items", "or=(id.eq.1").unwrap_err();
    assert!(
        e.message
            .starts_with("\"failed to parse logic tree ((id.eq.1)\""),
        "{}",
        e.message
    );
}

#[test]
fn unfiltered_mutations_are_refused_like_pg_safeupdate() {
    let e = plan(&req("PATCH", "items", "", r#"{"name": "x"}"#), &cache()).unwrap_err();
    assert_eq!(
        (e.status, e.code.as_str(), e.message.as_str()),
        (400, "21000", "UPDATE requires a WHERE clause")
    );
    let e = plan(&req("DELETE", "items", "select=id", ""), &cache()).unwrap_err();
    assert_eq!(e.message, "DELETE requires a WHERE clause");
    assert_eq!(
        code(plan(
            &req("DELETE", "items", "id=gt.1&limit=1", ""),
            &cache()
        )),
        (400, "PGRST127".into())
    );
    assert!(
        plan(
            &req("DELETE", "items", "or=(id.eq.1,id.eq.2)", ""),
            &cache()
        )
        .is_ok()
    );
}

#[test]
fn bodies_are_checked_before_any_sql() {
    assert_eq!(
        code(plan(&req("POST", "items", "", "{nope"), &cache())),
        (400, "PGRST102".into())
    );
    let mut r = req("POST", "items", "", "{}");
    r.content_type = Some("text/plain");
    assert_eq!(code(plan(&r, &cache())), (400, "PGRST102".into()));
    let e = plan(
        &req("POST", "items", "", r#"[{"id": 1}, {"name": "x"}]"#),
        &cache(),
    )
    .unwrap_err();
    assert_eq!(e.message, "All object keys must match");
    let p = plan(
        &req(
            "POST",
            "items",
            "columns=id,name",
            r#"[{"id": 1}, {"name": "x"}]"#,
        ),
        &cache(),
    )
    .unwrap();
    assert!(
        p.sql
            .contains("INSERT INTO \"public\".\"items\" (\"id\", \"name\")"),
        "{}",
        p.sql
    );
    assert_eq!(p.params, [Some(r#"[{"id": 1}, {"name": "x"}]"#.to_owned())]);
}

#[test]
fn ranges_and_media_types_are_checked_up_front() {
    let mut r = req("GET", "items", "", "");
    r.range = Some("5-2");
    let e = plan(&r, &cache()).unwrap_err();
    assert_eq!((e.status, e.code.as_str()), (416, "PGRST103"));
    assert_eq!(code(get("items", "limit=-1")), (416, "PGRST103".into()));
    r.range = Some("0-9");
    assert!(
        plan(&r, &cache())
            .unwrap()
            .sql
            .contains("LIMIT 10 OFFSET 0")
    );
    r.method = "HEAD";
    assert!(
        !plan(&r, &cache()).unwrap().sql.contains("LIMIT"),
        "HEAD ignores Range"
    );
    let mut r = req("GET", "items", "", "");
    r.accept = Some("application/geo+json");
    let e = plan(&r, &cache()).unwrap_err();
    assert_eq!(
        (e.status, e.message.as_str()),
        (
            406,
            "None of these media types are available: application/geo+json"
        )
    );
    r.accept = Some("application/geo+json;q=0.5, application/json");
    assert!(plan(&r, &cache()).is_ok());
    r.prefer = Some("handling=strict, bogus=1");
    assert_eq!(code(plan(&r, &cache())), (400, "PGRST122".into()));
}

#[test]
fn functions_are_found_by_their_argument_names() {
    let p = plan(&req("GET", "rpc/add", "a=1&b=2", ""), &cache()).unwrap();
    assert!(
        p.sql
            .contains("\"public\".\"add\"(\"a\" := $1::text::integer, \"b\" := $2::text::integer)"),
        "{}",
        p.sql
    );
    let p = plan(&req("POST", "rpc/add", "", r#"{"a": 1, "b": 2}"#), &cache()).unwrap();
    assert!(
        p.sql
            .contains("json_to_record($1::text::json) AS pgrst_args(\"a\" integer, \"b\" integer)"),
        "{}",
        p.sql
    );
    assert!(!p.read_only);
    let e = plan(&req("POST", "rpc/add", "", r#"{"a": 1}"#), &cache()).unwrap_err();
    assert_eq!((e.status, e.code.as_str()), (404, "PGRST202"));
    assert_eq!(
        e.message,
        "Could not find the function public.add(a) in the schema cache"
    );
    assert_eq!(
        e.details.as_deref(),
        Some(
            "Searched for the function public.add with parameter a or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache."
        )
    );
    let e = plan(&req("GET", "rpc/gone", "", ""), &cache()).unwrap_err();
    assert_eq!(
        e.message,
        "Could not find the function public.gone without parameters in the schema cache"
    );
}
