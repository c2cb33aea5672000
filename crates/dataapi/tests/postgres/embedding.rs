//! Resource embedding, run for real: a chat schema with every kind of relationship (many-
//! and one-to-one, one-to-many, many-to-many through a junction, a table in itself, views
//! and a view over a view), its relationships derived from the cache `LOAD_SQL` loaded, and
//! the answers checked row by row.

use quire_dataapi::RestRequest;
use serde_json::{Value, json};

use crate::{Db, json_of};

pub(crate) const SCHEMA: &str = r#"
CREATE TABLE users (username text PRIMARY KEY, status text NOT NULL);
CREATE TABLE channels (id integer PRIMARY KEY, slug text NOT NULL);
CREATE TABLE channel_details (id integer PRIMARY KEY REFERENCES channels, details text);
CREATE TABLE messages (
  id integer PRIMARY KEY,
  message text NOT NULL,
  username text NOT NULL REFERENCES users,
  channel_id integer NOT NULL REFERENCES channels
);
CREATE TABLE best_friends (
  id integer PRIMARY KEY,
  first_user text NOT NULL REFERENCES users,
  second_user text NOT NULL REFERENCES users,
  third_wheel text REFERENCES users
);
CREATE TABLE collections (
  id integer PRIMARY KEY,
  parent_id integer REFERENCES collections
);
CREATE TABLE products (id integer PRIMARY KEY, name text NOT NULL);
CREATE TABLE categories (id integer PRIMARY KEY, name text NOT NULL);
CREATE TABLE product_categories (
  product_id integer REFERENCES products,
  category_id integer REFERENCES categories,
  PRIMARY KEY (product_id, category_id)
);
CREATE VIEW active_users AS SELECT username AS name, status FROM users WHERE status = 'ONLINE';
CREATE VIEW recent_messages AS SELECT id, message, username AS author FROM messages WHERE id > 1;
CREATE VIEW online_names AS SELECT name AS who FROM active_users;
CREATE FUNCTION user_messages(who text) RETURNS SETOF messages LANGUAGE sql STABLE
  AS 'SELECT * FROM messages WHERE username = who';
INSERT INTO users VALUES ('alice', 'ONLINE'), ('bob', 'OFFLINE'), ('carol', 'ONLINE'),
  ('dave', 'OFFLINE');
INSERT INTO channels VALUES (1, 'general'), (2, 'random'), (3, 'empty');
INSERT INTO channel_details VALUES (1, 'the main one');
INSERT INTO messages VALUES (1, 'hi all', 'alice', 1), (2, 'hello', 'bob', 1),
  (3, 'hi again', 'alice', 2), (4, 'yo', 'carol', 2);
INSERT INTO best_friends VALUES (1, 'alice', 'bob', 'carol'), (2, 'bob', 'carol', NULL);
INSERT INTO collections VALUES (1, NULL), (2, 1), (3, 1), (4, 2);
INSERT INTO products VALUES (1, 'tea'), (2, 'cake');
INSERT INTO categories VALUES (1, 'drinks'), (2, 'food'), (3, 'sweets');
INSERT INTO product_categories VALUES (1, 1), (2, 2), (2, 3);
"#;

async fn ok(db: &Db, path: &str, query: &str) -> Value {
    let a = db.get(path, query).await;
    assert_eq!(a.status, 200, "{path}?{query}: {a:?}");
    json_of(&a)
}

pub(crate) async fn embedding(db: &Db) {
    to_one_and_to_many(db).await;
    hints_views_and_depth(db).await;
    inner_filters_and_counts(db).await;
    mutations_and_calls(db).await;
}

