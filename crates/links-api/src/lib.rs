//! `quire-links-api`: the link service's JSON API, `/api/link/v1`: URL links created,
//! listed (by project, status and a search), fetched, changed, deleted, and their counts.
//! Each route is written once on its handler (actix route macro + `#[utoipa::path]`) and
//! registered through `quire-edge`'s `Documented`, so it is routed and documented together;
//! bodies are typed beside their handlers (`routes.rs`), answers in `dto.rs`. Every route
//! needs `link` in the credential's apps (master keys always have it).
//!
//! It depends on `quire-edge`, `quire-links` and the kernel, actix-web and utoipa; never on
//! another surface crate (the architecture test says so). `quire-http` mounts it.

mod dto;
mod examples;
mod routes;

use quire_edge::documented::Documented;
use utoipa_actix_web::scope;

pub const LINK: &str = "/api/link/v1";

/// Registers the link API on `api`, each route with its documentation.
pub fn register(api: &mut Documented<'_>) {
    api.service(
        scope(LINK)
            .service(routes::list)
            .service(routes::create)
            .service(routes::get)
            .service(routes::patch)
            .service(routes::delete)
            .service(routes::stats),
    );
}
