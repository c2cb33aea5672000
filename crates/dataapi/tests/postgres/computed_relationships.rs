//! Functions as relationships (PostgREST's computed relationships), run for real over the
//! chat schema of `embedding.rs`: loaded by `LOAD_SQL`, to-many and to-one by what each
//! function returns, overloads picked by the row type, a view's row in and a view's rows
//! out, filters and resources of their own, the rows a write or a call returns, and in
//! another schema a function named as a table standing in for the foreign key to it, and
//! a function finding that schema's tables by the request's `search_path`.

use quire_dataapi::RestRequest;
use serde_json::{Value, json};

use crate::{Db, json_of};

pub(crate) const SCHEMA: &str = r#"
CREATE FUNCTION posts(channels) RETURNS SETOF messages LANGUAGE sql STABLE
  AS 'SELECT * FROM messages WHERE channel_id = $1.id';
CREATE FUNCTION posts(users) RETURNS SETOF messages LANGUAGE sql STABLE
  AS 'SELECT * FROM messages WHERE username = $1.username';
CREATE FUNCTION posts(active_users) RETURNS SETOF recent_messages LANGUAGE sql STABLE
  AS 'SELECT * FROM recent_messages WHERE author = $1.name';
CREATE FUNCTION first_post(users) RETURNS SETOF messages ROWS 1 LANGUAGE sql STABLE
  AS 'SELECT * FROM messages WHERE username = $1.username ORDER BY id LIMIT 1';
CREATE FUNCTION details_of(channels) RETURNS channel_details LANGUAGE sql STABLE
  AS 'SELECT * FROM channel_details WHERE id = $1.id';
CREATE FUNCTION thread(messages) RETURNS SETOF messages LANGUAGE sql STABLE
  AS 'SELECT * FROM messages WHERE channel_id = $1.channel_id AND id <> $1.id';
CREATE TABLE personal.owners (id integer PRIMARY KEY, name text NOT NULL);
CREATE TABLE personal.pets (
  id integer PRIMARY KEY,
  name text NOT NULL,
  owner_id integer NOT NULL REFERENCES personal.owners
);
INSERT INTO personal.owners VALUES (1, 'ann'), (2, 'ben');
INSERT INTO personal.pets VALUES (1, 'rex', 1), (2, 'tom', 2);
CREATE FUNCTION personal.owners(personal.pets) RETURNS SETOF personal.owners ROWS 1
  LANGUAGE sql STABLE
  AS 'SELECT * FROM personal.owners WHERE id <> $1.owner_id ORDER BY id LIMIT 1';
SET check_function_bodies = off;
CREATE FUNCTION personal.pet_names() RETURNS SETOF text LANGUAGE sql STABLE
  AS 'SELECT name FROM pets ORDER BY id';
RESET check_function_bodies;
"#;

async fn ok(db: &Db, req: RestRequest<'_>) -> Value {
    let label = format!("{} {}?{}", req.method, req.path, req.query);
    let a = db.run(req).await;
    assert!(a.status < 300, "{label}: {a:?}");
    json_of(&a)
}

fn get<'a>(path: &'a str, query: &'a str) -> RestRequest<'a> {
    RestRequest {
        method: "GET",
        path,
        query,
        ..RestRequest::default()
    }
}

pub(crate) async fn computed_relationships(db: &Db) {
    to_many_and_to_one(db).await;
    of_their_own(db).await;
    returned_rows_and_profiles(db).await;
}

