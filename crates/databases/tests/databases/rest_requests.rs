//! The data API's REST request, the use case, on the testkit's fakes: its refusals in the
//! spec's order (an unknown database before the keys, the keys before any instance starts,
//! an instance that cannot take the request before anything is planned, a request
//! PostgREST would not plan before anything runs); who the keys make the request act as;
//! one schema reload, and one only, for a name the cache lacks; PostgreSQL's errors in
//! PostgREST's words; and a write that commits only what is answered.

use crate::support;

use quire_dataapi::{Column, PlanRow, RestAnswer, RestRequest, SchemaCache, Table};
use quire_databases::{
    Credentials, DataApiSecret, DatabaseError, GatewayError, InstanceError, KeyRole, Missing,
    PgRefusal, sign_token,
};
use quire_kernel::DatabaseId;
use quire_testkit::databases::{MemoryDataApi, Scripted};
use serde_json::{Value, json};
use std::sync::Arc;
use support::{Fixture, fixture};

fn column(name: &str, type_name: &str) -> Column {
    Column {
        name: name.into(),
        type_name: type_name.into(),
        nullable: true,
        has_default: false,
        default: None,
    }
}

/// A schema with one table, `items (id integer, name text)`.
fn items() -> SchemaCache {
    SchemaCache::from_parts(
        vec![Table {
            schema: "public".into(),
            name: "items".into(),
            columns: vec![column("id", "integer"), column("name", "text")],
            primary_key: vec!["id".into()],
            insertable: true,
            updatable: true,
            deletable: true,
            computed: Vec::new(),
        }],
        Vec::new(),
    )
}

fn get(path: &'static str, query: &'static str) -> RestRequest<'static> {
    RestRequest {
        method: "GET",
        path,
        query,
        ..RestRequest::default()
    }
}

fn key(apikey: &str) -> Credentials<'_> {
    Credentials {
        apikey: Some(apikey),
        bearer: None,
    }
}

/// An end user's access token under `secret`, expiring `exp`.
fn user_token(secret: &str, exp: i64) -> String {
    let Value::Object(claims) = json!({
        "role": "authenticated",
        "sub": "7b0c7c2e-59c4-4c8a-9a53-4c3b3b6f7a10",
        "exp": exp,
    }) else {
        unreachable!()
    };
    sign_token(secret, &claims)
}

/// Far after the world's clock.
const LATER: i64 = 4_000_000_000;

struct Shop {
    f: Fixture,
    id: DatabaseId,
    secret: DataApiSecret,
    api: Arc<MemoryDataApi>,
}

/// Ann's database `shop`, its data API on, its schema `items`.
async fn shop() -> Shop {
    let f = fixture().await;
    let (id, secret) = f.serving("shop").await;
    let api = f.runtime.database(id);
    api.set_schema(items());
    Shop { f, id, secret, api }
}

impl Shop {
    async fn rest(
        &self,
        request: &RestRequest<'_>,
        credentials: Credentials<'_>,
    ) -> Result<RestAnswer, GatewayError> {
        self.f
            .service
            .rest("shop", request, credentials, &self.f.keys())
            .await
    }

    async fn anon(&self, request: &RestRequest<'_>) -> Result<RestAnswer, GatewayError> {
        self.rest(request, key(&self.secret.keys.anon)).await
    }

    fn started(&self) -> usize {
        self.f.runtime.started.lock().unwrap().len()
    }
}

fn rest_refusal(result: Result<RestAnswer, GatewayError>) -> (u16, String) {
    match result {
        Err(GatewayError::Rest(e)) => (e.status, e.code),
        other => panic!("not PostgREST's refusal: {other:?}"),
    }
}

#[tokio::test]
async fn an_unknown_or_switched_off_database_is_not_found_before_the_keys() {
    let s = shop().await;
    let refused =
        s.f.service
            .rest(
                "nope",
                &get("items", ""),
                Credentials::default(),
                &s.f.keys(),
            )
            .await;
    assert!(
        matches!(refused, Err(GatewayError::NotFound)),
        "{refused:?}"
    );
    s.f.service
        .disable_data_api(&s.f.ann(), s.id)
        .await
        .unwrap();
    let refused = s.anon(&get("items", "")).await;
    assert!(
        matches!(refused, Err(GatewayError::NotFound)),
        "{refused:?}"
    );
    assert_eq!(s.started(), 0);
}

#[tokio::test]
async fn a_service_without_a_cluster_is_unavailable() {
    let s = shop().await;
    let off = quire_databases::DatabaseService::new(
        quire_databases::DatabasePorts {
            cluster: None,
            ..s.f.ports.clone()
        },
        quire_databases::DatabaseConfig::default(),
    );
    let refused = off
        .rest(
            "shop",
            &get("items", ""),
            Credentials::default(),
            &s.f.keys(),
        )
        .await;
    assert!(
        matches!(
            refused,
            Err(GatewayError::Service(DatabaseError::Unavailable))
        ),
        "{refused:?}"
    );
}

