//! (x): the gateway's read through xitca-postgres, the only client library found that sends
//! several statements under one `Sync` (its unsync pipeline, removed after 0.2.1).

use std::sync::Arc;

use quire_data_runtime::READ_SETUP;
use serde_json::json;
use xitca_postgres::iter::AsyncLendingIterator;
use xitca_postgres::pipeline::Pipeline;
use xitca_postgres::types::Type;
use xitca_postgres::{Config, Execute, ExecuteMut, Postgres, Statement};

use crate::clients::{POOL, pooled};

/// Transactions per second of the gateway's read sent through xitca-postgres, over
/// `POOL` connections to `cluster`'s database `dbname` shared by `callers`: the settings
/// and the planned statement, each prepared once per connection with its parameters
/// declared `text` as the wire client declares them, bound and executed in one write
/// under one `Sync`, the answer read to its `ReadyForQuery`.
pub async fn transaction(
    cluster: &str,
    dbname: &str,
    read: &(String, Vec<Option<String>>),
    callers: usize,
    seconds: u64,
) -> f64 {
    let (sql, values) = read;
    // Without its `tls` feature it cannot even ask whether the server offers TLS, and its
    // `SslMode` is not public: the URL says it.
    let joint = if cluster.contains('?') { '&' } else { '?' };
    let url = format!("{cluster}{joint}sslmode=disable");
    let mut pool = Vec::new();
    for _ in 0..POOL {
        let mut config = Config::try_from(url.as_str()).unwrap();
        config.dbname(dbname);
        let (client, driver) = Postgres::new(config).connect().await.unwrap();
        tokio::spawn(driver.into_future());
        let setup = Statement::named(READ_SETUP, &[Type::TEXT; 4])
            .execute(&client)
            .await
            .unwrap()
            .leak();
        let types = vec![Type::TEXT; values.len()];
        let statement = Statement::named(sql, &types)
            .execute(&client)
            .await
            .unwrap()
            .leak();
        pool.push((client, setup, statement));
    }
    let claims = json!({ "role": "anon" }).to_string();
    let shared = Arc::new((claims, values.clone()));
    pooled(pool, callers, seconds, move |(client, setup, statement)| {
        let shared = shared.clone();
        async move {
            let (claims, values) = &*shared;
            {
                let mut pipe = Pipeline::unsync_with_capacity(2);
                setup
                    .bind([
                        Some("anon"),
                        None,
                        Some(claims.as_str()),
                        Some("\"public\""),
                    ])
                    .query_mut(&mut pipe)
                    .unwrap();
                statement
                    .bind(values.iter().map(Option::as_deref))
                    .query_mut(&mut pipe)
                    .unwrap();
                let mut answer = pipe.query(&client).unwrap();
                let mut settings = answer.try_next().await.unwrap().unwrap();
                while settings.try_next().await.unwrap().is_some() {}
                let mut rows = answer.try_next().await.unwrap().unwrap();
                let row = rows.try_next().await.unwrap().unwrap();
                let body: Option<&str> = row.get(2);
                let body = body.unwrap_or_default();
                assert!(body.contains("\"id\":4242"), "{body}");
                while answer.try_next().await.unwrap().is_some() {}
            }
            (client, setup, statement)
        }
    })
    .await
}
