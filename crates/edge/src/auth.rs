//! The `Authenticated` extractor: `Authorization: Bearer …` to a [`Principal`].

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{FromRequest, HttpRequest, web};
use quire_kernel::{App, ErrorCode, Principal};

use crate::AppState;
use crate::error::ApiError;

/// The caller, authenticated. Handlers that take it refuse unauthenticated requests before
/// reading the body.
#[derive(Debug, Clone)]
pub struct Authenticated(pub Principal);

impl Authenticated {
    /// Refuses callers whose credential lacks `app` in scope.
    ///
    /// # Errors
    /// 403 `insufficient_scope`.
    pub fn require_app(&self, app: App) -> Result<(), ApiError> {
        if self.0.has_app(app) {
            Ok(())
        } else {
            Err(ApiError::new(
                ErrorCode::InsufficientScope,
                format!("this key does not have the {} app in scope", app.as_str()),
            ))
        }
    }
}

impl FromRequest for Authenticated {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = req.app_data::<web::Data<AppState>>().cloned();
        let header = req
            .headers()
            .get(header::AUTHORIZATION)
            .map(|v| v.to_str().map(str::to_owned));
        Box::pin(async move {
            let state = state.ok_or_else(|| ApiError::internal(&"application state missing"))?;
            let header = match header {
                None => None,
                Some(Ok(h)) => Some(h),
                // Not visible ASCII: cannot be one of our credentials.
                Some(Err(_)) => Some(String::new()),
            };
            let principal = state.keys.authenticate(header.as_deref()).await?;
            Ok(Authenticated(principal))
        })
    }
}
