//! The key extractors: [`Authenticated`] turns `Authorization: Bearer …` into a
//! [`Principal`]; [`Scoped`] does the same and then refuses a credential without the app its
//! type parameter names, so a handler's signature says the scope it needs.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::{Method, header};
use actix_web::{FromRequest, HttpRequest, web};
use quire_kernel::{App, ErrorCode, Principal};

use crate::AppState;
use crate::error::ApiError;

/// The caller, authenticated. Handlers that take it refuse unauthenticated requests before
/// reading the body.
#[derive(Debug, Clone)]
pub struct Authenticated(pub Principal);

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

/// An app a credential may be scoped to, as a type: the parameter of [`Scoped`].
pub trait AppScope: 'static {
    const APP: App;
}

/// The `page` app (the page API).
#[derive(Debug, Clone, Copy)]
pub enum PageApp {}

/// The `serve` app.
#[derive(Debug, Clone, Copy)]
pub enum ServeApp {}

/// The `link` app.
#[derive(Debug, Clone, Copy)]
pub enum LinkApp {}

/// The `base` app.
#[derive(Debug, Clone, Copy)]
pub enum BaseApp {}

impl AppScope for PageApp {
    const APP: App = App::Page;
}

impl AppScope for ServeApp {
    const APP: App = App::Serve;
}

impl AppScope for LinkApp {
    const APP: App = App::Link;
}

impl AppScope for BaseApp {
    const APP: App = App::Base;
}

/// The caller, authenticated, with `A`'s app in its credential's scope, and allowed to write
/// in it when the method changes things (anything but `GET` and `HEAD`): a bearer token
/// granted only `page:read` reads pages and changes none. Like [`Authenticated`], it refuses
/// before the handler reads the body: 401 for a missing or unknown credential, then 403
/// `insufficient_scope`.
#[derive(Debug, Clone)]
pub struct Scoped<A: AppScope>(pub Principal, PhantomData<A>);

impl<A: AppScope> FromRequest for Scoped<A> {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let authenticated = Authenticated::from_request(req, payload);
        let writes = !matches!(*req.method(), Method::GET | Method::HEAD);
        Box::pin(async move {
            let Authenticated(principal) = authenticated.await?;
            if writes && principal.has_app(A::APP) && !principal.can_write(A::APP) {
                Err(ApiError::new(
                    ErrorCode::InsufficientScope,
                    format!(
                        "this token may only read ({app}:read); changing anything needs the {app} scope",
                        app = A::APP.as_str()
                    ),
                ))
            } else if principal.has_app(A::APP) {
                Ok(Scoped(principal, PhantomData))
            } else {
                Err(ApiError::new(
                    ErrorCode::InsufficientScope,
                    format!(
                        "this key does not have the {} app in scope",
                        A::APP.as_str()
                    ),
                ))
            }
        })
    }
}
