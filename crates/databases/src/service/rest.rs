//! A request of the REST subset (`/db/{slug}/rest/v1/*`), the data API's main use case,
//! in the spec's order: the database, the keys, the instance, the plan (for a name the
//! cache lacks, brought up to date and planned once more), the run, and the answer:
//! PostgREST's, or its refusal, or PostgreSQL's error in PostgREST's words.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, LazyLock, Mutex, Weak};

use quire_dataapi::{
    Plan, RestAnswer, RestError, RestRequest, SchemaCache, Settings, from_pg_error, plan_with,
    respond,
};

use super::{DatabaseService, GatewayError};
use crate::keys::KeyRole;
use crate::ports::QuireKeys;
use crate::runtime::{DataApiInstance, Missing, RunError};
use crate::service::gateway::Credentials;

/// A read's plan, kept with the schema cache it was planned against.
struct Kept {
    /// Weak: an entry keeps no replaced cache's contents alive, and its allocation, which
    /// a weak reference keeps, cannot be reused for another cache while the entry stands.
    schema: Weak<SchemaCache>,
    plan: Arc<Plan>,
}

/// Reads planned so far, by their schema cache, settings and request: every input of
/// [`plan_with`], so the same request against the same cache under the same settings plans
/// the same; planning one cost about 2.4 us of a 37 us read (the parse,
/// the SQL written out). Only reads (`GET`, `HEAD`, no body) are kept; a replaced schema
/// cache misses; emptied when full.
static PLANS: LazyLock<Mutex<HashMap<String, Kept>>> = LazyLock::new(Mutex::default);

/// The most plans [`PLANS`] keeps.
const PLANS_KEPT: usize = 1024;

/// `request`'s key in [`PLANS`] against `schema` under `settings`, when it is a read. Header values and a
/// request's target hold no newline, so the fields cannot run into each other.
fn plan_key(
    request: &RestRequest<'_>,
    schema: &Arc<SchemaCache>,
    settings: Settings,
) -> Option<String> {
    if !matches!(request.method, "GET" | "HEAD") || !request.body.is_empty() {
        return None;
    }
    let mut key = String::with_capacity(96 + request.query.len());
    let Settings {
        aggregates,
        explain,
        tx_override,
        max_rows,
    } = settings;
    let _ = write!(
        key,
        "{:p} {} {} {} {max_rows:?}",
        Arc::as_ptr(schema),
        u8::from(aggregates),
        u8::from(explain),
        u8::from(tx_override),
    );
    for field in [
        Some(request.method),
        Some(request.path),
        Some(request.query),
        request.prefer,
        request.accept,
        request.range,
        request.content_type,
        request.accept_profile,
        request.content_profile,
    ] {
        key.push('\n');
        if let Some(value) = field {
            key.push('=');
            key.push_str(value);
        }
    }
    Some(key)
}

/// [`plan_with`], through [`PLANS`] for a read.
fn plan_kept(
    request: &RestRequest<'_>,
    schema: &Arc<SchemaCache>,
    settings: Settings,
) -> Result<Arc<Plan>, RestError> {
    let Some(key) = plan_key(request, schema, settings) else {
        return plan_with(request, schema, settings).map(Arc::new);
    };
    if let Ok(kept) = PLANS.lock()
        && let Some(k) = kept.get(&key)
        && Weak::as_ptr(&k.schema) == Arc::as_ptr(schema)
    {
        return Ok(k.plan.clone());
    }
    let planned = Arc::new(plan_with(request, schema, settings)?);
    if let Ok(mut kept) = PLANS.lock() {
        if kept.len() >= PLANS_KEPT {
            kept.clear();
        }
        kept.insert(
            key,
            Kept {
                schema: Arc::downgrade(schema),
                plan: planned.clone(),
            },
        );
    }
    Ok(planned)
}

/// `request` planned against the instance's schema, under its database's settings (as the
/// instance's record read them). A name the cache lacks may be one the DDL just made,
/// before its notification came: the instance brings the cache up to date for that kind of
/// name (asking the catalog first, so an unknown name costs no load), and the request is
/// planned again when the cache it was planned against has been replaced.
async fn planned(
    request: &RestRequest<'_>,
    instance: &dyn DataApiInstance,
) -> Result<Arc<Plan>, RestError> {
    let schema = instance.schema();
    let settings = instance.target().database.data_api_settings.planner();
    let plan = |schema: &Arc<SchemaCache>| plan_kept(request, schema, settings);
    match plan(&schema) {
        Err(e) => match Missing::of_code(&e.code) {
            Some(missing) => {
                instance.reload_schema(missing).await;
                let now = instance.schema();
                // Also when another request's load replaced it after this one planned.
                if Arc::ptr_eq(&schema, &now) {
                    Err(e)
                } else {
                    plan(&now)
                }
            }
            None => Err(e),
        },
        planned => planned,
    }
}

