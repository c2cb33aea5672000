//! `/api/object/v1/objects…`: every route needs `serve` in the credential's apps.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, delete, get, patch, post, put, web};
use futures_util::StreamExt;
use quire_edge::answer::{Answer, Created, NoContent};
use quire_edge::auth::{Scoped, ServeApp};
use quire_edge::body::Body;
use quire_edge::json::parse;
use quire_edge::refusals::ScopeRefusals;
use quire_edge::{ApiError, AppState};
use quire_kernel::{ErrorCode, ObjectId};
use quire_objects::{NewObject, ObjectPatch};
use serde::Deserialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::OBJECT;
use crate::dto::{ObjectDto, ObjectList, ObjectQuota};
use crate::upload::{self, Fields, PartInfo, admit, declared_length};

fn object_id(raw: &str) -> Result<ObjectId, ApiError> {
    Uuid::parse_str(raw)
        .map(ObjectId)
        .map_err(|_| ApiError::not_found("object"))
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::InvalidRequest, message)
}

/// The text fields of an upload as a new object's; `allow` is a JSON array of emails or
/// handles, `maxViews` a positive integer.
fn new_object(mut fields: Fields, part: PartInfo) -> Result<NewObject, ApiError> {
    let allow = match fields.remove("allow") {
        Some(raw) => serde_json::from_str::<Vec<String>>(&raw)
            .map_err(|_| invalid("allow must be a JSON array of emails or handles"))?,
        None => Vec::new(),
    };
    let max_views = match fields.remove("maxViews") {
        Some(raw) => Some(
            raw.trim()
                .parse::<i128>()
                .map_err(|_| invalid("maxViews must be a positive integer"))?,
        ),
        None => None,
    };
    let mut take = |name: &str| fields.remove(name);
    let object = NewObject {
        title: take("title"),
        slug: take("slug"),
        filename: take("filename").or(part.filename),
        content_type: take("contentType"),
        project: take("project"),
        declared_size: part.declared_size,
        policy: quire_objects::PolicyInput {
            access: take("access"),
            password: take("password"),
            expires_at: take("expiresAt"),
            alias: take("alias"),
            allow,
            max_views,
        },
    };
    if let Some(unknown) = fields.keys().next() {
        return Err(invalid(format!("unknown field {unknown:?}")));
    }
    Ok(object)
}

/// The fields of a multipart upload, as documented (the file part streams; it is never
/// held whole).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = crate::examples::upload_form)]
#[allow(dead_code)]
pub struct UploadForm {
    /// Text fields first, then this part: the file's bytes.
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
    /// 1-200 characters; default the file name.
    title: Option<String>,
    /// Lower-case letters, digits and `-`; one namespace with the owner's pages.
    slug: Option<String>,
    /// What a download is saved as; default the file part's name.
    filename: Option<String>,
    /// Default: guessed from the file name.
    content_type: Option<String>,
    /// `private` (default), `password`, `allow_list` or `public`.
    access: Option<String>,
    /// Required when access is `password`: 8-256 characters.
    password: Option<String>,
    /// A JSON array of emails or handles.
    allow: Option<String>,
    /// RFC 3339, in the future.
    expires_at: Option<String>,
    /// Downloads people may make.
    max_views: Option<u64>,
    /// 3-64 of `A-Z a-z 0-9 _ -`.
    alias: Option<String>,
    /// Project slug (default: the key's home project).
    project: Option<String>,
}

/// Upload a file as an object: `multipart/form-data`, text fields then one `file` part.
#[utoipa::path(tag = "objects",
    security(("bearer" = [])),
    request_body(content = UploadForm, content_type = "multipart/form-data"),
    responses(
        (status = 201, body = ObjectDto,
            headers(("Location" = String, description = "`/api/object/v1/objects/{id}`"))),
        (status = 400, description = "invalid_multipart_body, invalid_request, password_required"),
        ScopeRefusals,
        (status = 409, description = "slug_conflict, alias_conflict"),
        (status = 413, description = "payload_too_large (limit: object_size), storage_quota_exceeded (limit: object_bytes, with used and quota)"),
        (status = 429, description = "rate_limited (limit: bodies_in_flight), with Retry-After"),
        (status = 500, description = "public_id_exhausted, profile_handle_missing"),
        (status = 503, description = "server_busy (limit: bodies_in_flight), with Retry-After")))]
