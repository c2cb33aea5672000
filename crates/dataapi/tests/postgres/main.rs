//! End to end against a real PostgreSQL (`QUIRE_TEST_POSTGRES_URL`; reported as ignored when
//! unset, docs/decisions/test-skips.md): a scratch database of its own, the schema cache
//! loaded with `LOAD_SQL`, and plans run the way the gateway runs them (one transaction,
//! parameters bound as text, one row back).

#![allow(clippy::unwrap_used)]

use quire_dataapi::{PlanRow, RestAnswer, RestRequest, SchemaCache, from_pg_error, plan, respond};
use serde_json::Value;

mod embedding;
mod steps;
use steps::{calls, hostile_names, ranges_and_counts, reads, writes};
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, NoTls};

const SCHEMA: &str = r#"
CREATE TABLE items (
  id serial PRIMARY KEY,
  name text NOT NULL,
  qty integer,
  tags text[] DEFAULT '{}',
  note varchar(5),
  done boolean NOT NULL DEFAULT false
);
INSERT INTO items (name, qty, tags, note, done) VALUES
  ('apple', 5, '{red,fruit}', 'a', false),
  ('banana', 12, '{yellow,fruit}', NULL, true),
  ('carrot', NULL, '{orange}', 'c', false),
  ('a, b', 7, '{}', 'x', true),
  ('Grape "big"', 30, '{}', NULL, false);
CREATE TABLE "a""; drop table items; --" (id integer PRIMARY KEY, "we""ird" text);
INSERT INTO "a""; drop table items; --" VALUES (1, 'one'), (2, 'two');
CREATE TABLE kv (k text PRIMARY KEY, v integer NOT NULL, stamp text DEFAULT 'dflt');
CREATE VIEW cheap AS SELECT id, name, qty FROM items WHERE qty < 10;
CREATE FUNCTION add(a integer, b integer) RETURNS integer LANGUAGE sql IMMUTABLE
  AS 'SELECT a + b';
CREATE FUNCTION items_over(min integer) RETURNS SETOF items LANGUAGE sql STABLE
  AS 'SELECT * FROM items WHERE qty > min';
CREATE FUNCTION pairs(n integer DEFAULT 3) RETURNS TABLE (x integer, sq integer) LANGUAGE sql
  STABLE AS 'SELECT g, g * g FROM generate_series(1, n) g';
CREATE FUNCTION names() RETURNS SETOF text LANGUAGE sql STABLE AS 'SELECT name FROM items ORDER BY id';
CREATE FUNCTION touch(k text) RETURNS void LANGUAGE sql AS 'UPDATE kv SET v = v + 1 WHERE kv.k = touch.k';
CREATE FUNCTION fail() RETURNS integer LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'nope'; END$$;
"#;

pub(crate) struct Db {
    admin: Client,
    client: Client,
    name: String,
    cache: SchemaCache,
}

async fn connect(config: &Config) -> Client {
    let (client, conn) = config.connect(NoTls).await.unwrap();
    tokio::spawn(conn);
    client
}

async fn setup() -> Db {
    let url = std::env::var("QUIRE_TEST_POSTGRES_URL").expect("QUIRE_TEST_POSTGRES_URL");
    let config: Config = url.parse().unwrap();
    let admin = connect(&config).await;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let name = format!("quire_dataapi_test_{}_{nanos}", std::process::id());
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    let mut db_config = config.clone();
    db_config.dbname(&name);
    let client = connect(&db_config).await;
    client.batch_execute(SCHEMA).await.unwrap();
    client.batch_execute(embedding::SCHEMA).await.unwrap();
    let text: String = client
        .query_one(SchemaCache::LOAD_SQL, &[])
        .await
        .unwrap()
        .get(0);
    let cache = SchemaCache::from_json(&text).unwrap();
    Db {
        admin,
        client,
        name,
        cache,
    }
}

impl Db {
    /// What the gateway does: plan, one transaction, respond, commit or roll back.
    pub(crate) async fn run(&self, req: RestRequest<'_>) -> RestAnswer {
        let plan = match plan(&req, &self.cache) {
            Ok(p) => p,
            Err(e) => return e.to_answer(),
        };
        let begin = if plan.read_only {
            "BEGIN READ ONLY"
        } else {
            "BEGIN"
        };
        self.client.batch_execute(begin).await.unwrap();
        let params: Vec<&(dyn ToSql + Sync)> = plan
            .params
            .iter()
            .map(|p| p as &(dyn ToSql + Sync))
            .collect();
        let row = match self.client.query_one(plan.sql.as_str(), &params).await {
            Ok(row) => row,
            Err(e) => {
                self.client.batch_execute("ROLLBACK").await.unwrap();
                let db = e
                    .as_db_error()
                    .unwrap_or_else(|| panic!("{e}: {}", plan.sql));
                return from_pg_error(
                    db.code().code(),
                    db.message(),
                    db.detail(),
                    db.hint(),
                    false,
                )
                .to_answer();
            }
        };
        let row = PlanRow {
            total: row.get(0),
            page_total: row.get(1),
            body: row.get(2),
        };
        match respond(&plan, row) {
            Ok(answer) => {
                self.client.batch_execute("COMMIT").await.unwrap();
                answer
            }
            Err(e) => {
                self.client.batch_execute("ROLLBACK").await.unwrap();
                e.to_answer()
            }
        }
    }

    pub(crate) async fn get(&self, path: &str, query: &str) -> RestAnswer {
        self.run(RestRequest {
            method: "GET",
            path,
            query,
            ..RestRequest::default()
        })
        .await
    }

    async fn teardown(self) {
        drop(self.client);
        self.admin
            .batch_execute(&format!("DROP DATABASE {} WITH (FORCE)", self.name))
            .await
            .unwrap();
    }
}

pub(crate) fn json_of(a: &RestAnswer) -> Value {
    serde_json::from_str(a.body.as_deref().unwrap_or("null")).unwrap()
}

pub(crate) fn names(a: &RestAnswer) -> Vec<String> {
    json_of(a)
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {a:?}"))
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn the_rest_subset_runs_end_to_end() {
    let db = setup().await;
    let db = std::sync::Arc::new(db);
    let steps = tokio::spawn({
        let db = db.clone();
        async move {
            reads(&db).await;
            ranges_and_counts(&db).await;
            writes(&db).await;
            calls(&db).await;
            hostile_names(&db).await;
            embedding::embedding(&db).await;
        }
    })
    .await;
    // The scratch database goes whether the steps passed or not.
    let db = std::sync::Arc::into_inner(db).unwrap();
    db.teardown().await;
    if let Err(e) = steps {
        std::panic::resume_unwind(e.into_panic());
    }
}
