//! The database tools of the agent endpoint, on both metadata databases, with tenant
//! databases on the test PostgreSQL cluster: a database created, listed, queried (the rows as
//! structured content and a text table; PostgreSQL's refusal a tool error with its SQLSTATE;
//! the tables left open to the anon key listed and warned of until row-level security
//! closes them), and its data API's URL and anon key handed out (turning it on) and
//! rotated, never the service role key or the JWT secret; a key without `base` is refused
//! every database tool; a server with no cluster says what the operator must set.

use serde_json::{Value, json};

use crate::databases::{DATABASES, with_cluster};
use crate::harness::{Backend, Reply, on_both_backends, setup};
use crate::mcp::{call, tool_error};

on_both_backends!(a_server_without_a_cluster_refuses_the_database_tools_with_what_to_set);

/// The test that needs the cluster, in a module of its own: each use of the macro makes its
/// `sqlite` and `postgres` modules.
mod on_a_cluster {
    use super::*;

    on_both_backends!(
        #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
        agents_create_query_and_reach_databases_with_the_anon_key_only
    );
}

#[track_caller]
fn result(r: &Reply) -> Value {
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["result"]["isError"], false, "{}", r.text);
    r.body["result"]["structuredContent"].clone()
}

async fn a_server_without_a_cluster_refuses_the_database_tools_with_what_to_set(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let listed = result(&call(&srv, &ann.key, "list_databases", json!({})).await);
    assert_eq!(
        listed,
        json!({"databases": [], "project": "ann", "available": false})
    );
    let refused = tool_error(
        &call(
            &srv,
            &ann.key,
            "create_database",
            json!({"slug": "agent_db"}),
        )
        .await,
    );
    assert!(
        refused.starts_with("database_service_unavailable:")
            && refused.contains("QUIRE_DATABASES_URL"),
        "{refused}"
    );
    let refused = tool_error(
        &call(
            &srv,
            &ann.key,
            "run_sql",
            json!({"database": "agent_db", "sql": "select 1"}),
        )
        .await,
    );
    assert!(
        refused.starts_with("database_service_unavailable:"),
        "{refused}"
    );
}

