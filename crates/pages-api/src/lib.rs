//! `quire-pages-api`: the page service's JSON API, `/api/page/v1`: pages published (a folder
//! of files sent as JSON, all or nothing), listed (by project and status), fetched, changed
//! (content and policy fields, archived or restored), deleted; their files listed, added and
//! replaced as a whole; and the pages others share with the caller. Each route is written
//! once on its handler (actix route macro + `#[utoipa::path]`) and registered through
//! `quire-edge`'s `Documented`, so it is routed and documented together; bodies are typed
//! beside their handlers (`routes/`: a page's own, and its files' in `page_files.rs`) and
//! their files read out of the body, base64 decoded in place (`files.rs`); answers in `dto.rs`, the fields' rules in `schema.rs`, an example
//! of every body in `examples.rs`, and the publish durations and sizes in the metrics
//! (`write_metrics.rs`). Every route needs `page` in the credential's apps (master keys
//! always have it).
//!
//! It depends on `quire-edge`, `quire-pages` and the kernel, actix-web, utoipa, base64-simd
//! and `metrics`; never on another surface crate (the architecture test says so).
//! `quire-http` mounts it.

mod dto;
mod examples;
mod files;
mod routes;
mod schema;
mod write_metrics;

use quire_edge::body::BodyLimit;
use quire_edge::documented::Documented;
use utoipa_actix_web::scope;

pub const PAGE: &str = "/api/page/v1";

/// Registers the page API on `api`, each route with its documentation; its bodies may be
/// `body_limit` bytes long (`quire_edge::page_body_limit`: a whole page in base64).
pub fn register(api: &mut Documented<'_>, body_limit: usize) {
    api.service(
        scope(PAGE)
            .app_data(BodyLimit(body_limit))
            .service(routes::list)
            .service(routes::publish)
            .service(routes::get)
            .service(routes::patch)
            .service(routes::delete)
            .service(routes::files)
            .service(routes::add_files)
            .service(routes::replace_files)
            .service(routes::shared),
    );
}
