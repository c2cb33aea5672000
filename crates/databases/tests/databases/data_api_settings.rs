//! The data API's settings on the fakes: a change applies what it names and keeps the
//! rest, is read by the gateway from the record, stops this replica's instance (so the next
//! request starts one with them) unless it changed nothing, says which exposed schemas the
//! database lacks, and a refused value changes nothing; a REST request is planned under
//! them.

use quire_dataapi::{Column, PlanRow, RestRequest, SchemaCache, Table};
use quire_databases::{
    Credentials, DataApiSettings, DatabaseError, GatewayError, GatewayTarget, Reach, SettingsPatch,
    SqlOutcome,
};
use quire_testkit::databases::Scripted;
use serde_json::json;

use super::support::fixture;

fn schemas(names: &[&str]) -> Option<Vec<String>> {
    Some(names.iter().map(|s| (*s).to_owned()).collect())
}

fn target(reach: &Reach) -> GatewayTarget {
    reach.target().clone()
}

/// The cluster's next answer: the schemas the database has.
fn has_schemas(f: &super::support::Fixture, names: &[&str]) {
    f.cluster.answer_sql(Ok(SqlOutcome {
        columns: vec!["coalesce".into()],
        rows: vec![vec![json!(names)]],
        row_count: 1,
        open_tables: None,
    }));
}

#[tokio::test]
async fn a_change_applies_what_it_names_and_the_gateway_reads_it() {
    let f = fixture().await;
    let (id, _) = f.serving("tuned").await;
    let before = target(&f.service.data_api("tuned").await.unwrap());
    assert_eq!(
        before.database.data_api_settings,
        DataApiSettings::default()
    );

    has_schemas(&f, &["public", "pg_catalog", "api"]);
    let view = f
        .service
        .set_data_api_settings(
            &f.ann(),
            id,
            SettingsPatch {
                exposed_schemas: schemas(&["api", "public", "reports"]),
                max_rows: Some(Some(100)),
                aggregates: Some(true),
                ..SettingsPatch::default()
            },
        )
        .await
        .unwrap();
    let on = DataApiSettings {
        exposed_schemas: vec!["api".into(), "public".into(), "reports".into()],
        max_rows: Some(100),
        aggregates: true,
        explain: false,
        tx_rollback: false,
    };
    assert_eq!(view.database.data_api_settings, on);
    assert_eq!(view.missing_schemas, Some(vec!["reports".to_owned()]));
    assert!(
        f.runtime.stopped(id),
        "this replica's instance stops at once"
    );
    let after = target(&f.service.data_api("tuned").await.unwrap());
    assert_eq!(after.database.data_api_settings, on);
    assert_eq!(
        f.service
            .get(&f.ann(), id)
            .await
            .unwrap()
            .database
            .data_api_settings,
        on
    );

    // The rest is kept; `null` removes the cap.
    let view = f
        .service
        .set_data_api_settings(
            &f.ann(),
            id,
            SettingsPatch {
                max_rows: Some(None),
                explain: Some(true),
                tx_rollback: Some(true),
                ..SettingsPatch::default()
            },
        )
        .await
        .unwrap();
    let settings = view.database.data_api_settings;
    assert_eq!(settings.exposed_schemas, ["api", "public", "reports"]);
    assert_eq!(settings.max_rows, None);
    assert!(settings.aggregates && settings.explain && settings.tx_rollback);
}

