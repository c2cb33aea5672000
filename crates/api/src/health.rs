//! Liveness and readiness.

use actix_web::get;
use actix_web::{HttpResponse, web};

use quire_edge::AppState;

/// The process is up.
#[utoipa::path(tag = "operations",
    responses((status = 200, description = "The process is up", body = crate::dto::Health)))]
#[get("/healthz")]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({ "status": "ok" }))
}

/// The database (and, later, bundle storage) can be reached.
#[utoipa::path(tag = "operations",
    responses(
        (status = 200, description = "Ready", body = crate::dto::Health),
        (status = 503, description = "A dependency is unreachable", body = crate::dto::Health)))]
#[get("/readyz")]
pub async fn readyz(state: web::Data<AppState>) -> HttpResponse {
    match state.readiness.check().await {
        Ok(()) => HttpResponse::Ok().json(serde_json::json!({ "status": "ok" })),
        Err(what) => {
            tracing::warn!(reason = %what, "not ready");
            HttpResponse::ServiceUnavailable()
                .json(serde_json::json!({ "status": "unavailable", "reason": what.to_string() }))
        }
    }
}
