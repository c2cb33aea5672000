//! A request of the REST subset (`/db/{slug}/rest/v1/*`), the data API's main use case,
//! in the spec's order: the database, the keys, the instance, the plan (with one schema
//! reload for a name the cache lacks), the run, and the answer: PostgREST's, or its
//! refusal, or PostgreSQL's error in PostgREST's words.

use quire_dataapi::{Plan, RestAnswer, RestError, RestRequest, from_pg_error, plan, respond};

use super::{DatabaseService, GatewayError};
use crate::keys::KeyRole;
use crate::ports::QuireKeys;
use crate::runtime::{DataApiInstance, RunError};
use crate::service::gateway::Credentials;

/// PostgREST's codes for a table, function or column not in the schema cache.
fn names_unknown(code: &str) -> bool {
    matches!(code, "PGRST205" | "PGRST202" | "PGRST204")
}

/// `request` planned against the instance's schema. A name the cache lacks may be one the
/// DDL just made, before its notification came: the schema is loaded again (the instance
/// does so at most once a second) and the plan tried once more.
async fn planned(
    request: &RestRequest<'_>,
    instance: &dyn DataApiInstance,
) -> Result<Plan, RestError> {
    match plan(request, &instance.schema()) {
        Err(e) if names_unknown(&e.code) && instance.reload_schema().await => {
            plan(request, &instance.schema())
        }
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