impl DatabaseService {
    /// Serves one request of the REST subset of database `slug`'s data API, whose
    /// credentials are `credentials` (`keys` says who a Quire key is).
    ///
    /// # Errors
    /// In the spec's order: `NotFound` (or `Service`: `Unavailable` without a cluster,
    /// `Infra`); `NoApiKey`, `InvalidApiKey`, or `Rest` for the bearer token; `Instance`
    /// (starting, unavailable, saturated); `Rest` for a request PostgREST would not plan,
    /// a row it would not answer, or PostgreSQL's error (in PostgREST's words, the
    /// permission errors of `anon` as 401); `Service` (`Infra`) when the connection failed
    /// mid-way.
    pub async fn rest(
        &self,
        slug: &str,
        request: &RestRequest<'_>,
        credentials: Credentials<'_>,
        keys: &dyn QuireKeys,
    ) -> Result<RestAnswer, GatewayError> {
        let reach = self.data_api(slug).await?;
        let acting = self.acting(reach.target(), credentials, keys).await?;
        let instance = self.serve_data_api(reach).await?;
        let plan = planned(request, instance.as_ref())
            .await
            .map_err(GatewayError::Rest)?;
        instance
            .run(acting.role, &acting.claims, &plan, respond)
            .await
            .map_err(|e| match e {
                RunError::Answer(refusal) => GatewayError::Rest(refusal),
                RunError::Refused(pg) => GatewayError::Rest(from_pg_error(
                    &pg.sqlstate,
                    &pg.message,
                    pg.detail.as_deref(),
                    pg.hint.as_deref(),
                    acting.role == KeyRole::Anon,
                )),
                RunError::Instance(e) => GatewayError::Instance(e),
                RunError::Infra(e) => GatewayError::Service(e.into()),
            })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use quire_dataapi::{Column, RestRequest, SchemaCache, Settings, Table};

    use super::plan_kept;

    fn items() -> Arc<SchemaCache> {
        let column = |name: &str| Column {
            name: name.to_owned(),
            type_name: "bigint".to_owned(),
            nullable: false,
            has_default: false,
            default: None,
        };
        Arc::new(SchemaCache::from_parts(
            vec![Table {
                schema: "public".to_owned(),
                name: "items".to_owned(),
                columns: vec![column("id"), column("qty")],
                primary_key: vec!["id".to_owned()],
                insertable: true,
                updatable: true,
                deletable: true,
                computed: Vec::new(),
            }],
            Vec::new(),
        ))
    }

    fn request<'a>(method: &'a str, query: &'a str, body: &'a [u8]) -> RestRequest<'a> {
        RestRequest {
            method,
            path: "items",
            query,
            prefer: None,
            accept: None,
            range: None,
            content_type: None,
            accept_profile: None,
            content_profile: None,
            body,
        }
    }

    /// A kept plan must be the plan of exactly that request against exactly that cache and
    /// those settings: a value, a header, a setting or a reloaded cache that differs is
    /// planned afresh.
    #[test]
    fn a_read_is_planned_once_per_schema_cache_settings_and_request() {
        let schema = items();
        let open = Settings::default();
        let read = request("GET", "id=eq.7", b"");
        let first = plan_kept(&read, &schema, open).unwrap();
        assert!(Arc::ptr_eq(
            &first,
            &plan_kept(&read, &schema, open).unwrap()
        ));
        assert_eq!(first.params, [Some("7".to_owned())]);

        let other = plan_kept(&request("GET", "id=eq.8", b""), &schema, open).unwrap();
        assert_eq!(other.params, [Some("8".to_owned())]);
        let counted = RestRequest {
            prefer: Some("count=exact"),
            ..read
        };
        let counted = plan_kept(&counted, &schema, open).unwrap();
        assert_ne!(counted.sql, first.sql);

        let capped = Settings {
            max_rows: Some(3),
            ..open
        };
        let capped = plan_kept(&read, &schema, capped).unwrap();
        assert_ne!(capped.sql, first.sql);

        // The same request against a reloaded cache (the table changed) is planned again.
        let reloaded = items();
        let again = plan_kept(&read, &reloaded, open).unwrap();
        assert!(!Arc::ptr_eq(&first, &again));
        assert_eq!(*first, *again);
    }

    #[test]
    fn writes_are_planned_every_time() {
        let schema = items();
        let open = Settings::default();
        let delete = request("DELETE", "id=eq.7", b"");
        let first = plan_kept(&delete, &schema, open).unwrap();
        assert!(!first.read_only);
        assert!(!Arc::ptr_eq(
            &first,
            &plan_kept(&delete, &schema, open).unwrap()
        ));
        let insert = request("POST", "", br#"{"id":1,"qty":2}"#);
        assert!(!Arc::ptr_eq(
            &plan_kept(&insert, &schema, open).unwrap(),
            &plan_kept(&insert, &schema, open).unwrap()
        ));
    }
}
