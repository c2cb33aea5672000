//! The Files page's upload: `PUT /account/files?filename=&project=` with the file as the raw
//! body, sent by the page's script (`assets/files.js`) so it can show the progress. The
//! bytes stream piece by piece into the object service's `Upload`, which hashes, counts and
//! caps them on their way to storage: nothing here holds the file. The object starts
//! private; the script then posts the upload form's settings to the new object's detail,
//! so a password travels in a form body, never in a URL.
//!
//! The answer is JSON for the script: `201` with the new object's id and detail path, or
//! the API's error body (`413 payload_too_large` past the cap, refused before any byte is
//! stored when `Content-Length` says so, else as the bytes pass it, leaving nothing).

use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, web};
use futures_util::StreamExt;
use quire_edge::{ApiError, AppState};
use quire_kernel::ErrorCode;
use quire_objects::{NewObject, ObjectView};

use crate::shared::guards::{Owner, SameOrigin};
use crate::shared::session::query;

/// What the script is told of the new object.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Uploaded {
    id: String,
    title: String,
    size_bytes: u64,
    /// The object's page in the dashboard.
    detail: String,
    /// The list of its project, naming it as just uploaded.
    list: String,
}

impl From<ObjectView> for Uploaded {
    fn from(v: ObjectView) -> Self {
        let id = v.object.id.0.to_string();
        Self {
            detail: format!("/account/files/{id}"),
            list: format!(
                "/account/files?project={}&uploaded={id}",
                v.project_slug.as_str()
            ),
            id,
            title: v.object.title,
            size_bytes: v.object.size_bytes,
        }
    }
}

/// The type the browser gave the file; none (or the form type a bare request gets) lets
/// the object service guess it from the file name.
fn content_type(req: &HttpRequest) -> Option<String> {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|t| !t.is_empty() && !t.starts_with("application/x-www-form-urlencoded"))
        .map(str::to_owned)
}

/// `PUT /account/files?filename=&project=`: the same-origin check, then the owner, as every
/// dashboard post; the body is read only after both.
pub async fn upload(
    state: web::Data<AppState>,
    req: HttpRequest,
    SameOrigin(Owner { principal, .. }): SameOrigin<Owner>,
    mut payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let q = query(&req);
    let Some(filename) = q.get("filename").filter(|f| !f.trim().is_empty()) else {
        return Err(ApiError::new(
            ErrorCode::InvalidRequest,
            "filename is required in the query",
        ));
    };
    let declared_size = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    let mut upload = state
        .objects
        .begin(
            &principal,
            NewObject {
                filename: Some(filename.clone()),
                content_type: content_type(&req),
                project: q.get("project").filter(|p| !p.is_empty()).cloned(),
                declared_size,
                ..NewObject::default()
            },
            None,
        )
        .await?;
    while let Some(piece) = payload.next().await {
        match piece {
            // A refused piece (over the cap, storage) has already abandoned the upload.
            Ok(bytes) => upload.write(bytes).await?,
            Err(e) => {
                upload.abandon().await;
                return Err(ApiError::new(
                    ErrorCode::InvalidRequest,
                    format!("the file did not arrive whole: {e}"),
                ));
            }
        }
    }
    let made = Uploaded::from(upload.finish().await?);
    Ok(HttpResponse::build(StatusCode::CREATED)
        .insert_header((header::LOCATION, made.detail.clone()))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .json(made))
}
