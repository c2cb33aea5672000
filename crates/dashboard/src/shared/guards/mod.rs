//! Guards as types: what a dashboard handler requires of a request, as actix extractors whose
//! refusal is the answer. A page asks for [`SignedIn`], [`Owner`] or the platform admin, and
//! anyone else is sent to the step they miss (or told why not); a form post is [`Posted`]
//! from the dashboard's own origin, by whom it requires, and only then is its form read.
//!
//! Actix starts a handler's extractors in argument order but may finish them in any order,
//! so checks whose precedence matters are made by one extractor, in the order written in it.

mod posted;

use std::future::Future;
use std::pin::Pin;

use actix_web::body::MessageBody;
use actix_web::http::StatusCode;
use actix_web::http::header::HeaderMap;
use actix_web::web::{self, Bytes};
use actix_web::{HttpRequest, HttpResponse, ResponseError};
use quire_accounts::{Account, Session};
use quire_edge::{ApiError, AppState, SessionRefusal};
use quire_kernel::{ErrorCode, Principal, PrincipalKind};

pub(crate) use posted::{Posted, SameOrigin, SignedInPost, Unparsed};

use crate::shared::render::see_other;
use crate::shared::session::{current, encode};

/// The answer a guard gives instead of the handler's.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// A page or a redirect: the step the person misses, or why they may not.
    Answer {
        status: StatusCode,
        headers: HeaderMap,
        body: Bytes,
    },
    /// An error, answered as every handler's errors are.
    Error(ApiError),
}

impl From<HttpResponse> for Refusal {
    fn from(response: HttpResponse) -> Self {
        let status = response.status();
        let headers = response.headers().clone();
        match response.into_body().try_into_bytes() {
            Ok(body) => Refusal::Answer {
                status,
                headers,
                body,
            },
            // Every refusal page is rendered whole before it is sent.
            Err(_) => Refusal::Error(ApiError::internal(&"a refusal page was streamed")),
        }
    }
}

impl From<ApiError> for Refusal {
    fn from(e: ApiError) -> Self {
        Refusal::Error(e)
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Answer { status, .. } => write!(f, "refused with {status}"),
            Refusal::Error(e) => e.fmt(f),
        }
    }
}

impl ResponseError for Refusal {
    fn status_code(&self) -> StatusCode {
        match self {
            Refusal::Answer { status, .. } => *status,
            Refusal::Error(e) => e.status_code(),
        }
    }

    fn error_response(&self) -> HttpResponse {
        match self {
            Refusal::Answer {
                status,
                headers,
                body,
            } => {
                let mut response = HttpResponse::with_body(*status, body.clone());
                *response.headers_mut() = headers.clone();
                response.map_into_boxed_body()
            }
            Refusal::Error(e) => e.error_response(),
        }
    }
}

/// What a handler requires of the person asking: established from the request, or refused.
pub(crate) trait Guard: Sized + 'static {
    async fn check(state: &AppState, req: &HttpRequest) -> Result<Self, Refusal>;
}

/// The application state a guard reads.
fn state_of(req: &HttpRequest) -> Result<web::Data<AppState>, ApiError> {
    req.app_data::<web::Data<AppState>>()
        .cloned()
        .ok_or_else(|| ApiError::internal(&"application state missing"))
}

/// A guard's check under way, as an extractor's future.
pub(crate) type Checked<T> = Pin<Box<dyn Future<Output = Result<T, Refusal>>>>;

/// A guard as an extractor: the handler runs only once it has passed.
macro_rules! extractor {
    ($($guard:ty),+ $(,)?) => {$(
        impl actix_web::FromRequest for $guard {
            type Error = $crate::shared::guards::Refusal;
            type Future = $crate::shared::guards::Checked<Self>;

            fn from_request(
                req: &actix_web::HttpRequest,
                _: &mut actix_web::dev::Payload,
            ) -> Self::Future {
                $crate::shared::guards::extract::<Self>(req)
            }
        }
    )+};
}
pub(crate) use extractor;

/// `G` checked against the request, for [`extractor`].
pub(crate) fn extract<G: Guard>(req: &HttpRequest) -> Checked<G> {
    let req = req.clone();
    Box::pin(async move {
        let state = state_of(&req)?;
        G::check(&state, &req).await
    })
}

/// No requirement: a form anyone may post (sign-in, sign-up, a reset link's form).
#[derive(Debug)]
pub(crate) struct Anyone;

impl Guard for Anyone {
    async fn check(_: &AppState, _: &HttpRequest) -> Result<Self, Refusal> {
        Ok(Anyone)
    }
}

/// A full session: signed in, with the second factor when enrolled. Anyone else is sent to
/// sign in (`/login?next=…`) or to give the second factor (`/login/totp?next=…`), and comes
/// back here after.
#[derive(Debug)]
pub(crate) struct SignedIn {
    pub session: Session,
    pub account: Account,
}

impl Guard for SignedIn {
    async fn check(state: &AppState, req: &HttpRequest) -> Result<Self, Refusal> {
        let here = match req.query_string() {
            "" => req.path().to_owned(),
            q => format!("{}?{q}", req.path()),
        };
        match current(state, req).await? {
            None => Err(see_other(&format!("/login?next={}", encode(&here))).into()),
            Some((session, _)) if !session.mfa_satisfied => {
                Err(see_other(&format!("/login/totp?next={}", encode(&here))).into())
            }
            Some((session, account)) => Ok(SignedIn { session, account }),
        }
    }
}

/// Who manages what they own: a full session of an activated account, acting with a master
/// key's scope. Anyone else is sent to the step they miss (sign-in, the second factor,
/// activation).
#[derive(Debug)]
pub(crate) struct Owner {
    pub account: Account,
    pub principal: Principal,
}

impl Guard for Owner {
    async fn check(state: &AppState, req: &HttpRequest) -> Result<Self, Refusal> {
        let SignedIn { account, .. } = SignedIn::check(state, req).await?;
        if account.activated_at.is_none() {
            return Err(see_other(crate::ACTIVATE).into());
        }
        let principal = Principal {
            account_id: account.id,
            kind: PrincipalKind::Dashboard,
            home_project_id: account.default_project_id,
            is_platform_admin: account.is_platform_admin,
        };
        Ok(Owner { account, principal })
    }
}

/// Who may decide a consent screen: a signed-in session that has given its second factor.
/// The decisions are API routes, so their refusals are errors, not redirects: 401 `not
/// signed in`, 403 `mfa_required`.
#[derive(Debug)]
pub(crate) struct Decider {
    pub session: Session,
    pub account: Account,
}

impl Guard for Decider {
    async fn check(state: &AppState, req: &HttpRequest) -> Result<Self, Refusal> {
        let Some((session, account)) = current(state, req).await? else {
            return Err(ApiError::session(
                SessionRefusal::NotSignedIn,
                "sign in to the dashboard first",
            )
            .into());
        };
        if !session.mfa_satisfied {
            return Err(ApiError::new(
                ErrorCode::MfaRequired,
                "enter the code from your authenticator app first",
            )
            .into());
        }
        Ok(Decider { session, account })
    }
}

extractor!(SignedIn, Owner, Decider);

#[cfg(test)]
mod tests;