async fn to_one_and_to_many(db: &Db) {
    assert_eq!(
        ok(
            db,
            "messages",
            "select=id,author:users(username,status)&id=lt.3&order=id"
        )
        .await,
        json!([
            {"id": 1, "author": {"username": "alice", "status": "ONLINE"}},
            {"id": 2, "author": {"username": "bob", "status": "OFFLINE"}}
        ])
    );
    assert_eq!(
        ok(
            db,
            "users",
            "select=username,messages(id)&order=username&messages.order=id.desc"
        )
        .await,
        json!([
            {"username": "alice", "messages": [{"id": 3}, {"id": 1}]},
            {"username": "bob", "messages": [{"id": 2}]},
            {"username": "carol", "messages": [{"id": 4}]},
            {"username": "dave", "messages": []}
        ])
    );
    // One-to-one, both ways: an object or null.
    assert_eq!(
        ok(
            db,
            "channels",
            "select=slug,channel_details(details)&order=id&limit=2"
        )
        .await,
        json!([
            {"slug": "general", "channel_details": {"details": "the main one"}},
            {"slug": "random", "channel_details": null}
        ])
    );
    assert_eq!(
        ok(db, "channel_details", "select=details,channels(slug)").await,
        json!([{"details": "the main one", "channels": {"slug": "general"}}])
    );
    // Many-to-many through the junction.
    assert_eq!(
        ok(
            db,
            "products",
            "select=name,categories(name)&order=id&categories.order=name.desc"
        )
        .await,
        json!([
            {"name": "tea", "categories": [{"name": "drinks"}]},
            {"name": "cake", "categories": [{"name": "sweets"}, {"name": "food"}]}
        ])
    );
    // A table in itself: the key's column is the parent, the table's name the children.
    assert_eq!(
        ok(db, "collections", "select=id,parent:parent_id(id),children:collections(id)&order=id&id=lte.2&children.order=id").await,
        json!([
            {"id": 1, "parent": null, "children": [{"id": 2}, {"id": 3}]},
            {"id": 2, "parent": {"id": 1}, "children": [{"id": 4}]}
        ])
    );
    // Spread columns, an order by a to-one resource, `count`.
    assert_eq!(
        ok(
            db,
            "messages",
            "select=id,...users(status)&order=users(status).desc,id"
        )
        .await,
        json!([
            {"id": 1, "status": "ONLINE"},
            {"id": 3, "status": "ONLINE"},
            {"id": 4, "status": "ONLINE"},
            {"id": 2, "status": "OFFLINE"}
        ])
    );
    assert_eq!(
        ok(
            db,
            "users",
            "select=username,messages(count)&username=in.(alice,dave)&order=username"
        )
        .await,
        json!([
            {"username": "alice", "messages": [{"count": 2}]},
            {"username": "dave", "messages": [{"count": 0}]}
        ])
    );
    // Limit and offset inside each parent's resource.
    assert_eq!(
        ok(
            db,
            "channels",
            "select=slug,messages(id)&messages.order=id&messages.limit=1&messages.offset=1&order=id"
        )
        .await,
        json!([
            {"slug": "general", "messages": [{"id": 2}]},
            {"slug": "random", "messages": [{"id": 4}]},
            {"slug": "empty", "messages": []}
        ])
    );
}

async fn hints_views_and_depth(db: &Db) {
    assert_eq!(
        ok(db, "best_friends", "select=id,first:users!first_user(username),second:users!best_friends_second_user_fkey(username),third:users!third_wheel(username)&order=id").await,
        json!([
            {"id": 1, "first": {"username": "alice"}, "second": {"username": "bob"}, "third": {"username": "carol"}},
            {"id": 2, "first": {"username": "bob"}, "second": {"username": "carol"}, "third": null}
        ])
    );
    let a = db.get("best_friends", "select=users(*)").await;
    assert_eq!(a.status, 300);
    let body = json_of(&a);
    assert_eq!(body["code"], "PGRST201");
    assert_eq!(body["details"].as_array().map(Vec::len), Some(3));
    let a = db.get("messages", "select=*,user(*)").await;
    assert_eq!(
        (a.status, json_of(&a)["hint"].as_str()),
        (400, Some("Perhaps you meant 'users' instead of 'user'."))
    );
    // Views: over a table, over the referenced side, and over a view.
    assert_eq!(
        ok(
            db,
            "active_users",
            "select=name,messages(id)&order=name&messages.order=id"
        )
        .await,
        json!([
            {"name": "alice", "messages": [{"id": 1}, {"id": 3}]},
            {"name": "carol", "messages": [{"id": 4}]}
        ])
    );
    assert_eq!(
        ok(
            db,
            "recent_messages",
            "select=id,users(status),active_users(name)&order=id"
        )
        .await,
        json!([
            {"id": 2, "users": {"status": "OFFLINE"}, "active_users": null},
            {"id": 3, "users": {"status": "ONLINE"}, "active_users": {"name": "alice"}},
            {"id": 4, "users": {"status": "ONLINE"}, "active_users": {"name": "carol"}}
        ])
    );
    assert_eq!(
        ok(
            db,
            "messages",
            "select=id,online_names(who)&id=in.(1,2)&order=id"
        )
        .await,
        json!([{"id": 1, "online_names": {"who": "alice"}}, {"id": 2, "online_names": null}])
    );
    // As deep as the grammar allows.
    let deep = format!(
        "select=id,{}id{}&id=eq.1&collections.order=id",
        "collections(".repeat(32),
        ")".repeat(32)
    );
    let a = db.get("collections", &deep).await;
    assert_eq!(a.status, 200, "{a:?}");
    // 1 has 2 and 3, 2 has 4; the levels below select only their resource.
    assert_eq!(
        json_of(&a),
        json!([{"id": 1, "collections": [
            {"collections": [{"collections": []}]},
            {"collections": []}
        ]}])
    );
    // Three levels down, filtered at the bottom.
    assert_eq!(
        ok(db, "channels", "select=slug,messages(id,users(username,best_friends!first_user(id)))&id=eq.1&messages.order=id&messages.users.best_friends.id=eq.1").await,
        json!([{"slug": "general", "messages": [
            {"id": 1, "users": {"username": "alice", "best_friends": [{"id": 1}]}},
            {"id": 2, "users": {"username": "bob", "best_friends": []}}
        ]}])
    );
}

