//! A request of the REST subset (`/db/{slug}/rest/v1/*`), the data API's main use case,
//! in the spec's order: the database, the keys, the instance, the plan (for a name the
//! cache lacks, brought up to date and planned once more), the run, and the answer:
//! PostgREST's, or its refusal, or PostgreSQL's error in PostgREST's words.

use std::sync::Arc;

use quire_dataapi::{Plan, RestAnswer, RestError, RestRequest, from_pg_error, plan_with, respond};

use super::{DatabaseService, GatewayError};
use crate::keys::KeyRole;
use crate::ports::QuireKeys;
use crate::runtime::{DataApiInstance, Missing, RunError};
use crate::service::gateway::Credentials;

/// `request` planned against the instance's schema, under its database's settings (as the
/// instance's record read them). A name the cache lacks may be one the DDL just made,
/// before its notification came: the instance brings the cache up to date for that kind of
/// name (asking the catalog first, so an unknown name costs no load), and the request is
/// planned again when the cache it was planned against has been replaced.
async fn planned(
    request: &RestRequest<'_>,
    instance: &dyn DataApiInstance,
) -> Result<Plan, RestError> {
    let schema = instance.schema();
    let settings = instance.target().database.data_api_settings.planner();
    let plan = |schema: &quire_dataapi::SchemaCache| plan_with(request, schema, settings);
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
