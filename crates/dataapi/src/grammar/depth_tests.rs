//! Inputs nested far deeper than any schema needs, sent to every production that nests: each
//! is refused with a 400, and none may exhaust the stack (a test thread's is 2 MiB, as an
//! actix worker's is; 10,000 levels overflowed it before the bound).

use serde_json::Value;

use super::*;
use crate::embed::tests::get;

const DEEP: usize = 10_000;

fn refused(path: &str, query: &str) -> (u16, Value) {
    let e = get(path, query).expect_err(query.get(..60).unwrap_or(query));
    let body = serde_json::from_str(&e.body()).unwrap_or_default();
    (e.status, body)
}

/// `and(and(…a.eq.1…))` nested `n` deep, each level opened by `open`.
fn tree(open: &str, n: usize) -> String {
    format!("({}a.eq.1{})", open.repeat(n - 1), ")".repeat(n - 1))
}

#[test]
fn logic_trees_nest_32_deep_and_no_deeper() {
    assert!(logic_tree("or", &tree("and(", 32)).is_ok());
    let e = logic_tree("or", &tree("and(", 33)).unwrap_err();
    // The column of the 33rd opening parenthesis.
    assert_eq!(
        (e.column, e.details.as_str()),
        (3 + 31 * 4 + 3 + 1, "logic trees nested more than 32 deep")
    );
    for (op, open) in [
        ("or", "and("),
        ("and", "or("),
        ("not.or", "not.and("),
        ("or", "not.or(and("),
    ] {
        let e = logic_tree(op, &tree(open, DEEP)).unwrap_err();
        assert_eq!(
            e.details, "logic trees nested more than 32 deep",
            "{op}={open}"
        );
    }
    // A wide tree is no deep one.
    let wide = format!("({})", vec!["a.eq.1"; DEEP].join(","));
    assert!(logic_tree("or", &wide).is_ok());
}

#[test]
fn resources_nest_32_deep_and_no_deeper() {
    for open in ["a(", "...a(", "x:a!inner(", "a!fk("] {
        let deep = format!("{}id{}", open.repeat(DEEP), ")".repeat(DEEP));
        let e = select(&deep).unwrap_err();
        assert_eq!(e.details, "resources nested more than 32 deep", "{open}");
    }
}

#[test]
fn a_request_nesting_too_deep_anywhere_is_a_400_with_postgrest_s_shape() {
    let deep_tree = tree("and(", DEEP);
    let queries = [
        format!("or={deep_tree}"),
        format!("not.and={}", tree("not.or(", DEEP)),
        format!("select=username,messages(id)&messages.or={deep_tree}"),
        format!("select={}id{}", "messages(".repeat(DEEP), ")".repeat(DEEP)),
    ];
    for q in &queries {
        let (status, body) = refused("users", q);
        assert_eq!((status, &body["code"]), (400, &Value::from("PGRST100")));
        let message = body["message"].as_str().unwrap_or_default();
        assert!(message.starts_with("\"failed to parse "), "{message:.80}");
        assert!(message.ends_with(')'), "{message:.80}");
        let details = body["details"].as_str().unwrap_or_default();
        assert!(details.ends_with("nested more than 32 deep"), "{details}");
        assert_eq!(body["hint"], Value::Null);
    }
}

#[test]
fn a_deep_path_to_an_embedded_resource_names_one_that_is_not_embedded() {
    let path = vec!["messages"; DEEP].join(".");
    for q in [
        format!("select=username,messages(id)&{path}.id=eq.1"),
        format!("select=username,messages(id)&{path}.order=id"),
        format!("select=username,messages(id)&{path}.limit=1"),
        format!("select=username,messages(id)&{path}.or=(id.eq.1)"),
    ] {
        let (status, body) = refused("users", &q);
        assert_eq!(
            (status, body["code"].as_str()),
            (400, Some("PGRST108")),
            "{q:.80}"
        );
    }
}

#[test]
fn a_long_json_path_is_no_recursion() {
    let path = "->a".repeat(DEEP);
    let plan = get("users", &format!("select=status{path}")).map(|p| p.params.len());
    assert_eq!(plan.ok(), Some(DEEP));
}