#[post("/objects")]
pub async fn create(
    state: web::Data<AppState>,
    auth: Scoped<ServeApp>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<Created<ObjectDto>, ApiError> {
    let principal = auth.0;
    let mut body = admit(&req)?;
    let view = upload::multipart(&req, payload, &mut body, async |fields, part| {
        let fields = new_object(fields, part)
            .map_err(|e| quire_objects::ObjectError::Invalid(e.message().to_owned()))?;
        state.objects.begin(&principal, fields, None).await
    })
    .await?;
    Ok(Created::at(
        format!("{OBJECT}/objects/{}", view.object.id.0),
        ObjectDto::from(view),
    ))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct RawQuery {
    /// What a download is saved as (required).
    filename: Option<String>,
    title: Option<String>,
    slug: Option<String>,
    /// `private` (default), `password`, `allow_list` or `public`.
    access: Option<String>,
    password: Option<String>,
    /// Emails or handles, comma-separated.
    allow: Option<String>,
    expires_at: Option<String>,
    max_views: Option<String>,
    alias: Option<String>,
    project: Option<String>,
}

/// Upload a file as the raw body (`curl -T FILE '…/objects?filename=FILE'`); its
/// `Content-Type` is the object's.
#[utoipa::path(tag = "objects",
    security(("bearer" = [])),
    params(RawQuery),
    request_body(content = Vec<u8>, content_type = "application/octet-stream",
        example = json!(crate::examples::BYTES)),
    responses(
        (status = 201, body = ObjectDto),
        (status = 400, description = "invalid_request, password_required"),
        ScopeRefusals,
        (status = 409, description = "slug_conflict, alias_conflict"),
        (status = 413, description = "payload_too_large (limit: object_size), storage_quota_exceeded (limit: object_bytes, with used and quota)"),
        (status = 429, description = "rate_limited (limit: bodies_in_flight), with Retry-After"),
        (status = 500, description = "public_id_exhausted, profile_handle_missing"),
        (status = 503, description = "server_busy (limit: bodies_in_flight), with Retry-After")))]
#[put("/objects")]
pub async fn create_raw(
    state: web::Data<AppState>,
    auth: Scoped<ServeApp>,
    req: HttpRequest,
    query: web::Query<RawQuery>,
    payload: web::Payload,
) -> Result<Created<ObjectDto>, ApiError> {
    let q = query.into_inner();
    let Some(filename) = q.filename else {
        return Err(invalid("filename is required in the query"));
    };
    let max_views = q
        .max_views
        .map(|m| m.trim().parse::<i128>())
        .transpose()
        .map_err(|_| invalid("maxViews must be a positive integer"))?;
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .filter(|t| !t.is_empty() && *t != "application/x-www-form-urlencoded")
        .map(str::to_owned);
    let fields = NewObject {
        title: q.title,
        slug: q.slug,
        filename: Some(filename),
        content_type,
        project: q.project,
        declared_size: declared_length(&req),
        policy: quire_objects::PolicyInput {
            access: q.access,
            password: q.password,
            allow: q
                .allow
                .map(|a| {
                    a.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            expires_at: q.expires_at,
            max_views,
            alias: q.alias,
        },
    };
    let mut body = admit(&req)?;
    let started = state.objects.begin(&auth.0, fields, None).await?;
    let view = upload::raw(payload, &mut body, started).await?;
    Ok(Created::at(
        format!("{OBJECT}/objects/{}", view.object.id.0),
        ObjectDto::from(view),
    ))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// `active` or `archived`; default both.
    status: Option<String>,
    /// Project slug (default: the key's home project).
    project: Option<String>,
}

/// List a project's objects, newest first, with the account's object bytes beside its quota.
#[utoipa::path(tag = "objects",
    security(("bearer" = [])),
    params(ListQuery),
    responses(
        (status = 200, body = ObjectList),
        (status = 400, description = "invalid_request (status)"),
        ScopeRefusals))]