async fn agents_create_query_and_reach_databases_with_the_anon_key_only(b: Backend) {
    let (_db, srv, ann) = with_cluster(b, &[]).await;
    let empty = result(&call(&srv, &ann.key, "list_databases", json!({})).await);
    assert_eq!(
        empty,
        json!({"databases": [], "project": "ann", "available": true})
    );

    let made = result(
        &call(
            &srv,
            &ann.key,
            "create_database",
            json!({"slug": "agent_db", "name": "Agent notes", "expiresAt": "2099-01-01T00:00:00Z"}),
        )
        .await,
    );
    assert_eq!(made["slug"], "agent_db");
    assert_eq!(made["name"], "Agent notes");
    assert_eq!(made["project"], "ann");
    assert_eq!(made["dataApiEnabled"], false);
    assert_eq!(made["url"], format!("{}/db/agent_db", srv.base));
    assert_eq!(made["expiresAt"], "2099-01-01T00:00:00Z");
    let id = made["id"].as_str().unwrap().to_owned();
    let taken = tool_error(
        &call(
            &srv,
            &ann.key,
            "create_database",
            json!({"slug": "agent_db"}),
        )
        .await,
    );
    assert!(taken.starts_with("slug_taken:"), "{taken}");
    let bad_slug = tool_error(
        &call(
            &srv,
            &ann.key,
            "create_database",
            json!({"slug": "Agent DB"}),
        )
        .await,
    );
    assert!(
        bad_slug.starts_with("invalid_slug:")
            && bad_slug.ends_with("Fix the arguments and call again."),
        "{bad_slug}"
    );

    // SQL by slug: the last statement's rows as structured content, and a table to read.
    let ran = call(
        &srv,
        &ann.key,
        "run_sql",
        json!({"database": "agent_db",
               "sql": "create table t(a int, b text); insert into t values (1, 'one'), (2, null); select * from t order by a"}),
    )
    .await;
    let rows = result(&ran);
    // The new table has Supabase's grants and no row-level security: open to the anon key.
    let open_t = json!(["t (table: select, insert, update, delete)"]);
    assert_eq!(
        rows,
        json!({"columns": ["a", "b"], "rows": [[1, "one"], [2, null]], "rowCount": 2,
               "openTables": open_t})
    );
    let text = ran.body["result"]["content"][0]["text"].as_str().unwrap();
    let (table, warning) = text.split_once("\n\n").unwrap_or((text, ""));
    assert_eq!(table, "a | b\n--+-----\n1 | one\n2 | NULL\n(2 rows)");
    assert!(
        warning.starts_with(
            "WARNING: open to anyone with the anon key, with no row-level security: \
             t (table: select, insert, update, delete)."
        ),
        "{text}"
    );
    // By id too; a statement that returns no rows says what it touched.
    let touched = call(
        &srv,
        &ann.key,
        "run_sql",
        json!({"database": id, "sql": "delete from t where a = 2"}),
    )
    .await;
    assert_eq!(result(&touched)["rowCount"], 1);
    let text = touched.body["result"]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        text.starts_with("OK: 1 row affected\n\nWARNING: "),
        "{text}"
    );

    // PostgreSQL's refusal is a tool error the model can act on, with its SQLSTATE.
    let refused = tool_error(
        &call(
            &srv,
            &ann.key,
            "run_sql",
            json!({"database": "agent_db", "sql": "select * from nope"}),
        )
        .await,
    );
    assert!(
        refused.starts_with("sql_error: relation \"nope\" does not exist (SQLSTATE 42P01)")
            && refused.ends_with("Fix the SQL and call again."),
        "{refused}"
    );
    let unknown = tool_error(
        &call(
            &srv,
            &ann.key,
            "run_sql",
            json!({"database": "no_such_db", "sql": "select 1"}),
        )
        .await,
    );
    assert!(
        unknown.starts_with("not_found:") && unknown.contains("list_databases"),
        "{unknown}"
    );

    // The keys: the data API turned on, and the anon key alone.
    let keys = result(
        &call(
            &srv,
            &ann.key,
            "database_keys",
            json!({"database": "agent_db"}),
        )
        .await,
    );
    let mut fields: Vec<&String> = keys.as_object().unwrap().keys().collect();
    fields.sort();
    assert_eq!(
        fields,
        ["anonKey", "openTables", "restUrl", "url"],
        "{keys}"
    );
    // What the key reaches with nothing to stop it, beside the key.
    assert_eq!(keys["openTables"], open_t);
    assert_eq!(keys["url"], format!("{}/db/agent_db", srv.base));
    assert_eq!(keys["restUrl"], format!("{}/db/agent_db/rest/v1", srv.base));
    let secret = srv.get(&format!("{DATABASES}/{id}/secret"), &ann.key).await;
    let secret = secret.assert_status(200);
    assert_eq!(keys["anonKey"], secret["anonKey"]);
    let listed = result(&call(&srv, &ann.key, "list_databases", json!({})).await);
    assert_eq!(listed["databases"][0]["id"], id.as_str());
    assert_eq!(listed["databases"][0]["dataApiEnabled"], true);
    assert_eq!(listed["databases"][0]["dataApiSettings"], "defaults");
    assert!(listed["databases"][0]["sizeBytes"].as_u64().unwrap() > 0);
    assert_eq!(listed["databases"][0]["openTables"], open_t);
    // Closed by row-level security: no warning, none listed.
    let closed = call(
        &srv,
        &ann.key,
        "run_sql",
        json!({"database": "agent_db", "sql": "alter table t enable row level security"}),
    )
    .await;
    assert_eq!(result(&closed)["openTables"], json!([]));
    assert_eq!(
        closed.body["result"]["content"][0]["text"],
        "OK: 0 rows affected"
    );
    let listed = result(&call(&srv, &ann.key, "list_databases", json!({})).await);
    assert_eq!(listed["databases"][0]["openTables"], json!([]));
    // Asked again, the same key; nothing of the service role or the secret, in any part.
    let again = call(&srv, &ann.key, "database_keys", json!({"database": id})).await;
    assert_eq!(result(&again)["anonKey"], secret["anonKey"]);
    for never in ["serviceRoleKey", "jwtSecret"] {
        let value = secret[never].as_str().unwrap();
        assert!(
            !again.text.contains(value),
            "{never} leaked: {}",
            again.text
        );
    }

    // Rotation: a new anon key (the old one refused), the note for the person, and again
    // nothing of the service role or the secret.
    let rotated = call(
        &srv,
        &ann.key,
        "rotate_database_keys",
        json!({"database": "agent_db"}),
    )
    .await;
    let out = result(&rotated);
    let mut fields: Vec<&String> = out.as_object().unwrap().keys().collect();
    fields.sort();
    assert_eq!(fields, ["anonKey", "note", "restUrl", "url"], "{out}");
    assert_ne!(out["anonKey"], secret["anonKey"]);
    let note = out["note"].as_str().unwrap();
    assert!(
        note.contains(
            "a Quire key with the base app acts as service_role and is revocable one by one"
        ),
        "{note}"
    );
    let now = srv.get(&format!("{DATABASES}/{id}/secret"), &ann.key).await;
    let now = now.assert_status(200).clone();
    assert_eq!(out["anonKey"], now["anonKey"]);
    for never in ["serviceRoleKey", "jwtSecret"] {
        let value = now[never].as_str().unwrap();
        assert!(
            !rotated.text.contains(value),
            "{never} leaked: {}",
            rotated.text
        );
    }
    let old_anon = srv
        .http
        .get(format!("{}/db/agent_db/rest/v1/t", srv.base))
        .header("apikey", secret["anonKey"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(old_anon.status().as_u16(), 401);
    let unknown = tool_error(
        &call(
            &srv,
            &ann.key,
            "rotate_database_keys",
            json!({"database": "no_such_db"}),
        )
        .await,
    );
    assert!(unknown.starts_with("not_found:"), "{unknown}");

    // A key without `base` is refused every database tool, with the scope's code.
    let (page_key, _) = srv.mint(&ann.key, &["page"], None).await;
    for (tool, arguments) in [
        ("list_databases", json!({})),
        ("create_database", json!({"slug": "agent_other"})),
        (
            "run_sql",
            json!({"database": "agent_db", "sql": "drop table t"}),
        ),
        ("database_keys", json!({"database": "agent_db"})),
        ("rotate_database_keys", json!({"database": "agent_db"})),
    ] {
        let refused = tool_error(&call(&srv, &page_key, tool, arguments).await);
        assert!(
            refused.starts_with("insufficient_scope:") && refused.contains("base"),
            "{tool}: {refused}"
        );
    }
    // With `base` beside `page`, an app key reaches them.
    let (base_key, _) = srv.mint(&ann.key, &["page", "base"], None).await;
    let seen = result(
        &call(
            &srv,
            &base_key,
            "run_sql",
            json!({"database": "agent_db", "sql": "select count(*) as n from t"}),
        )
        .await,
    );
    assert_eq!(seen["rows"], json!([[1]]));

    srv.delete(&format!("{DATABASES}/{id}"), &ann.key, None)
        .await
        .assert_status(204);
}
