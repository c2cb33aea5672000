//! The OpenAPI document as people read it in Swagger UI and as Schemathesis' `examples`
//! phase sends it: every schema a request or an answer carries has an example, and every
//! property says what it is. Walked on the served document, so a route added later is held
//! to the same rule without anyone listing it here.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use actix_web::{App, test};
use serde_json::Value;

async fn document() -> Value {
    let world = quire_testkit::World::builder().build().await;
    let app =
        test::init_service(App::new().configure(quire_http::configure(world.app_state()))).await;
    test::call_and_read_body_json(
        &app,
        test::TestRequest::get()
            .uri("/api/openapi.json")
            .to_request(),
    )
    .await
}

/// The component a `$ref` names, when `schema` is one.
fn referenced<'a>(doc: &'a Value, schema: &Value) -> Option<&'a Value> {
    let name = schema.get("$ref")?.as_str()?.rsplit('/').next()?;
    doc.pointer(&format!("/components/schemas/{name}"))
}

/// Whether a client (Swagger UI, Schemathesis) can build an example of `schema`: it carries
/// one, or it is a reference to, an array of, or an object made of schemas that can.
fn has_example(doc: &Value, schema: &Value, depth: usize) -> bool {
    if depth > 16 {
        return false;
    }
    if schema.get("example").is_some() || schema.get("examples").is_some() {
        return true;
    }
    if let Some(target) = referenced(doc, schema) {
        return has_example(doc, target, depth + 1);
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        if let Some(parts) = schema.get(key).and_then(Value::as_array) {
            return parts.iter().any(|p| {
                p.get("type").and_then(Value::as_str) != Some("null")
                    && has_example(doc, p, depth + 1)
            });
        }
    }
    if let Some(items) = schema.get("items") {
        return has_example(doc, items, depth + 1);
    }
    match schema.get("properties").and_then(Value::as_object) {
        Some(props) if !props.is_empty() => props.values().all(|p| has_example(doc, p, depth + 1)),
        _ => false,
    }
}

/// Each property (of `schema` and of the objects inline in it) without a description, as
/// `where.property`.
fn undescribed(schema: &Value, at: &str, out: &mut Vec<String>) {
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            if prop
                .get("description")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                out.push(format!("{at}.{name}"));
            }
            undescribed(prop, &format!("{at}.{name}"), out);
        }
    }
    if let Some(items) = schema.get("items") {
        undescribed(items, &format!("{at}[]"), out);
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        for part in schema
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            undescribed(part, at, out);
        }
    }
}

/// The request and response bodies of every operation, as (`METHOD path what`, media type
/// object).
fn bodies(doc: &Value) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            let op_name = format!("{} {path}", method.to_uppercase());
            let request = op
                .pointer("/requestBody/content")
                .and_then(Value::as_object);
            for (media, body) in request.into_iter().flatten() {
                out.push((format!("{op_name} request {media}"), body));
            }
            let responses = op.get("responses").and_then(Value::as_object);
            for (status, answer) in responses.into_iter().flatten() {
                let content = answer.get("content").and_then(Value::as_object);
                for (media, body) in content.into_iter().flatten() {
                    out.push((format!("{op_name} {status} {media}"), body));
                }
            }
        }
    }
    out
}

#[actix_web::test]
async fn every_schema_has_an_example_and_every_property_a_description() {
    let doc = document().await;
    let mut missing = Vec::new();
    for (name, schema) in doc["components"]["schemas"].as_object().unwrap() {
        if !has_example(&doc, schema, 0) {
            missing.push(format!("schema {name} has no example"));
        }
        let mut props = Vec::new();
        undescribed(schema, name, &mut props);
        missing.extend(
            props
                .into_iter()
                .map(|p| format!("property {p} has no description")),
        );
    }
    for (name, body) in bodies(&doc) {
        let schema = body.get("schema").unwrap_or(&Value::Null);
        let example = body.get("example").is_some() || body.get("examples").is_some();
        if !example && !has_example(&doc, schema, 0) {
            missing.push(format!("body {name} has no example"));
        }
        if schema.get("$ref").is_none() {
            let mut props = Vec::new();
            undescribed(schema, &name, &mut props);
            missing.extend(
                props
                    .into_iter()
                    .map(|p| format!("property {p} has no description")),
            );
        }
    }
    assert!(
        missing.is_empty(),
        "{} gaps in the OpenAPI document:\n{}",
        missing.len(),
        missing.join("\n")
    );
}