#[get("/objects")]
pub async fn list(
    state: web::Data<AppState>,
    auth: Scoped<ServeApp>,
    query: web::Query<ListQuery>,
) -> Result<Answer<ObjectList>, ApiError> {
    let (objects, project) = state
        .objects
        .list(&auth.0, query.project.as_deref(), query.status.as_deref())
        .await?;
    let usage = state.objects.usage(&auth.0, Some(project.as_str())).await?;
    Ok(Answer::ok(ObjectList {
        objects: objects.into_iter().map(ObjectDto::from).collect(),
        project: project.as_str().to_owned(),
        quota: ObjectQuota {
            bytes: usage.into(),
        },
    }))
}

/// Fetch an object.
#[utoipa::path(tag = "objects",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, body = ObjectDto),
        ScopeRefusals,
        (status = 404, description = "not_found")))]
#[get("/objects/{id}")]
pub async fn get(
    state: web::Data<AppState>,
    auth: Scoped<ServeApp>,
    id: web::Path<String>,
) -> Result<Answer<ObjectDto>, ApiError> {
    let view = state.objects.get(&auth.0, object_id(&id)?).await?;
    Ok(Answer::ok(ObjectDto::from(view)))
}

/// Download an object's bytes as its owner: no view is counted and no policy applies.
#[utoipa::path(tag = "objects",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, description = "the bytes, as an attachment", body = Vec<u8>,
            content_type = "application/octet-stream", example = json!(crate::examples::BYTES)),
        ScopeRefusals,
        (status = 404, description = "not_found")))]
#[get("/objects/{id}/content")]
pub async fn content(
    state: web::Data<AppState>,
    auth: Scoped<ServeApp>,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let download = state.objects.download(&auth.0, object_id(&id)?).await?;
    let object = &download.object;
    let body = download
        .bytes
        .map(|piece| piece.map_err(|e| std::io::Error::other(e.to_string())));
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, object.content_type.clone()))
        .insert_header((
            header::CONTENT_DISPOSITION,
            quire_objects::disposition::attachment(&object.filename),
        ))
        .insert_header((header::ETAG, format!("\"{}\"", object.sha256)))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::CACHE_CONTROL, "private, no-store"))
        .no_chunking(object.size_bytes)
        .streaming(body))
}

quire_edge::policy_patch_body! {
    /// The fields to change; `null` clears `password`, `expiresAt`, `maxViews` and `alias`.
    /// The bytes, codes and counts stay.
    #[schema(example = crate::examples::patch_object_body)]
    pub struct PatchObjectBody {
        /// 1-200 characters.
        #[serde(default)]
        #[schema(min_length = 1, max_length = 200)]
        pub title: Option<String>,
        /// A new slug (one namespace with the owner's pages).
        #[serde(default)]
        pub slug: Option<String>,
        /// What a download is saved as.
        #[serde(default)]
        pub filename: Option<String>,
        /// A media type such as `application/pdf`.
        #[serde(default)]
        pub content_type: Option<String>,
        /// `active` or `archived` (an archived object answers 404 to visitors).
        #[serde(default)]
        pub status: Option<String>,
    }
    max_views: "A new download budget; `null` removes it.",
    alias: "A new alias of its short link; `null` removes it.",
}

/// Change an object's metadata or policy.
#[utoipa::path(tag = "objects",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    request_body = PatchObjectBody,
    responses(
        (status = 200, body = ObjectDto),
        (status = 400, description = "invalid_json, invalid_request, password_required"),
        ScopeRefusals,
        (status = 404, description = "not_found"),
        (status = 409, description = "slug_taken, alias_conflict")))]
