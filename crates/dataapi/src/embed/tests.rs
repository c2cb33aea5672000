//! Relationships and embedding plans against a hand-built chat schema: every kind of
//! relationship, each hint, and the refusals with their statuses and bodies.

use serde_json::{Value, json};

use crate::schema::Cardinality;
use crate::tests::{col, table};
use crate::{
    Argument, ForeignKey, Function, Plan, RestError, RestRequest, Returns, SchemaCache, Table,
    ViewColumn, Volatility, plan,
};

fn keyed(name: &str, key: &[&str], columns: &[&str]) -> Table {
    let mut t = table(name, columns.iter().map(|c| col(c, "text")).collect());
    t.primary_key = key.iter().map(|k| (*k).to_owned()).collect();
    t
}

fn fk(name: &str, table: &str, cols: &[&str], foreign: &str, fcols: &[&str]) -> ForeignKey {
    ForeignKey {
        name: name.into(),
        table: table.into(),
        columns: cols.iter().map(|c| (*c).to_owned()).collect(),
        foreign_table: foreign.into(),
        foreign_columns: fcols.iter().map(|c| (*c).to_owned()).collect(),
        one_to_one: false,
    }
}

fn traced(view: &str, table: &str, cols: &[(&str, &str)]) -> Vec<ViewColumn> {
    cols.iter()
        .map(|(v, t)| ViewColumn {
            view: view.into(),
            column: (*v).into(),
            table: table.into(),
            table_column: (*t).into(),
        })
        .collect()
}

/// users, channels with one-to-one details, messages, best friends (three keys to users),
/// collections in themselves, products and categories through a junction, and two views.
pub(crate) fn chat() -> SchemaCache {
    let mut views = keyed("active_users", &[], &["name", "status"]);
    views.insertable = false;
    let tables = vec![
        keyed("users", &["username"], &["username", "status"]),
        keyed("channels", &["id"], &["id", "slug"]),
        keyed("channel_details", &["id"], &["id", "details"]),
        keyed(
            "messages",
            &["id"],
            &["id", "message", "username", "channel_id"],
        ),
        keyed(
            "best_friends",
            &["id"],
            &["id", "first_user", "second_user", "third_wheel"],
        ),
        keyed("collections", &["id"], &["id", "description", "parent_id"]),
        keyed("products", &["id"], &["id", "name"]),
        keyed("categories", &["id"], &["id", "name"]),
        keyed(
            "product_categories",
            &["product_id", "category_id"],
            &["product_id", "category_id"],
        ),
        views,
        keyed("recent_messages", &[], &["id", "message", "author"]),
    ];
    let mut details = fk(
        "channel_details_id_fkey",
        "channel_details",
        &["id"],
        "channels",
        &["id"],
    );
    details.one_to_one = true;
    let fks = vec![
        details,
        fk(
            "messages_username_fkey",
            "messages",
            &["username"],
            "users",
            &["username"],
        ),
        fk(
            "messages_channel_id_fkey",
            "messages",
            &["channel_id"],
            "channels",
            &["id"],
        ),
        fk(
            "best_friends_first_user_fkey",
            "best_friends",
            &["first_user"],
            "users",
            &["username"],
        ),
        fk(
            "best_friends_second_user_fkey",
            "best_friends",
            &["second_user"],
            "users",
            &["username"],
        ),
        fk(
            "best_friends_third_wheel_fkey",
            "best_friends",
            &["third_wheel"],
            "users",
            &["username"],
        ),
        fk(
            "collections_parent_id_fkey",
            "collections",
            &["parent_id"],
            "collections",
            &["id"],
        ),
        fk(
            "product_categories_product_id_fkey",
            "product_categories",
            &["product_id"],
            "products",
            &["id"],
        ),
        fk(
            "product_categories_category_id_fkey",
            "product_categories",
            &["category_id"],
            "categories",
            &["id"],
        ),
    ];
    let mut view_columns = traced(
        "active_users",
        "users",
        &[("name", "username"), ("status", "status")],
    );
    view_columns.extend(traced(
        "recent_messages",
        "messages",
        &[("id", "id"), ("message", "message"), ("author", "username")],
    ));
    let user_messages = Function {
        schema: "public".into(),
        name: "user_messages".into(),
        args: vec![Argument {
            name: "who".into(),
            type_name: "text".into(),
            required: true,
            variadic: false,
        }],
        returns_set: true,
        returns: Returns::Composite(
            ["id", "message", "username", "channel_id"]
                .map(|c| col(c, "text"))
                .to_vec(),
        ),
        returns_table: Some("messages".into()),
        volatility: Volatility::Stable,
    };
    SchemaCache::from_parts(tables, vec![user_messages]).with_relationships(&fks, &view_columns)
}

pub(crate) fn get(path: &str, query: &str) -> Result<Plan, RestError> {
    plan(
        &RestRequest {
            method: "GET",
            path,
            query,
            ..RestRequest::default()
        },
        &chat(),
    )
}

fn body(e: &RestError) -> Value {
    serde_json::from_str(&e.body()).unwrap()
}

