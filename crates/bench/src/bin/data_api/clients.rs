//! The references the data API is measured against, each over a pool of [`POOL`]
//! connections shared by its callers ([`pooled`]): (a) a bare tokio-postgres client's
//! prepared read, and (t) the gateway's transaction on Quire's wire client without HTTP,
//! with the statement Quire's planner writes for the read ([`planned_read`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use quire_data_runtime::{READ_SETUP, Step, Wire};
use quire_dataapi::{RestRequest, SchemaCache, plan};
use serde_json::json;
use tokio::sync::mpsc;
use tokio_postgres::NoTls;

use crate::ID;

/// The connections of each pool: the data API instance's size.
pub const POOL: usize = 4;

/// Calls per second of `call` over `seconds`, from `callers` concurrent callers sharing the
/// connections `pool`, each call holding a connection alone as a pooled request does.
pub async fn pooled<C, F, Fut>(pool: Vec<C>, callers: usize, seconds: u64, call: F) -> f64
where
    C: Send + 'static,
    F: Fn(C) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = C> + Send,
{
    let (give, take) = mpsc::channel(pool.len());
    for conn in pool {
        give.send(conn).await.unwrap();
    }
    let take = Arc::new(tokio::sync::Mutex::new(take));
    let done = Arc::new(AtomicU64::new(0));
    let until = Instant::now() + Duration::from_secs(seconds);
    let mut tasks = Vec::new();
    for _ in 0..callers {
        let (give, take, done, call) = (give.clone(), take.clone(), done.clone(), call.clone());
        tasks.push(tokio::spawn(async move {
            while Instant::now() < until {
                let conn = take.lock().await.recv().await.unwrap();
                give.send(call(conn).await).await.unwrap();
                done.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    done.load(Ordering::Relaxed) as f64 / seconds as f64
}

/// Queries per second of the bare client over `seconds`, from `callers` concurrent callers
/// sharing `POOL` connections.
pub async fn bare(config: &tokio_postgres::Config, callers: usize, seconds: u64) -> f64 {
    let mut pool = Vec::new();
    for _ in 0..POOL {
        let (client, conn) = config.connect(NoTls).await.unwrap();
        tokio::spawn(conn);
        let statement = client
            .prepare("SELECT * FROM items WHERE id = $1")
            .await
            .unwrap();
        pool.push((client, statement));
    }
    pooled(pool, callers, seconds, |(client, statement)| async move {
        let row = client.query_one(&statement, &[&ID]).await.unwrap();
        assert_eq!(row.get::<_, i64>(0), ID);
        (client, statement)
    })
    .await
}

/// The statement Quire's planner writes for `GET items?id=eq.{ID}`, planned over the
/// database's schema as the gateway plans it.
pub async fn planned_read(config: &tokio_postgres::Config) -> (String, Vec<Option<String>>) {
    let (client, conn) = config.connect(NoTls).await.unwrap();
    tokio::spawn(conn);
    let sql = format!(
        "SELECT cache::text FROM ({}) AS loaded(cache)",
        SchemaCache::LOAD_SQL.trim().trim_end_matches(';')
    );
    let exposed = SchemaCache::load_param(SchemaCache::DEFAULT_SCHEMAS);
    let text: String = client.query_one(&sql, &[&exposed]).await.unwrap().get(0);
    let cache = SchemaCache::from_json(&text).unwrap();
    let query = format!("id=eq.{ID}");
    let request = RestRequest {
        method: "GET",
        path: "items",
        query: &query,
        prefer: None,
        accept: None,
        range: None,
        content_type: None,
        accept_profile: None,
        content_profile: None,
        body: &[],
    };
    let planned = plan(&request, &cache).unwrap();
    (planned.sql, planned.params)
}

/// Transactions per second of the gateway's shape from a bare client, over `POOL`
/// connections shared by `callers`: Quire's own wire client, the same two statements under
/// one `Sync` as a read through the gateway, without HTTP.
pub async fn transaction(
    config: &tokio_postgres::Config,
    read: &(String, Vec<Option<String>>),
    callers: usize,
    seconds: u64,
) -> f64 {
    let mut pool = Vec::new();
    for _ in 0..POOL {
        pool.push(Wire::connect(config).await.unwrap());
    }
    let claims = json!({ "role": "anon" }).to_string();
    let shared = Arc::new((claims, read.clone()));
    pooled(pool, callers, seconds, move |mut wire: Wire| {
        let shared = shared.clone();
        async move {
            let (claims, (sql, values)) = &*shared;
            let setup = [
                Some("anon"),
                None,
                Some(claims.as_str()),
                Some("\"public\""),
            ];
            // As the gateway does, once per request.
            let params: Vec<Option<&str>> = values.iter().map(Option::as_deref).collect();
            let steps = [
                Step {
                    sql: READ_SETUP,
                    params: &setup,
                },
                Step {
                    sql,
                    params: &params,
                },
            ];
            let answer = wire.pipeline(&steps).await.unwrap();
            assert!(answer.refused.is_none(), "{:?}", answer.refused);
            let body = answer.rows[1][0][2].as_deref().unwrap_or_default();
            assert!(body.contains("\"id\":4242"), "{body}");
            wire
        }
    })
    .await
}