#[tokio::test]
async fn the_keys_are_checked_before_an_instance_starts() {
    let s = shop().await;
    let secret = &s.secret.jwt_secret;
    let bob = s.f.world.key("bob");
    let user = user_token(secret, LATER);
    let expired = user_token(secret, 1);
    for (credentials, expected) in [
        (Credentials::default(), "NoApiKey"),
        (key("not a key"), "InvalidApiKey"),
        // An end user's token is no key of the database.
        (key(&user), "InvalidApiKey"),
        // A Quire key of another account may not act for it.
        (key(&bob), "InvalidApiKey"),
        (
            Credentials {
                apikey: Some(&s.secret.keys.anon),
                bearer: Some(&bob),
            },
            "InvalidApiKey",
        ),
    ] {
        let refused = s.rest(&get("items", ""), credentials).await;
        assert_eq!(
            format!("{refused:?}"),
            format!("Err({expected})"),
            "{credentials:?}"
        );
    }
    for (bearer, code) in [("not a token", "PGRST301"), (expired.as_str(), "PGRST303")] {
        let credentials = Credentials {
            apikey: Some(&s.secret.keys.anon),
            bearer: Some(bearer),
        };
        let refused = s.rest(&get("items", ""), credentials).await;
        assert_eq!(rest_refusal(refused), (401, code.to_owned()));
    }
    assert_eq!(s.started(), 0, "no instance started for a refused key");
    assert!(s.api.runs().is_empty());
}

#[tokio::test]
async fn the_keys_say_who_the_request_acts_as() {
    let s = shop().await;
    let secret = &s.secret.jwt_secret;
    let user = user_token(secret, LATER);
    let ann = s.f.world.key("ann");
    let keys = &s.secret.keys;
    for (credentials, role) in [
        (key(&keys.anon), KeyRole::Anon),
        (key(&keys.service_role), KeyRole::ServiceRole),
        (
            Credentials {
                apikey: Some(&keys.anon),
                bearer: Some(&keys.anon),
            },
            KeyRole::Anon,
        ),
        (
            Credentials {
                apikey: Some(&keys.anon),
                bearer: Some(&user),
            },
            KeyRole::Authenticated,
        ),
        // A Quire key of the database's account acts as service_role, in either place.
        (key(&ann), KeyRole::ServiceRole),
        (
            Credentials {
                apikey: Some(&keys.anon),
                bearer: Some(&ann),
            },
            KeyRole::ServiceRole,
        ),
    ] {
        s.rest(&get("items", ""), credentials).await.unwrap();
        let ran = s.api.runs().pop().unwrap();
        assert_eq!(ran.role, role, "{credentials:?}");
        let claims: Value = serde_json::from_str(&ran.claims).unwrap();
        assert_eq!(claims["role"], role.as_str());
        if role == KeyRole::Authenticated {
            assert_eq!(claims["sub"], "7b0c7c2e-59c4-4c8a-9a53-4c3b3b6f7a10");
        }
    }
}

#[tokio::test]
async fn an_instance_that_cannot_take_the_request_is_refused_after_the_keys() {
    let s = shop().await;
    for refusal in [
        InstanceError::Starting,
        InstanceError::Saturated,
        InstanceError::AccountBusy,
        InstanceError::Unavailable,
    ] {
        s.f.runtime.refuse(Some(refusal.clone()));
        let keyless = s.rest(&get("items", ""), Credentials::default()).await;
        assert!(
            matches!(keyless, Err(GatewayError::NoApiKey)),
            "{keyless:?}"
        );
        let refused = s.anon(&get("items", "")).await;
        assert_eq!(
            format!("{refused:?}"),
            format!("Err(Instance({refusal:?}))")
        );
    }
    s.f.runtime.refuse(None);
    // Or one that started, when the request comes to run.
    s.api.script(Scripted::Instance(InstanceError::Saturated));
    let refused = s.anon(&get("items", "")).await;
    assert!(
        matches!(
            refused,
            Err(GatewayError::Instance(InstanceError::Saturated))
        ),
        "{refused:?}"
    );
    assert!(s.api.runs().is_empty());
}

#[tokio::test]
async fn a_request_postgrest_would_not_plan_runs_nothing() {
    let s = shop().await;
    let bad_filter = s.anon(&get("items", "id=eq")).await;
    assert_eq!(rest_refusal(bad_filter), (400, "PGRST100".to_owned()));
    let unknown_column = s.anon(&get("items", "select=price")).await;
    assert_eq!(rest_refusal(unknown_column), (400, "42703".to_owned()));
    assert_eq!(
        s.api.reloads(),
        0,
        "only an unknown name reloads the schema"
    );
    s.api.refuse_reloads(true);
    let unknown_table = s.anon(&get("orders", "")).await;
    assert_eq!(rest_refusal(unknown_table), (404, "PGRST205".to_owned()));
    assert!(s.api.runs().is_empty());
}