#[test]
fn every_kind_of_relationship_is_derived() {
    let s = chat();
    let kind = |origin: &str, target: &str, hint: Option<&str>| {
        let r = s.find_rel(origin, target, hint).unwrap();
        (
            r.cardinality.clone(),
            r.foreign_table.clone(),
            r.columns.clone(),
        )
    };
    let pair = |a: &str, b: &str| vec![(a.to_owned(), b.to_owned())];
    assert_eq!(
        kind("messages", "users", None),
        (
            Cardinality::ManyToOne,
            "users".into(),
            pair("username", "username")
        )
    );
    assert_eq!(
        kind("users", "messages", None),
        (
            Cardinality::OneToMany,
            "messages".into(),
            pair("username", "username")
        )
    );
    assert_eq!(
        kind("channel_details", "channels", None).0,
        Cardinality::OneToOne { parent: false }
    );
    assert_eq!(
        kind("channels", "channel_details", None).0,
        Cardinality::OneToOne { parent: true }
    );
    let Cardinality::ManyToMany(j) = kind("products", "categories", None).0 else {
        panic!("not many-to-many")
    };
    assert_eq!(j.table, "product_categories");
    assert_eq!(j.source, pair("id", "product_id"));
    assert_eq!(j.target, pair("id", "category_id"));
    assert!(matches!(
        kind("categories", "products", Some("product_categories")).0,
        Cardinality::ManyToMany(_)
    ));
    // Self: the table's name reaches the children, the key's column the parent.
    assert_eq!(
        kind("collections", "collections", None),
        (
            Cardinality::OneToMany,
            "collections".into(),
            pair("id", "parent_id")
        )
    );
    assert_eq!(
        kind("collections", "parent_id", None),
        (
            Cardinality::ManyToOne,
            "collections".into(),
            pair("parent_id", "id")
        )
    );
    assert_eq!(
        kind("collections", "collections", Some("parent_id")).0,
        Cardinality::OneToMany
    );
    // Views take the relationships of the columns they show.
    assert_eq!(
        kind("active_users", "messages", None),
        (
            Cardinality::OneToMany,
            "messages".into(),
            pair("name", "username")
        )
    );
    assert_eq!(
        kind("recent_messages", "users", None),
        (
            Cardinality::ManyToOne,
            "users".into(),
            pair("author", "username")
        )
    );
    assert_eq!(
        kind("recent_messages", "active_users", None),
        (
            Cardinality::ManyToOne,
            "active_users".into(),
            pair("author", "name")
        )
    );
    assert!(s.find_rel("recent_messages", "channels", None).is_err());
}

#[test]
fn hints_name_a_key_a_column_or_a_junction() {
    let s = chat();
    let key = |origin: &str, target: &str, hint: &str| {
        s.find_rel(origin, target, Some(hint))
            .unwrap()
            .constraint
            .clone()
    };
    assert_eq!(
        key("best_friends", "users", "first_user"),
        "best_friends_first_user_fkey"
    );
    assert_eq!(
        key("best_friends", "users", "best_friends_second_user_fkey"),
        "best_friends_second_user_fkey"
    );
    assert_eq!(
        key("users", "best_friends", "third_wheel"),
        "best_friends_third_wheel_fkey"
    );
    // The deprecated targets: a key's name or its column, which then names the table.
    assert_eq!(
        s.find_rel("best_friends", "first_user", None)
            .unwrap()
            .foreign_table,
        "users"
    );
    assert_eq!(
        s.find_rel("messages", "messages_channel_id_fkey", None)
            .unwrap()
            .foreign_table,
        "channels"
    );
    assert!(s.find_rel("best_friends", "users", Some("nope")).is_err());
    assert!(s.find_rel("products", "categories", Some("nope")).is_err());
}

#[test]
fn no_relationship_is_pgrst200_with_postgrest_details_and_hint() {
    let e = get("messages", "select=*,user(*)").unwrap_err();
    assert_eq!(e.status, 400);
    assert_eq!(
        body(&e),
        json!({
            "code": "PGRST200",
            "details": "Searched for a foreign key relationship between 'messages' and 'user' in the schema 'public', but no matches were found.",
            "hint": "Perhaps you meant 'users' instead of 'user'.",
            "message": "Could not find a relationship between 'messages' and 'user' in the schema cache"
        })
    );
    let e = get("messages", "select=*,users!nope(*)").unwrap_err();
    assert_eq!(
        e.details.as_deref(),
        Some(
            "Searched for a foreign key relationship between 'messages' and 'users' using the \
             hint 'nope' in the schema 'public', but no matches were found."
        )
    );
    assert_eq!(e.hint, None, "the table is right, the hint is not");
    // Nested: the origin is the embedded table.
    let e = get("users", "select=messages(id,message_details(*))").unwrap_err();
    assert_eq!(
        e.message,
        "Could not find a relationship between 'messages' and 'message_details' in the schema cache"
    );
}

#[test]
fn ambiguity_is_pgrst201_listing_the_candidates() {
    let e = get(
        "best_friends",
        "select=first_user:users(*),second_user:users(*)",
    )
    .unwrap_err();
    assert_eq!(e.status, 300);
    assert_eq!(
        body(&e),
        json!({
            "code": "PGRST201",
            "details": [
                {
                    "cardinality": "many-to-one",
                    "embedding": "best_friends with users",
                    "relationship": "best_friends_first_user_fkey using best_friends(first_user) and users(username)"
                },
                {
                    "cardinality": "many-to-one",
                    "embedding": "best_friends with users",
                    "relationship": "best_friends_second_user_fkey using best_friends(second_user) and users(username)"
                },
                {
                    "cardinality": "many-to-one",
                    "embedding": "best_friends with users",
                    "relationship": "best_friends_third_wheel_fkey using best_friends(third_wheel) and users(username)"
                }
            ],
            "hint": "Try changing 'users' to one of the following: 'users!best_friends_first_user_fkey', 'users!best_friends_second_user_fkey', 'users!best_friends_third_wheel_fkey'. Find the desired relationship in the 'details' key.",
            "message": "Could not embed because more than one relationship was found for 'best_friends' and 'users'"
        })
    );
    let e = get("users", "select=best_friends(*)").unwrap_err();
    assert_eq!(
        body(&e)["details"][0],
        json!({
            "cardinality": "one-to-many",
            "embedding": "users with best_friends",
            "relationship": "best_friends_first_user_fkey using users(username) and best_friends(first_user)"
        })
    );
}
