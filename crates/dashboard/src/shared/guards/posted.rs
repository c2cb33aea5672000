//! Form posts as extractors: the body (refused first when too large, as it is read before
//! anything else), then the same-origin check, then the guard, then the form, each in that
//! order whichever finishes first.

use std::marker::PhantomData;

use actix_web::dev::Payload;
use actix_web::web::Bytes;
use actix_web::{FromRequest, HttpRequest};
use quire_edge::ApiError;
use quire_edge::body::Body;
use serde::de::DeserializeOwned;

use super::{Anyone, Checked, Guard, Refusal, SignedIn, state_of};
use crate::shared::session::{check_origin, form};

/// A form post from the dashboard's own origin by `G`: the origin is checked, then `G`, then
/// the form `F` is read (a field the form lacks is empty).
#[derive(Debug)]
pub(crate) struct Posted<F, G = Anyone>(pub F, pub G);

impl<F: FormBody, G: Guard> FromRequest for Posted<F, G> {
    type Error = Refusal;
    type Future = Checked<Self>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let body = Body::from_request(req, payload);
        let req = req.clone();
        Box::pin(async move {
            let body = body.await?;
            let state = state_of(&req)?;
            check_origin(&req, &state)?;
            let by = G::check(&state, &req).await?;
            Ok(Posted(F::read(body.0)?, by))
        })
    }
}

/// A form post from the dashboard's own origin by a full session, whose form is read before
/// the session is looked at: a malformed form is a 400 even to someone signed out.
#[derive(Debug)]
pub(crate) struct SignedInPost<F>(pub F, pub SignedIn);

impl<F: FormBody> FromRequest for SignedInPost<F> {
    type Error = Refusal;
    type Future = Checked<Self>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let body = Body::from_request(req, payload);
        let req = req.clone();
        Box::pin(async move {
            let body = body.await?;
            let state = state_of(&req)?;
            check_origin(&req, &state)?;
            let f = F::read(body.0)?;
            Ok(SignedInPost(f, SignedIn::check(&state, &req).await?))
        })
    }
}

/// A post without a form (a button), from the dashboard's own origin by `G`: the origin is
/// checked, then `G`. The body is not read.
#[derive(Debug)]
pub(crate) struct SameOrigin<G = Anyone>(pub G);

impl<G: Guard> FromRequest for SameOrigin<G> {
    type Error = Refusal;
    type Future = Checked<Self>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let state = state_of(&req)?;
            check_origin(&req, &state)?;
            Ok(SameOrigin(G::check(&state, &req).await?))
        })
    }
}

/// What a post's body is read as once its guards have passed.
pub(crate) trait FormBody: Sized + 'static {
    fn read(body: Bytes) -> Result<Self, ApiError>;
}

impl<T: DeserializeOwned + 'static> FormBody for T {
    fn read(body: Bytes) -> Result<Self, ApiError> {
        form(&body)
    }
}

/// A form read only when the handler asks, for a handler that refuses something else (its
/// path) before a malformed form.
#[derive(Debug)]
pub(crate) struct Unparsed<T>(Bytes, PhantomData<T>);

impl<T: DeserializeOwned> Unparsed<T> {
    pub(crate) fn parse(&self) -> Result<T, ApiError> {
        form(&self.0)
    }
}

impl<T: 'static> FormBody for Unparsed<T> {
    fn read(body: Bytes) -> Result<Self, ApiError> {
        Ok(Unparsed(body, PhantomData))
    }
}