#[tokio::test]
async fn settings_change_while_the_data_api_is_off_and_a_no_op_stops_nothing() {
    let f = fixture().await;
    let id = f.database("quiet").await;
    let view = f
        .service
        .set_data_api_settings(
            &f.ann(),
            id,
            SettingsPatch {
                explain: Some(true),
                ..SettingsPatch::default()
            },
        )
        .await
        .unwrap();
    assert!(view.database.data_api_settings.explain);
    assert!(!view.database.data_api_enabled);
    let on = f.service.enable_data_api(&f.ann(), id).await.unwrap();
    assert!(
        on.database.data_api_settings.explain,
        "kept across the switch"
    );

    let (other, _) = f.serving("steady").await;
    let same = f
        .service
        .set_data_api_settings(
            &f.ann(),
            other,
            SettingsPatch {
                aggregates: Some(false),
                exposed_schemas: schemas(&["public"]),
                ..SettingsPatch::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(same.database.data_api_settings, DataApiSettings::default());
    assert!(
        !f.runtime.stopped(other),
        "nothing changed, nothing stopped"
    );
}

#[tokio::test]
async fn a_refused_value_changes_nothing_and_others_cannot_reach_it() {
    let f = fixture().await;
    let (id, _) = f.serving("guarded").await;
    for (patch, field) in [
        (
            SettingsPatch {
                aggregates: Some(true),
                exposed_schemas: schemas(&[]),
                ..SettingsPatch::default()
            },
            "exposedSchemas",
        ),
        (
            SettingsPatch {
                explain: Some(true),
                exposed_schemas: schemas(&["auth"]),
                ..SettingsPatch::default()
            },
            "exposedSchemas",
        ),
        (
            SettingsPatch {
                tx_rollback: Some(true),
                max_rows: Some(Some(0)),
                ..SettingsPatch::default()
            },
            "maxRows",
        ),
    ] {
        match f.service.set_data_api_settings(&f.ann(), id, patch).await {
            Err(DatabaseError::Invalid(message)) => {
                assert!(message.starts_with(field), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }
    let now = f.service.get(&f.ann(), id).await.unwrap();
    assert_eq!(now.database.data_api_settings, DataApiSettings::default());
    assert!(!f.runtime.stopped(id));

    let bob = f.world.master("bob");
    let patch = SettingsPatch {
        aggregates: Some(true),
        ..SettingsPatch::default()
    };
    assert_eq!(
        f.service
            .set_data_api_settings(&bob, id, patch)
            .await
            .unwrap_err(),
        DatabaseError::NotFound
    );
}

fn items() -> SchemaCache {
    let column = |name: &str| Column {
        name: name.into(),
        type_name: "integer".into(),
        nullable: true,
        has_default: false,
        default: None,
    };
    SchemaCache::from_parts(
        vec![Table {
            schema: "public".into(),
            name: "items".into(),
            columns: vec![column("id"), column("qty")],
            primary_key: vec!["id".into()],
            insertable: true,
            updatable: true,
            deletable: true,
            computed: Vec::new(),
        }],
        Vec::new(),
    )
}

#[tokio::test]
async fn a_rest_request_is_planned_under_the_databases_settings() {
    let f = fixture().await;
    let (id, secret) = f.serving("shop").await;
    let api = f.runtime.database(id);
    api.set_schema(items());
    let credentials = Credentials {
        apikey: Some(&secret.keys.service_role),
        bearer: None,
    };
    let sum = RestRequest {
        method: "GET",
        path: "items",
        query: "select=qty.sum()",
        ..RestRequest::default()
    };
    let insert = RestRequest {
        method: "POST",
        path: "items",
        prefer: Some("tx=rollback"),
        body: br#"{"id": 1}"#,
        ..RestRequest::default()
    };
    match f.service.rest("shop", &sum, credentials, &f.keys()).await {
        Err(GatewayError::Rest(e)) => assert_eq!((e.status, e.code.as_str()), (400, "PGRST123")),
        other => panic!("{other:?}"),
    }
    api.script(Scripted::Row(PlanRow::default()));
    f.service
        .rest("shop", &insert, credentials, &f.keys())
        .await
        .unwrap();
    assert!(api.runs()[0].committed, "tx=rollback is ignored while off");

    f.service
        .set_data_api_settings(
            &f.ann(),
            id,
            SettingsPatch {
                aggregates: Some(true),
                tx_rollback: Some(true),
                ..SettingsPatch::default()
            },
        )
        .await
        .unwrap();
    api.script(Scripted::Row(PlanRow {
        page_total: 1,
        body: Some(r#"[{"sum": 3}]"#.into()),
        ..PlanRow::default()
    }));
    let answer = f
        .service
        .rest("shop", &sum, credentials, &f.keys())
        .await
        .unwrap();
    assert_eq!(answer.body.as_deref(), Some(r#"[{"sum": 3}]"#));
    f.service
        .rest("shop", &insert, credentials, &f.keys())
        .await
        .unwrap();
    let runs = api.runs();
    let last = runs.last().unwrap();
    assert!(last.plan.rolls_back() && !last.committed);
}
