//! The client's address of an API request, for rate limits: [`TrustedProxies`] (shared with
//! the pages origin's server) read over actix's peer address and `X-Forwarded-For` headers.

use actix_web::HttpRequest;
pub use quire_wire::client_ip::TrustedProxies;

/// The client address of a request under the app's [`TrustedProxies`].
pub fn of(req: &HttpRequest, trusted: &TrustedProxies) -> String {
    let Some(peer) = req.peer_addr().map(|a| a.ip()) else {
        return "unknown".to_owned();
    };
    let headers: Vec<&str> = req
        .headers()
        .get_all("x-forwarded-for")
        .filter_map(|v| v.to_str().ok())
        .collect();
    trusted.client(peer, &headers).to_string()
}
