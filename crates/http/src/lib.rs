//! `quire-http`: the API origin composed of its surfaces. [`configure`] mounts, on one actix
//! `App`, the dashboard's documented routes and the platform API (`quire-api`) on one
//! OpenAPI document (the dashboard's first: an actix scope answers every path under its
//! prefix), the document itself, the dashboard's pages, and for anything else a JSON 405 (a
//! documented path) or 404. The page service's API (`quire-pages-api`, `/api/page/v1`), the
//! link service's (`quire-links-api`, `/api/link/v1`), the object service's
//! (`quire-objects-api`, `/api/object/v1`) and the database service's
//! (`quire-databases-api`, `/api/database/v1`) are registered beside the platform API, on
//! the same document. The hosted agent endpoint (`quire-mcp`, `/mcp`) and the databases'
//! data gateway (`quire-data-gateway`, `/db/{slug}/…`) are mounted before them. The pages
//! origin is `quire-pages-origin` on `quire-wire`, mounted by the server.
//!
//! It holds no handler of its own: each surface is a crate of its own on `quire-edge`, and
//! this is the one crate that depends on more than one of them.

use actix_web::web;
use quire_edge::documented::Documented;
use quire_edge::{AppState, page_body_limit};

/// Registers every route of the API origin on an actix `App`.
pub fn configure(state: AppState) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg| {
        let page_limit = page_body_limit(&state.pages.limits());
        quire_mcp::register(cfg, &state, &state.mcp_origins);
        quire_data_gateway::register(cfg);
        cfg.app_data(web::Data::new(state));
        let mut api = Documented::new(cfg, quire_api::openapi::document());
        quire_dashboard::register(&mut api);
        quire_api::register(&mut api);
        quire_pages_api::register(&mut api, page_limit);
        quire_links_api::register(&mut api);
        quire_objects_api::register(&mut api);
        quire_databases_api::register(&mut api);
        let (cfg, document) = api.finish();
        let documented = quire_api::publish(cfg, document);
        quire_dashboard::configure(cfg);
        cfg.default_service(web::to(move |req: actix_web::HttpRequest| {
            let documented = documented.clone();
            async move { documented.refuse(&req) }
        }));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is the failure report

    use actix_web::{App, test};

    /// The whole document, as clients and Schemathesis read it: an operation, status code or
    /// schema that appears, disappears or changes shows up in review as a snapshot diff.
    #[actix_web::test]
    async fn the_openapi_document_is_the_reviewed_one() {
        let world = quire_testkit::World::builder().build().await;
        let app =
            test::init_service(App::new().configure(super::configure(world.app_state()))).await;
        let document: serde_json::Value = test::call_and_read_body_json(
            &app,
            test::TestRequest::get()
                .uri("/api/openapi.json")
                .to_request(),
        )
        .await;
        insta::assert_json_snapshot!(document);
    }

    /// The documentation's address as people type it leads to Swagger UI, which answers.
    #[actix_web::test]
    async fn the_docs_without_their_slash_redirect_to_them() {
        let world = quire_testkit::World::builder().build().await;
        let app =
            test::init_service(App::new().configure(super::configure(world.app_state()))).await;
        let moved =
            test::call_service(&app, test::TestRequest::get().uri("/api/docs").to_request()).await;
        assert_eq!(moved.status(), 301);
        assert_eq!(
            moved
                .headers()
                .get("location")
                .and_then(|v| v.to_str().ok()),
            Some("/api/docs/")
        );
        let docs = test::call_service(
            &app,
            test::TestRequest::get().uri("/api/docs/").to_request(),
        )
        .await;
        assert_eq!(docs.status(), 200);
    }
}
