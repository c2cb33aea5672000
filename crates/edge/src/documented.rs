//! Routes registered and documented at once: [`Documented`] adds each service it registers
//! to the OpenAPI document, so a route is written once, on its handler; [`AllowedMethods`]
//! reads the finished document back for the origin's 405 answers.

use actix_web::dev::{HttpServiceFactory, ResourceDef};
use actix_web::{HttpRequest, web};
use quire_kernel::ErrorCode;
use utoipa_actix_web::OpenApiFactory;

use crate::error::ApiError;
use crate::routing::{allow_header, asked_method, method_not_allowed};

/// An actix `ServiceConfig` that adds what it registers to an OpenAPI document.
pub struct Documented<'a> {
    cfg: &'a mut web::ServiceConfig,
    document: utoipa::openapi::OpenApi,
}

impl<'a> Documented<'a> {
    pub fn new(cfg: &'a mut web::ServiceConfig, document: utoipa::openapi::OpenApi) -> Self {
        Self { cfg, document }
    }

    pub fn service<F>(&mut self, factory: F) -> &mut Self
    where
        F: HttpServiceFactory + OpenApiFactory + 'static,
    {
        self.document.paths.merge(factory.paths());
        let mut schemas = Vec::new();
        factory.schemas(&mut schemas);
        self.document
            .components
            .get_or_insert_with(Default::default)
            .schemas
            .extend(schemas);
        self.cfg.service(factory);
        self
    }

    /// The config itself, for what is registered without documentation.
    pub fn config(&mut self) -> &mut web::ServiceConfig {
        self.cfg
    }

    /// The config back, and the document (the caller applies its modifiers).
    pub fn finish(self) -> (&'a mut web::ServiceConfig, utoipa::openapi::OpenApi) {
        (self.cfg, self.document)
    }
}

impl std::fmt::Debug for Documented<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Documented")
            .field("paths", &self.document.paths.paths.len())
            .finish_non_exhaustive()
    }
}

/// The methods of every documented path, for 405 answers.
#[derive(Clone)]
pub struct AllowedMethods(std::sync::Arc<Vec<(ResourceDef, String)>>);

impl std::fmt::Debug for AllowedMethods {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("AllowedMethods")
            .field(&self.0.len())
            .finish()
    }
}

impl AllowedMethods {
    /// The document's paths, and `readable`: paths served outside it, `GET` only.
    pub fn of(document: &utoipa::openapi::OpenApi, readable: &[&str]) -> Self {
        let readable = readable
            .iter()
            .map(|path| (ResourceDef::new(*path), allow_header(["GET"])));
        let table = document
            .paths
            .paths
            .iter()
            .map(|(path, item)| {
                let allow = allow_header(
                    [
                        ("GET", &item.get),
                        ("POST", &item.post),
                        ("PUT", &item.put),
                        ("PATCH", &item.patch),
                        ("DELETE", &item.delete),
                    ]
                    .into_iter()
                    .filter(|(_, operation)| operation.is_some())
                    .map(|(method, _)| method),
                );
                (ResourceDef::new(path.as_str()), allow)
            })
            .chain(readable)
            .collect();
        Self(std::sync::Arc::new(table))
    }

    /// 405 with `Allow` on a documented path (RFC 9110), else a JSON 404.
    pub fn refuse(&self, req: &HttpRequest) -> actix_web::HttpResponse {
        let Some((_, allow)) = self.0.iter().find(|(def, _)| def.is_match(req.path())) else {
            return actix_web::ResponseError::error_response(&ApiError::new(
                ErrorCode::NotFound,
                // The path is not repeated: it can be long, or carry a secret (an upload
                // URL's token under a mistyped route).
                format!("no {} route at this path", asked_method(req)),
            ));
        };
        method_not_allowed(req, allow)
    }
}