#[tokio::test]
async fn a_name_the_cache_lacks_is_planned_again_after_one_reload() {
    let s = shop().await;
    // The DDL made `orders` before its notification came.
    let mut with_orders = items();
    let mut orders = with_orders.table("items").unwrap().clone();
    orders.name = "orders".into();
    with_orders = SchemaCache::from_parts(
        vec![with_orders.table("items").unwrap().clone(), orders],
        Vec::new(),
    );
    s.api.on_reload(with_orders);
    s.api.script(Scripted::Row(PlanRow {
        total: None,
        page_total: 1,
        body: Some(r#"[{"id":1,"name":"a"}]"#.into()),
        inserted: None,
    }));
    let answer = s.anon(&get("orders", "")).await.unwrap();
    assert_eq!(answer.status, 200);
    assert_eq!(answer.body.as_deref(), Some(r#"[{"id":1,"name":"a"}]"#));
    assert_eq!(answer.header("Content-Range"), Some("0-0/*"));
    assert_eq!((s.api.reloads(), s.api.runs().len()), (1, 1));

    // A name still unknown after the reload is refused, and not reloaded for again.
    let refused = s.anon(&get("invoices", "")).await;
    assert_eq!(rest_refusal(refused), (404, "PGRST205".to_owned()));
    assert_eq!((s.api.reloads(), s.api.runs().len()), (2, 1));
    // Each asked about tables, the part of the catalog a table's name is in.
    assert_eq!(s.api.missed(), [Missing::Table, Missing::Table]);
}

#[tokio::test]
async fn postgresql_errors_answer_in_postgrest_words() {
    let s = shop().await;
    let denied = || PgRefusal {
        sqlstate: "42501".into(),
        message: "permission denied for table items".into(),
        detail: None,
        hint: None,
    };
    s.api.script(Scripted::Refused(denied()));
    let anon = s.anon(&get("items", "")).await;
    assert_eq!(rest_refusal(anon), (401, "42501".to_owned()));
    s.api.script(Scripted::Refused(denied()));
    let service = s
        .rest(&get("items", ""), key(&s.secret.keys.service_role))
        .await;
    assert_eq!(rest_refusal(service), (403, "42501".to_owned()));
    s.api.script(Scripted::Refused(PgRefusal {
        sqlstate: "23505".into(),
        message: "duplicate key value violates unique constraint \"items_pkey\"".into(),
        detail: Some("Key (id)=(1) already exists.".into()),
        hint: None,
    }));
    let insert = RestRequest {
        method: "POST",
        path: "items",
        content_type: Some("application/json"),
        body: br#"{"id": 1}"#,
        ..RestRequest::default()
    };
    let Err(GatewayError::Rest(conflict)) = s.anon(&insert).await else {
        panic!("a unique violation is PostgREST's 409");
    };
    assert_eq!((conflict.status, conflict.code.as_str()), (409, "23505"));
    assert_eq!(
        conflict.details.as_deref(),
        Some("Key (id)=(1) already exists.")
    );
    assert!(s.api.runs().iter().all(|ran| !ran.committed));
    // A connection that failed mid-way is the infrastructure's.
    s.api.script(Scripted::Broken);
    let broken = s.anon(&get("items", "")).await;
    assert!(
        matches!(broken, Err(GatewayError::Service(DatabaseError::Infra(_)))),
        "{broken:?}"
    );
}

#[tokio::test]
async fn a_write_commits_only_what_is_answered() {
    let s = shop().await;
    let patch = RestRequest {
        method: "PATCH",
        path: "items",
        query: "id=gt.0",
        accept: Some("application/vnd.pgrst.object+json"),
        prefer: Some("return=representation"),
        content_type: Some("application/json"),
        body: br#"{"name": "b"}"#,
        ..RestRequest::default()
    };
    s.api.script(Scripted::Row(PlanRow {
        total: None,
        page_total: 2,
        body: Some(r#"{"id":1,"name":"b"}"#.into()),
        inserted: None,
    }));
    let refused = s.anon(&patch).await;
    assert_eq!(rest_refusal(refused), (406, "PGRST116".to_owned()));
    s.api.script(Scripted::Row(PlanRow {
        total: None,
        page_total: 1,
        body: Some(r#"{"id":1,"name":"b"}"#.into()),
        inserted: None,
    }));
    let answer = s.anon(&patch).await.unwrap();
    assert_eq!(answer.status, 200);
    assert_eq!(answer.body.as_deref(), Some(r#"{"id":1,"name":"b"}"#));
    let committed: Vec<bool> = s.api.runs().iter().map(|ran| ran.committed).collect();
    assert_eq!(committed, [false, true]);
    assert!(!s.api.runs()[0].plan.read_only);
}
