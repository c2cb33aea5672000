//! `quire-databases-api`: the database service's JSON API, `/api/database/v1`: databases
//! created, listed, fetched and deleted, the owner's SQL, and the data API's switch,
//! settings (`settings.rs`), secret (shown and rotated) and reload. Each route is written
//! once on its handler (actix route macro + `#[utoipa::path]`) and registered through
//! `quire-edge`'s `Documented`; answers are in `dto.rs`. Every route needs `base` in the
//! credential's apps (master keys always have it).
//!
//! It depends on `quire-edge`, `quire-databases` and the kernel, actix-web and utoipa; never
//! on another surface crate (the architecture test says so). `quire-http` mounts it.

mod dto;
mod examples;
mod routes;
mod settings;

use quire_edge::body::BodyLimit;
use quire_edge::documented::Documented;
use utoipa_actix_web::scope;

pub const DATABASE: &str = "/api/database/v1";

/// Registers the database API on `api`, each route with its documentation.
pub fn register(api: &mut Documented<'_>) {
    api.service(
        scope(DATABASE)
            // SQL may be long (a schema and its seed data); 1 MiB is the domain's cap, and
            // the JSON around it needs a little more.
            .app_data(BodyLimit(
                quire_databases::service::MAX_SQL_BYTES + 64 * 1024,
            ))
            .service(routes::list)
            .service(routes::create)
            .service(routes::get)
            .service(routes::delete)
            .service(routes::run_sql)
            .service(routes::enable_data_api)
            .service(routes::disable_data_api)
            .service(settings::set_data_api_settings)
            .service(routes::secret)
            .service(routes::rotate_secret)
            .service(routes::reload),
    );
}