async fn inner_filters_and_counts(db: &Db) {
    let counted = |query: &'static str| RestRequest {
        method: "GET",
        path: "users",
        query,
        prefer: Some("count=exact"),
        range: Some("0-0"),
        ..RestRequest::default()
    };
    // `!inner`: only users with a message saying hi; the count agrees.
    let a = db
        .run(counted(
            "select=username,messages!inner(message)&messages.message=like.hi*&order=username",
        ))
        .await;
    assert_eq!(
        (a.status, a.header("Content-Range")),
        (200, Some("0-0/1")),
        "{a:?}"
    );
    assert_eq!(
        json_of(&a),
        json!([{"username": "alice", "messages": [{"message": "hi all"}, {"message": "hi again"}]}])
    );
    // Without `!inner` the filter only trims the resource.
    assert_eq!(
        ok(
            db,
            "users",
            "select=username,messages(id)&messages.message=eq.yo&order=username&limit=3"
        )
        .await,
        json!([
            {"username": "alice", "messages": []},
            {"username": "bob", "messages": []},
            {"username": "carol", "messages": [{"id": 4}]}
        ])
    );
    let a = db
        .run(counted("select=username,messages()&messages=is.null"))
        .await;
    assert_eq!(a.header("Content-Range"), Some("0-0/1"));
    assert_eq!(json_of(&a), json!([{"username": "dave"}]));
    let a = db
        .run(counted(
            "select=username,messages(id)&messages=not.is.null&messages.id=gt.3",
        ))
        .await;
    assert_eq!(
        (json_of(&a), a.header("Content-Range")),
        (
            json!([{"username": "carol", "messages": [{"id": 4}]}]),
            Some("0-0/1")
        )
    );
    assert_eq!(
        ok(
            db,
            "messages",
            "select=id,users!inner(username)&users.status=eq.OFFLINE"
        )
        .await,
        json!([{"id": 2, "users": {"username": "bob"}}])
    );
    assert_eq!(
        ok(
            db,
            "messages",
            "select=id,users(username)&or=(users.is.null,id.eq.4)&users.status=eq.OFFLINE&order=id"
        )
        .await,
        json!([
            {"id": 1, "users": null},
            {"id": 3, "users": null},
            {"id": 4, "users": null}
        ])
    );
}

async fn mutations_and_calls(db: &Db) {
    let write = |method: &'static str, query: &'static str, body: &'static str| RestRequest {
        method,
        path: "messages",
        query,
        prefer: Some("return=representation"),
        content_type: Some("application/json"),
        body: body.as_bytes(),
        ..RestRequest::default()
    };
    let a = db
        .run(write(
            "POST",
            "select=id,users(username,status),channels(slug)",
            r#"{"id": 5, "message": "new", "username": "dave", "channel_id": 3}"#,
        ))
        .await;
    assert_eq!(a.status, 201, "{a:?}");
    assert_eq!(
        json_of(&a),
        json!([{"id": 5, "users": {"username": "dave", "status": "OFFLINE"}, "channels": {"slug": "empty"}}])
    );
    let a = db
        .run(write(
            "PATCH",
            "id=eq.5&select=message,...users(status)",
            r#"{"message": "edited"}"#,
        ))
        .await;
    assert_eq!(
        json_of(&a),
        json!([{"message": "edited", "status": "OFFLINE"}])
    );
    let a = db
        .run(write("DELETE", "id=eq.5&select=id,channels(slug)", ""))
        .await;
    assert_eq!(
        json_of(&a),
        json!([{"id": 5, "channels": {"slug": "empty"}}])
    );
    assert_eq!(
        ok(
            db,
            "rpc/user_messages",
            "who=alice&select=id,users(status),channels(slug)&order=id"
        )
        .await,
        json!([
            {"id": 1, "users": {"status": "ONLINE"}, "channels": {"slug": "general"}},
            {"id": 3, "users": {"status": "ONLINE"}, "channels": {"slug": "random"}}
        ])
    );
}
