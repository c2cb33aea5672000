//! JSON paths and computed fields in `select`, filters and `order`: how they are written,
//! what they are called in the answer, and what is bound.

use crate::tests::{cache, col, get, table};
use crate::{Computed, ForeignKey, Plan, RestError, RestRequest, SchemaCache, plan};

fn people() -> SchemaCache {
    let mut people = table(
        "people",
        vec![
            col("id", "integer"),
            col("first", "text"),
            col("data", "jsonb"),
            col("doc", "json"),
            col("tags", "text[]"),
        ],
    );
    people.computed = vec![
        Computed {
            name: "full_name".into(),
            type_name: "text".into(),
        },
        // A column of the same name wins.
        Computed {
            name: "first".into(),
            type_name: "integer".into(),
        },
    ];
    SchemaCache::from_parts(vec![people], Vec::new())
}

fn read(query: &str) -> Result<Plan, RestError> {
    plan(
        &RestRequest {
            method: "GET",
            path: "people",
            query,
            ..RestRequest::default()
        },
        &people(),
    )
}

#[test]
fn a_json_path_is_named_by_its_last_key_and_binds_its_keys() {
    let p = read("select=id,data->a->>b,v:data->>c::int,doc->0,data->x->1,tags->0").unwrap();
    assert!(
        p.sql.contains(
            "(\"public\".\"people\".\"data\"->$1::text->>$2::text) AS \"b\", \
             CAST((\"public\".\"people\".\"data\"->>$3::text) AS int) AS \"v\", \
             (\"public\".\"people\".\"doc\"->$4::text::integer) AS \"doc\", \
             (\"public\".\"people\".\"data\"->$5::text->$6::text::integer) AS \"x\", \
             (to_jsonb(\"public\".\"people\".\"tags\")->$7::text::integer) AS \"tags\""
        ),
        "{}",
        p.sql
    );
    assert_eq!(
        p.params,
        ["a", "b", "c", "+0", "x", "+1", "+0"].map(|v| Some(v.to_owned()))
    );
}

#[test]
fn a_json_path_filters_and_orders_as_its_type() {
    let p = read("data->>b=eq.x&data->a=cs.{\"k\":1}&doc->n=eq.1&order=data->>b.desc").unwrap();
    // `->>` is text; `->` on jsonb is jsonb, on json json.
    assert!(
        p.sql
            .contains("(\"public\".\"people\".\"data\"->>$1::text) = $2::text::text"),
        "{}",
        p.sql
    );
    assert!(
        p.sql
            .contains("(\"public\".\"people\".\"data\"->$3::text) @> $4::text::jsonb"),
        "{}",
        p.sql
    );
    assert!(
        p.sql
            .contains("(\"public\".\"people\".\"doc\"->$5::text) = $6::text::json"),
        "{}",
        p.sql
    );
    assert!(
        p.sql
            .contains("ORDER BY (\"public\".\"people\".\"data\"->>$7::text) DESC"),
        "{}",
        p.sql
    );
    assert_eq!(p.params[3].as_deref(), Some("{\"k\":1}"));
    // Negative indexes count from the end, as in PostgreSQL.
    let p = read("data->-1=eq.2").unwrap();
    assert_eq!(p.params[0].as_deref(), Some("-1"));
    // A path on a name that is neither a column nor a computed field is refused.
    let e = read("select=nope->a").unwrap_err();
    assert_eq!((e.status, e.code.as_str()), (400, "42703"));
    // A plain read's SQL is what it was: no JSON path, no parameter.
    let p = get("items", "select=id,name").unwrap();
    assert!(
        p.sql.contains(
            "SELECT \"public\".\"items\".\"id\" AS \"id\", \"public\".\"items\".\"name\" AS \"name\" FROM \"public\".\"items\")"
        ),
        "{}",
        p.sql
    );
    assert!(p.params.is_empty());
}

#[test]
fn a_computed_field_is_a_call_on_the_row_wherever_a_column_may_be() {
    let p =
        read("select=id,full_name,n:full_name::text&full_name=ilike.*a*&order=full_name").unwrap();
    let call = "\"public\".\"full_name\"(\"public\".\"people\".*)";
    assert!(
        p.sql.contains(&format!("{call} AS \"full_name\"")),
        "{}",
        p.sql
    );
    assert!(p.sql.contains(&format!("CAST({call} AS text) AS \"n\"")));
    assert!(
        p.sql
            .contains(&format!("WHERE {call} ILIKE $1::text::text"))
    );
    assert!(p.sql.contains(&format!("ORDER BY {call}")));
    // The column wins over a function of the same name.
    let p = read("select=first").unwrap();
    assert!(
        p.sql
            .contains("\"public\".\"people\".\"first\" AS \"first\"")
    );
    // Over a write's returned rows, the row is cast back to the table's type.
    let p = plan(
        &RestRequest {
            method: "PATCH",
            path: "people",
            query: "id=eq.1&select=full_name",
            prefer: Some("return=representation"),
            body: br#"{"first": "x"}"#,
            ..RestRequest::default()
        },
        &people(),
    )
    .unwrap();
    assert!(
        p.sql.contains(
            "\"public\".\"full_name\"(pgrst_source::\"public\".\"people\") AS \"full_name\""
        ),
        "{}",
        p.sql
    );
    // A table without computed fields knows none.
    let e = get("items", "select=full_name").unwrap_err();
    assert_eq!(e.message, "column items.full_name does not exist");
    assert!(cache().table("items").unwrap().computed.is_empty());
}

#[test]
fn a_computed_field_of_an_embedded_resource_is_called_on_its_row() {
    let mut messages = table("messages", vec![col("id", "integer"), col("body", "text")]);
    messages.columns.push(col("author", "text"));
    messages.computed = vec![Computed {
        name: "blurb".into(),
        type_name: "text".into(),
    }];
    let mut users = table("users", vec![col("name", "text")]);
    users.primary_key = vec!["name".into()];
    let cache = SchemaCache::from_parts(vec![users, messages], Vec::new()).with_relationships(
        &[ForeignKey {
            name: "messages_author_fkey".into(),
            table: "messages".into(),
            columns: vec!["author".into()],
            foreign_table: "users".into(),
            foreign_columns: vec!["name".into()],
            one_to_one: false,
        }],
        &[],
    );
    let p = plan(
        &RestRequest {
            method: "GET",
            path: "users",
            query: "select=name,messages(id,blurb)",
            ..RestRequest::default()
        },
        &cache,
    )
    .unwrap();
    assert!(
        p.sql
            .contains("\"public\".\"blurb\"(\"pgrst_t1\".*) AS \"blurb\""),
        "{}",
        p.sql
    );
}
