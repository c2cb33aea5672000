//! `quire-objects-api`: the object service's JSON API, `/api/object/v1`: objects uploaded
//! (streamed `multipart/form-data`, or a raw body for `curl -T`), listed, fetched,
//! downloaded by their owner, changed, given new bytes and deleted; and the bytes of an
//! upload URL (`offered.rs`), the one route whose credential is in its path. Each route is
//! written once on its handler (actix route macro + `#[utoipa::path]`) and registered through
//! `quire-edge`'s `Documented`; the multipart reading is in `upload.rs`, answers in `dto.rs`.
//! Every other route needs `serve` in the credential's apps (master keys always have it).
//!
//! It depends on `quire-edge`, `quire-objects` and the kernel, actix-web, actix-multipart
//! and utoipa; never on another surface crate (the architecture test says so). `quire-http`
//! mounts it.

mod dto;
mod examples;
mod offered;
mod routes;
mod upload;

use quire_edge::documented::Documented;
use utoipa_actix_web::scope;

pub const OBJECT: &str = "/api/object/v1";

/// Registers the object API on `api`, each route with its documentation.
pub fn register(api: &mut Documented<'_>) {
    api.service(
        scope(OBJECT)
            .service(routes::list)
            .service(routes::create)
            .service(routes::create_raw)
            .service(routes::get)
            .service(routes::content)
            .service(routes::patch)
            .service(routes::replace)
            .service(routes::delete)
            .service(offered::upload_by_url),
    );
}