#[patch("/objects/{id}")]
pub async fn patch(
    state: web::Data<AppState>,
    auth: Scoped<ServeApp>,
    id: web::Path<String>,
    body: Body,
) -> Result<Answer<ObjectDto>, ApiError> {
    let id = object_id(&id)?;
    let mut sent: PatchObjectBody = parse(&body.0)?;
    let policy = sent.policy();
    let view = state
        .objects
        .update(
            &auth.0,
            id,
            ObjectPatch {
                title: sent.title,
                slug: sent.slug,
                filename: sent.filename,
                content_type: sent.content_type,
                status: sent.status,
                policy,
            },
        )
        .await?;
    Ok(Answer::ok(ObjectDto::from(view)))
}

/// Replace an object's bytes (multipart with one `file` part, or a raw body): its URL,
/// link, policy and counts stay.
#[utoipa::path(tag = "objects",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    request_body(content = UploadForm, content_type = "multipart/form-data"),
    responses(
        (status = 200, body = ObjectDto),
        (status = 400, description = "invalid_multipart_body, invalid_request"),
        ScopeRefusals,
        (status = 404, description = "not_found"),
        (status = 413, description = "payload_too_large (limit: object_size), storage_quota_exceeded (limit: object_bytes, with used and quota)"),
        (status = 429, description = "rate_limited (limit: bodies_in_flight), with Retry-After"),
        (status = 503, description = "server_busy (limit: bodies_in_flight), with Retry-After")))]
#[put("/objects/{id}/content")]
pub async fn replace(
    state: web::Data<AppState>,
    auth: Scoped<ServeApp>,
    id: web::Path<String>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<Answer<ObjectDto>, ApiError> {
    let id = object_id(&id)?;
    let principal = auth.0;
    let mut body = admit(&req)?;
    let is_multipart = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.to_ascii_lowercase().starts_with("multipart/"));
    let view = if is_multipart {
        upload::multipart(&req, payload, &mut body, async |mut fields, part| {
            let filename = fields.remove("filename").or(part.filename);
            let content_type = fields.remove("contentType");
            if let Some(unknown) = fields.keys().next() {
                return Err(quire_objects::ObjectError::Invalid(format!(
                    "unknown field {unknown:?}"
                )));
            }
            state
                .objects
                .begin_replace(
                    &principal,
                    id,
                    filename.as_deref(),
                    content_type.as_deref(),
                    part.declared_size,
                )
                .await
        })
        .await?
    } else {
        let content_type = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .filter(|t| !t.is_empty());
        // A request with neither a body nor a type is a client that forgot the content, not
        // an empty file: an empty file says its type.
        if content_type.is_none() && declared_length(&req).is_none_or(|n| n == 0) {
            return Err(quire_objects::ObjectError::Invalid(
                "send the new content: multipart/form-data with a file part, or the bytes with \
                 their Content-Type"
                    .into(),
            )
            .into());
        }
        let started = state
            .objects
            .begin_replace(&principal, id, None, content_type, declared_length(&req))
            .await?;
        upload::raw(payload, &mut body, started).await?
    };
    Ok(Answer::ok(ObjectDto::from(view)))
}

/// Delete an object: its bytes, link and record.
#[utoipa::path(tag = "objects",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    responses(
        (status = 204, description = "deleted"),
        ScopeRefusals,
        (status = 404, description = "not_found"),
        (status = 500, description = "storage_cleanup_failed, link_cleanup_failed")))]
#[delete("/objects/{id}")]
pub async fn delete(
    state: web::Data<AppState>,
    auth: Scoped<ServeApp>,
    id: web::Path<String>,
) -> Result<NoContent, ApiError> {
    state.objects.delete(&auth.0, object_id(&id)?).await?;
    Ok(NoContent)
}
