//! `quire-data-gateway`: the databases' data gateway on the API origin, `/db/{slug}/…`, in
//! Supabase's shape so its clients work unchanged. A surface: the use cases are the
//! domain's (`quire-databases`), and this crate extracts what they read and maps what they
//! answer. The credentials where Kong's key-auth finds them in front of a Supabase project
//! (`apikey`, then the bearer token; `credentials.rs`), the spec's error table and every
//! refusal's answer (`errors.rs`), CORS open to every origin as Supabase's, the REST subset
//! at `/rest/v1/*` (`rest.rs`: the request handed to `DatabaseService::rest` and its
//! answer copied out), and the auth subset at `/auth/v1/*` (`auth.rs`), GoTrue's paths and
//! JSON over the domain's `TenantAuth`.
//!
//! It depends on `quire-edge`, `quire-databases`, `quire-dataapi` (the request and answer
//! types) and the kernel, and actix-web; never on another surface crate. `quire-http`
//! mounts it.

mod auth;
mod credentials;
mod errors;
mod rest;

use actix_web::web;

/// The data gateway's prefix.
pub const PREFIX: &str = "/db";

/// Largest body the gateway takes (an insert of many rows).
pub const MAX_BODY: usize = 4 * 1024 * 1024;

/// Mounts the gateway: every method under `/db/{slug}/`.
pub fn register(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/db/{slug}/{tail:.*}")
            .app_data(web::PayloadConfig::new(MAX_BODY))
            .default_service(web::to(rest::serve)),
    );
}
