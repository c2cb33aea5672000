//! Functions called with their one unnamed argument, overloads told apart as PostgREST
//! tells them apart, and `max-affected` on a call.

use crate::tests::cache;
use crate::{
    Argument, Function, Plan, RestError, RestRequest, Returns, SchemaCache, Volatility, plan,
};

fn function(name: &str, args: &[(&str, &str, bool)], returns: &str) -> Function {
    Function {
        schema: "public".into(),
        name: name.into(),
        args: args
            .iter()
            .map(|(n, t, required)| Argument {
                name: (*n).into(),
                type_name: (*t).into(),
                required: *required,
                variadic: false,
            })
            .collect(),
        returns_set: false,
        returns: Returns::Scalar(returns.into()),
        returns_table: None,
        volatility: Volatility::Volatile,
    }
}

/// PostgREST's fixture `overloaded_unnamed_param` and postgrest-js's overloads.
fn overloads() -> SchemaCache {
    SchemaCache::from_parts(
        Vec::new(),
        vec![
            function("over", &[("", "json", true)], "json"),
            function("over", &[("", "bytea", true)], "bytea"),
            function("over", &[("", "text", true)], "text"),
            function("over", &[], "integer"),
            function(
                "over",
                &[("x", "integer", true), ("y", "integer", true)],
                "integer",
            ),
            function("with_default", &[], "integer"),
            function("with_default", &[("", "text", false)], "text"),
            function("raw_jsonb", &[("", "jsonb", true)], "integer"),
        ],
    )
}

fn post(path: &str, content_type: Option<&str>, body: &[u8]) -> Result<Plan, RestError> {
    plan(
        &RestRequest {
            method: "POST",
            path,
            content_type,
            body,
            ..RestRequest::default()
        },
        &overloads(),
    )
}