async fn to_many_and_to_one(db: &Db) {
    // The overload of the channel's row, then of the user's.
    assert_eq!(
        ok(
            db,
            get("channels", "select=slug,posts(id)&order=id&posts.order=id")
        )
        .await,
        json!([
            {"slug": "general", "posts": [{"id": 1}, {"id": 2}]},
            {"slug": "random", "posts": [{"id": 3}, {"id": 4}]},
            {"slug": "empty", "posts": []}
        ])
    );
    assert_eq!(
        ok(
            db,
            get(
                "users",
                "select=username,posts(message)&username=eq.alice&posts.order=id"
            )
        )
        .await,
        json!([{"username": "alice", "posts": [{"message": "hi all"}, {"message": "hi again"}]}])
    );
    // A view's row in, a view's rows out.
    assert_eq!(
        ok(
            db,
            get("active_users", "select=name,posts(id,author)&order=name")
        )
        .await,
        json!([
            {"name": "alice", "posts": [{"id": 3, "author": "alice"}]},
            {"name": "carol", "posts": [{"id": 4, "author": "carol"}]}
        ])
    );
    // `ROWS 1`: a row or null; a row type: the row, its columns null when none was found.
    assert_eq!(
        ok(
            db,
            get("users", "select=username,first_post(id)&order=username")
        )
        .await,
        json!([
            {"username": "alice", "first_post": {"id": 1}},
            {"username": "bob", "first_post": {"id": 2}},
            {"username": "carol", "first_post": {"id": 4}},
            {"username": "dave", "first_post": null}
        ])
    );
    assert_eq!(
        ok(
            db,
            get("channels", "select=id,details_of(*)&order=id&limit=2")
        )
        .await,
        json!([
            {"id": 1, "details_of": {"id": 1, "details": "the main one"}},
            {"id": 2, "details_of": {"id": null, "details": null}}
        ])
    );
}

async fn of_their_own(db: &Db) {
    assert_eq!(
        ok(
            db,
            get(
                "channels",
                "select=id,posts!inner(id,users(status))&posts.id=gt.1&posts.order=id.desc\
                 &posts.limit=1&order=id"
            )
        )
        .await,
        json!([
            {"id": 1, "posts": [{"id": 2, "users": {"status": "OFFLINE"}}]},
            {"id": 2, "posts": [{"id": 4, "users": {"status": "ONLINE"}}]}
        ])
    );
    let counted = db
        .run(RestRequest {
            prefer: Some("count=exact"),
            ..get(
                "users",
                "select=username,...first_post(message)&first_post=not.is.null\
                 &order=first_post(message).desc&limit=2",
            )
        })
        .await;
    assert_eq!(
        (json_of(&counted), counted.header("Content-Range")),
        (
            json!([
                {"username": "carol", "message": "yo"},
                {"username": "alice", "message": "hi all"}
            ]),
            Some("0-1/3")
        )
    );
}

async fn returned_rows_and_profiles(db: &Db) {
    // Over the rows an update returns, and the rows a function returns.
    assert_eq!(
        ok(
            db,
            RestRequest {
                method: "PATCH",
                path: "channels",
                query: "id=eq.3&select=slug,posts(id)",
                body: br#"{"slug": "empty"}"#,
                prefer: Some("return=representation"),
                ..RestRequest::default()
            }
        )
        .await,
        json!([{"slug": "empty", "posts": []}])
    );
    assert_eq!(
        ok(
            db,
            get(
                "rpc/user_messages",
                "who=alice&select=id,thread(id)&order=id"
            )
        )
        .await,
        json!([{"id": 1, "thread": [{"id": 2}]}, {"id": 3, "thread": [{"id": 4}]}])
    );
    // In `personal`, `owners(pets)` stands in for the foreign key to `owners`.
    assert_eq!(
        ok(
            db,
            RestRequest {
                accept_profile: Some("personal"),
                ..get("pets", "select=name,owners(name)&order=id")
            }
        )
        .await,
        json!([
            {"name": "rex", "owners": {"name": "ben"}},
            {"name": "tom", "owners": {"name": "ann"}}
        ])
    );
    // A function of `personal` naming its tables unqualified finds them: the request's
    // `search_path` is its schema, then `public`.
    assert_eq!(
        ok(
            db,
            RestRequest {
                accept_profile: Some("personal"),
                ..get("rpc/pet_names", "")
            }
        )
        .await,
        json!(["rex", "tom"])
    );
    let a = db
        .get("channels", "select=id,user:function_returning_row(*)")
        .await;
    assert_eq!(
        (a.status, json_of(&a)["code"].as_str()),
        (400, Some("PGRST200"))
    );
}
