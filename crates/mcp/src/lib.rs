//! `quire-mcp`: the hosted agent endpoint, a remote MCP server at `{base}/mcp` (and `/mcp/`)
//! on the API origin. Quire's own gate answers first ([`gate`]: `Origin` and `Host`, the
//! credential presented to the MCP resource, the 401/403 challenges, CORS, `no-store`);
//! then the official SDK's stateless Streamable HTTP service (`rmcp`, both protocol eras,
//! plain JSON answers) runs behind a small actix adapter ([`transport`]), and its tools
//! ([`tools`]) call the same use cases as the REST handlers, with the same validation, codes
//! and limits. Nothing outlives a request but the database: any replica answers any call.
//!
//! A surface crate: it depends on `quire-edge` (the state, the one mapping of domain errors
//! to codes), the domain crates it calls, actix-web, and `rmcp` with its `http` 1.x types; it
//! never depends on another surface.

mod envelope;
pub mod gate;
mod limiter;
mod server;
pub mod tools;
#[cfg(test)]
mod tools_list;
mod transport;

use std::sync::Arc;

use actix_web::web;
use quire_edge::AppState;

pub use gate::Allowed;
pub use server::QuireMcp;

/// The endpoint's path.
pub const PATH: &str = "/mcp";

/// Mounts `/mcp` and `/mcp/` (all methods) on an actix config: the gate, then rmcp.
/// `extra_origins` are browser origins allowed besides Quire's own
/// (`QUIRE_MCP_ALLOWED_ORIGINS`).
pub fn register(cfg: &mut web::ServiceConfig, state: &AppState, extra_origins: &[String]) {
    let allowed = Allowed::new(&state.base_url, extra_origins);
    let body_limit = quire_edge::page_body_limit(&state.pages.limits());
    let endpoint = Arc::new(transport::Endpoint::new(
        state.clone(),
        &allowed,
        body_limit,
    ));
    let allowed = web::Data::new(allowed);
    let endpoint = web::Data::from(endpoint);
    for path in [PATH, "/mcp/"] {
        cfg.service(
            web::resource(path)
                .app_data(endpoint.clone())
                .app_data(allowed.clone())
                .app_data(web::PayloadConfig::new(body_limit))
                .default_service(web::to(transport::serve)),
        );
    }
}
