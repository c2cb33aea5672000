//! The pipeline against a real PostgreSQL (`QUIRE_TEST_POSTGRES_URL`; reported as ignored
//! when unset, docs/decisions/test-skips.md).
//! Logins with a password by SCRAM over a unix socket are exercised by the private
//! cluster's black-box test, whose cluster asks for them.

#![allow(clippy::unwrap_used)]

use tokio_postgres::Config;

use super::*;

fn url() -> String {
    std::env::var("QUIRE_TEST_POSTGRES_URL").expect("QUIRE_TEST_POSTGRES_URL")
}

async fn connect() -> Wire {
    Wire::connect(&url().parse().unwrap()).await.unwrap()
}

/// How many statements the server holds prepared for this connection (the count's own
/// among them).
async fn prepared_on_server(wire: &mut Wire) -> String {
    let rows = wire
        .query("SELECT count(*) FROM pg_prepared_statements", &[])
        .await
        .unwrap();
    text(&rows)[0].unwrap().to_owned()
}

fn text(rows: &[Row]) -> Vec<Option<&str>> {
    rows.iter()
        .flat_map(|r| r.iter().map(Option::as_deref))
        .collect()
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn one_pipeline_is_one_transaction_and_its_statements_are_kept() {
    let mut wire = connect().await;
    let set = "SELECT set_config('quire.test', $1, true)";
    let read = "SELECT current_setting('quire.test', true), $1::text IS NULL";
    for value in ["one", "two"] {
        let answer = wire
            .pipeline(&[
                Step::BEGIN,
                Step {
                    sql: set,
                    params: &[Some(value)],
                },
                Step {
                    sql: read,
                    params: &[None],
                },
                Step::COMMIT,
            ])
            .await
            .unwrap();
        assert!(answer.refused.is_none(), "{answer:?}");
        assert_eq!(answer.status, b'I');
        assert_eq!(answer.rows.len(), 4);
        assert_eq!(text(&answer.rows[2]), [Some(value), Some("t")]);
    }
    // The setting was local to each transaction, and four statements were prepared
    // once each for both pipelines.
    let after = wire.query(read, &[Some("x")]).await.unwrap();
    assert_eq!(text(&after), [Some(""), Some("f")]);
    assert_eq!(wire.statements.len(), 4);
    assert_eq!(prepared_on_server(&mut wire).await, "5");
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_refused_step_skips_the_rest_and_leaves_the_transaction_failed() {
    let mut wire = connect().await;
    let answer = wire
        .pipeline(&[
            Step::BEGIN,
            Step {
                sql: "SELECT 1 / $1::int",
                params: &[Some("0")],
            },
            Step::bare("SELECT 2"),
            Step::COMMIT,
        ])
        .await
        .unwrap();
    let refused = answer.refused.unwrap();
    assert_eq!(refused.sqlstate, "22012");
    assert_eq!(refused.message, "division by zero");
    assert_eq!(answer.rows.len(), 1, "only BEGIN completed");
    assert_eq!(answer.status, b'E');
    let rolled = wire.pipeline(&[Step::ROLLBACK]).await.unwrap();
    assert_eq!(rolled.status, b'I');
    assert!(!wire.is_broken());

    // A statement PostgreSQL cannot parse is refused and never taken as prepared.
    let Err(WireError::Db(e)) = wire.query("SELEC 1", &[]).await else {
        panic!("a syntax error is a refusal");
    };
    assert_eq!(e.sqlstate, "42601");
    assert!(!wire.statements.contains_key("SELEC 1"));
    assert_eq!(
        text(&wire.query("SELECT 'still here'", &[]).await.unwrap()),
        [Some("still here")]
    );
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn forgotten_statements_are_closed_on_the_server() {
    let mut wire = connect().await;
    for n in 0..3 {
        let sql = format!("SELECT {n}");
        wire.query(&sql, &[]).await.unwrap();
    }
    wire.at_generation(1);
    assert!(wire.statements.is_empty());
    assert_eq!(
        prepared_on_server(&mut wire).await,
        "1",
        "only the count's own statement"
    );
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_connection_the_server_ends_is_broken() {
    let mut wire = connect().await;
    let ended = wire
        .query("SELECT pg_terminate_backend(pg_backend_pid())", &[])
        .await;
    assert!(matches!(
        ended,
        Err(WireError::Db(_)) | Err(WireError::Broken(_))
    ));
    let next = wire.query("SELECT 1", &[]).await;
    assert!(matches!(next, Err(WireError::Broken(_))), "{next:?}");
    assert!(wire.is_broken());
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn statements_the_server_lost_are_prepared_afresh() {
    let mut wire = connect().await;
    wire.query("SELECT 1", &[]).await.unwrap();
    // What a tenant's function may run: every prepared statement is gone on the server.
    wire.query("DEALLOCATE ALL", &[]).await.unwrap();
    let Err(WireError::Db(lost)) = wire.query("SELECT 1", &[]).await else {
        panic!("a statement the server lost is refused once");
    };
    assert_eq!(lost.sqlstate, "26000");
    assert_eq!(
        text(&wire.query("SELECT 1", &[]).await.unwrap()),
        [Some("1")]
    );
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn one_text_twice_in_a_pipeline_is_prepared_once() {
    let mut wire = connect().await;
    let answer = wire
        .pipeline(&[Step::bare("SELECT 7"), Step::bare("SELECT 7")])
        .await
        .unwrap();
    assert_eq!(answer.rows.len(), 2);
    assert_eq!(text(&answer.rows[1]), [Some("7")]);
    assert_eq!(prepared_on_server(&mut wire).await, "2");
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_large_answer_does_not_stay_allocated() {
    let mut wire = connect().await;
    let rows = wire
        .query("SELECT repeat('x', 4000000)", &[])
        .await
        .unwrap();
    assert_eq!(rows[0][0].as_ref().map(String::len), Some(4_000_000));
    assert!(
        wire.read.capacity() <= READ_KEPT,
        "{}",
        wire.read.capacity()
    );
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn the_configurations_options_reach_the_server_and_a_broken_connection_stays_broken() {
    let mut config: Config = url().parse().unwrap();
    config.options("-c search_path=pg_catalog");
    let mut wire = Wire::connect(&config).await.unwrap();
    assert_eq!(
        text(&wire.query("SHOW search_path", &[]).await.unwrap()),
        [Some("pg_catalog")]
    );
    // A value PostgreSQL's messages cannot carry breaks the exchange before anything is
    // sent, and nothing of it is sent later.
    assert!(matches!(
        wire.query("SELECT '\0'", &[]).await,
        Err(WireError::Broken(_))
    ));
    assert!(wire.write.is_empty());
    assert!(matches!(
        wire.query("SELECT 1", &[]).await,
        Err(WireError::Broken(_))
    ));
}
