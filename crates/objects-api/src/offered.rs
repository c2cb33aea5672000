//! `PUT /api/object/v1/uploads/{token}`: the bytes of an object offered an upload URL (the
//! agent endpoint's `create_upload`), as a raw body (`curl -T FILE URL`). The token is the
//! credential, so no `Authorization` is asked; the object's fields and policy were settled
//! when the URL was made. The request log records the route, never the path, so the token
//! is not logged; no answer repeats it.

use actix_web::{HttpRequest, put, web};
use quire_edge::answer::Created;
use quire_edge::streamed::StreamedBody;
use quire_edge::{ApiError, AppState};

use crate::OBJECT;
use crate::dto::ObjectDto;
use crate::upload::{declared_length, raw};

/// Upload the bytes of an upload URL, once: the body is the file. The URL is spent by the
/// first request that reaches it, whatever its outcome.
#[utoipa::path(tag = "objects",
    params(("token" = String, Path,
        description = "The upload URL's one-time token (43 characters of base64url)")),
    request_body(content = Vec<u8>, content_type = "application/octet-stream",
        example = json!(crate::examples::BYTES)),
    responses(
        (status = 201, body = ObjectDto,
            headers(("Location" = String, description = "`/api/object/v1/objects/{id}`"))),
        (status = 400, description = "invalid_grant (already used), expired_token, invalid_request (the body did not arrive whole)"),
        (status = 404, description = "not_found (no such upload URL)"),
        (status = 413, description = "payload_too_large (over the URL's maxBytes; limit: object_size), storage_quota_exceeded (limit: object_bytes, with used and quota)"),
        (status = 429, description = "rate_limited (limit: bodies_in_flight), with Retry-After; the URL is not spent"),
        (status = 503, description = "server_busy (limit: bodies_in_flight), with Retry-After; the URL is not spent")))]
#[put("/uploads/{token}")]
pub async fn upload_by_url(
    state: web::Data<AppState>,
    token: web::Path<String>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<Created<ObjectDto>, ApiError> {
    // The token is the credential, so it is looked up before it is given room: a made-up
    // one would have a share of its own. Refused for room, the URL is not spent.
    state.objects.check_offer(&token).await?;
    let mut body = StreamedBody::admit(&req, Some(token.as_bytes()))?;
    let started = state
        .objects
        .accept_offer(&token, declared_length(&req))
        .await?;
    let view = raw(payload, &mut body, started).await?;
    Ok(Created::at(
        format!("{OBJECT}/objects/{}", view.object.id.0),
        ObjectDto::from(view),
    ))
}
