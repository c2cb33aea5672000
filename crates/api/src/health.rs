//! Liveness and readiness.

use actix_web::get;
use actix_web::http::StatusCode;
use actix_web::web;
use serde::Serialize;

use crate::dto::Health;
use quire_edge::AppState;
use quire_edge::answer::Answer;

/// The process is up.
#[utoipa::path(tag = "operations",
    responses((status = 200, description = "The process is up", body = crate::dto::Health)))]
#[get("/healthz")]
pub async fn healthz() -> Answer<Health> {
    Answer::ok(Health {
        status: "ok".to_owned(),
    })
}

/// A readiness answer: [`Health`], with why when not ready. Its fields are in alphabetical
/// order, as the server writes its other JSON maps.
#[derive(Debug, Serialize)]
pub struct Readiness {
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    status: &'static str,
}

/// The database (and, later, bundle storage) can be reached.
#[utoipa::path(tag = "operations",
    responses(
        (status = 200, description = "Ready", body = crate::dto::Health),
        (status = 503, description = "A dependency is unreachable", body = crate::dto::Health)))]
#[get("/readyz")]
pub async fn readyz(state: web::Data<AppState>) -> Answer<Readiness> {
    match state.readiness.check().await {
        Ok(()) => Answer::ok(Readiness {
            reason: None,
            status: "ok",
        }),
        Err(what) => {
            tracing::warn!(reason = %what, "not ready");
            Answer::with_status(
                StatusCode::SERVICE_UNAVAILABLE,
                Readiness {
                    reason: Some(what.to_string()),
                    status: "unavailable",
                },
            )
        }
    }
}
