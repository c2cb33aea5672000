//! Refusals many routes of every surface document alike, written once: each is an
//! [`IntoResponses`] a route names in its `responses(...)` beside its own. Only the status and
//! its codes are said here; the `ErrorBody` every refusal carries is added by the document's
//! `ErrorBodies` (`quire-api`'s `openapi.rs`, run on the whole document once every surface
//! has registered), as is the 401 of every route taking a bearer credential.

use std::collections::BTreeMap;

use utoipa::IntoResponses;
use utoipa::openapi::{RefOr, Response, ResponseBuilder};

fn refusals(statuses: &[(&str, &str)]) -> BTreeMap<String, RefOr<Response>> {
    statuses
        .iter()
        .map(|(status, codes)| {
            (
                (*status).to_owned(),
                RefOr::T(ResponseBuilder::new().description(*codes).build()),
            )
        })
        .collect()
}

/// What a key route answers a credential it authenticated but will not serve: 403
/// `insufficient_scope` (a key without the route's app, or an app key where only a master key
/// may ask) or `not_activated`.
#[derive(Debug)]
pub struct ScopeRefusals;

impl IntoResponses for ScopeRefusals {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        refusals(&[("403", "insufficient_scope, not_activated")])
    }
}

/// What a route of the platform admin account answers any other credential: 403
/// `insufficient_scope` (not a master key), `forbidden` (not the platform admin account) or
/// `not_activated`.
#[derive(Debug)]
pub struct AdminRefusals;

impl IntoResponses for AdminRefusals {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        refusals(&[("403", "insufficient_scope, forbidden, not_activated")])
    }
}

/// What a route taking a long body (a page's files) refuses before reading it all: a body
/// over the limit, or one more long body than the credential or the server takes at once.
#[derive(Debug)]
pub struct LongBodyRefusals;

impl IntoResponses for LongBodyRefusals {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        refusals(&[
            ("413", "payload_too_large; `limit` names the limit"),
            (
                "429",
                "rate_limited: this credential's long bodies in flight are at their bound (`limit` = `bodies_in_flight`, with Retry-After)",
            ),
            (
                "503",
                "server_busy: the server's long bodies in flight are at their bound (`limit` = `bodies_in_flight`, with Retry-After)",
            ),
        ])
    }
}
