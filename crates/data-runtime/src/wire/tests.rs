//! The pipeline against a real PostgreSQL (`QUIRE_TEST_POSTGRES_URL`, skipped when unset).
//! Logins with a password by SCRAM over a unix socket are exercised by the private
//! cluster's black-box test, whose cluster asks for them.

#![allow(clippy::unwrap_used, clippy::print_stdout)]

use super::*;

async fn connect() -> Option<Wire> {
    let Ok(url) = std::env::var("QUIRE_TEST_POSTGRES_URL") else {
        println!("skipped: QUIRE_TEST_POSTGRES_URL is not set");
        return None;
    };
    Some(Wire::connect(&url.parse().unwrap()).await.unwrap())
}

fn text(rows: &[Row]) -> Vec<Option<&str>> {
    rows.iter()
        .flat_map(|r| r.iter().map(Option::as_deref))
        .collect()
}

#[tokio::test]
async fn one_pipeline_is_one_transaction_and_its_statements_are_kept() {
    let Some(mut wire) = connect().await else {
        return;
    };
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
    let prepared = wire
        .query("SELECT count(*) FROM pg_prepared_statements", &[])
        .await
        .unwrap();
    assert_eq!(text(&prepared), [Some("5")]);
}

#[tokio::test]
async fn a_refused_step_skips_the_rest_and_leaves_the_transaction_failed() {
    let Some(mut wire) = connect().await else {
        return;
    };
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
async fn forgotten_statements_are_closed_on_the_server() {
    let Some(mut wire) = connect().await else {
        return;
    };
    for n in 0..3 {
        let sql = format!("SELECT {n}");
        wire.query(&sql, &[]).await.unwrap();
    }
    wire.at_generation(1);
    assert!(wire.statements.is_empty());
    let prepared = wire
        .query("SELECT count(*) FROM pg_prepared_statements", &[])
        .await
        .unwrap();
    assert_eq!(
        text(&prepared),
        [Some("1")],
        "only the count's own statement"
    );
}

#[tokio::test]
async fn a_connection_the_server_ends_is_broken() {
    let Some(mut wire) = connect().await else {
        return;
    };
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