#[test]
fn the_one_unnamed_argument_takes_the_body_as_it_came() {
    // Named arguments first: `{}` is the function without any, `{x, y}` the pair.
    let p = post("rpc/over", None, b"{}").unwrap();
    assert!(p.sql.contains("\"public\".\"over\"()"), "{}", p.sql);
    let p = post("rpc/over", None, br#"{"x": 1, "y": 2}"#).unwrap();
    assert!(p.sql.contains("\"x\" := pgrst_args.\"x\""), "{}", p.sql);
    // Keys no overload names: the json one takes the whole body.
    let p = post("rpc/over", None, br#"{"A": 1, "B": 2}"#).unwrap();
    assert!(
        p.sql.contains("\"public\".\"over\"($1::text::json)"),
        "{}",
        p.sql
    );
    assert_eq!(p.params, [Some(r#"{"A": 1, "B": 2}"#.to_owned())]);
    let p = post("rpc/over", Some("text/plain"), b"unnamed text arg").unwrap();
    assert!(
        p.sql.contains("\"public\".\"over\"($1::text::text)"),
        "{}",
        p.sql
    );
    assert_eq!(p.params, [Some("unnamed text arg".to_owned())]);
    let p = post(
        "rpc/over",
        Some("application/octet-stream"),
        &[0, 0xff, 0x10],
    )
    .unwrap();
    assert!(
        p.sql.contains("\"public\".\"over\"($1::text::bytea)"),
        "{}",
        p.sql
    );
    assert_eq!(p.params, [Some("\\x00ff10".to_owned())]);
    // jsonb takes a JSON body too, any JSON.
    let p = post("rpc/raw_jsonb", None, b"[1, 2]").unwrap();
    assert!(
        p.sql.contains("\"public\".\"raw_jsonb\"($1::text::jsonb)"),
        "{}",
        p.sql
    );
    // postgrest-js sends `{"": v}`: the key names the unnamed argument, which gets the
    // body whole, as PostgREST gives it.
    let p = post("rpc/with_default", None, br#"{"": "custom text"}"#).unwrap();
    assert_eq!(p.params, [Some(r#"{"": "custom text"}"#.to_owned())]);
    // `GET` never falls back to the unnamed argument.
    let p = plan(
        &RestRequest {
            method: "GET",
            path: "rpc/over",
            content_type: Some("text/plain"),
            ..RestRequest::default()
        },
        &overloads(),
    )
    .unwrap();
    assert!(p.sql.contains("\"public\".\"over\"()"), "{}", p.sql);
}

#[test]
fn calls_no_overload_takes_are_refused_in_postgrest_words() {
    let e = post("rpc/over", Some("text/csv"), b"a,b\n1,2\n").unwrap_err();
    assert_eq!((e.status, e.code.as_str()), (404, "PGRST202"));
    assert_eq!(
        e.message,
        "Could not find the function public.over(a, b) in the schema cache"
    );
    assert_eq!(
        e.details.as_deref(),
        Some(
            "Searched for the function public.over with parameters a, b, but no matches were found in the schema cache."
        )
    );
    assert_eq!(
        e.hint.as_deref(),
        Some("Perhaps you meant to call the function public.over(x, y)")
    );
    let e = post("rpc/raw_jsonb", Some("text/plain"), b"x").unwrap_err();
    assert_eq!(
        (e.message.as_str(), e.hint.as_deref()),
        (
            "Could not find the function public.raw_jsonb in the schema cache",
            None
        )
    );
    assert_eq!(
        e.details.as_deref(),
        Some(
            "Searched for the function public.raw_jsonb with a single unnamed text parameter, but no matches were found in the schema cache."
        )
    );
    // A function with no arguments does not take a raw body, nor does one of another type.
    let e = post("rpc/over", Some("text/xml"), b"<a/>").unwrap_err();
    assert_eq!(
        e.details.as_deref(),
        Some(
            "Searched for the function public.over with a single unnamed xml parameter, but no matches were found in the schema cache."
        )
    );
    // An unknown name hints at a close one.
    let e = post("rpc/raw_jsob", None, b"{}").unwrap_err();
    assert_eq!(
        e.hint.as_deref(),
        Some("Perhaps you meant to call the function public.raw_jsonb")
    );
}

#[test]
fn overloads_a_call_cannot_tell_apart_are_listed_in_postgrest_order() {
    // No argument: the function without any, and the one whose unnamed one has a default.
    let e = post("rpc/with_default", None, b"").unwrap_err();
    assert_eq!((e.status, e.code.as_str()), (300, "PGRST203"));
    assert_eq!(
        e.message,
        "Could not choose the best candidate function between: public.with_default(), \
         public.with_default( => text)"
    );
    // Of as many arguments, by name then type, whatever order they were made in.
    let made = SchemaCache::from_parts(
        Vec::new(),
        vec![
            function("pick", &[("a", "text", true)], "integer"),
            function("pick", &[("a", "integer", true)], "text"),
        ],
    );
    let e = plan(
        &RestRequest {
            method: "POST",
            path: "rpc/pick",
            body: br#"{"a": 1}"#,
            ..RestRequest::default()
        },
        &made,
    )
    .unwrap_err();
    assert_eq!(
        e.message,
        "Could not choose the best candidate function between: public.pick(a => integer), \
         public.pick(a => text)"
    );
    assert_eq!(
        e.hint.as_deref(),
        Some(
            "Try renaming the parameters or the function itself in the database so function overloading can be resolved"
        )
    );
    assert_eq!(e.details, None);
}

#[test]
fn max_affected_on_a_call_needs_a_set() {
    let strict = |path: &str| {
        plan(
            &RestRequest {
                method: "GET",
                path,
                query: "a=1&b=2",
                prefer: Some("handling=strict, max-affected=5"),
                ..RestRequest::default()
            },
            &cache(),
        )
    };
    let e = strict("rpc/add").unwrap_err();
    assert_eq!((e.status, e.code.as_str()), (400, "PGRST128"));
    let lenient = plan(
        &RestRequest {
            method: "GET",
            path: "rpc/add",
            query: "a=1&b=2",
            prefer: Some("handling=lenient, max-affected=5"),
            ..RestRequest::default()
        },
        &cache(),
    );
    assert!(lenient.is_ok());
}
