//! The object tools: list, change and delete objects (single files published like pages),
//! on the object service's use cases with the REST API's codes, and `create_upload`, which
//! gives a one-time upload URL and a `curl` line instead of taking the bytes: an agent with
//! a shell moves a file without its bytes passing through the model. An object is named by
//! its id, or by its slug, public id or alias among the home project's objects.

use quire_kernel::ObjectId;
use quire_objects::{NewObject, ObjectPatch, ObjectView};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use time::format_description::well_known::Rfc3339;

use super::common::{Call, DeletedIdOut, Shown, ToolError, confirmed, id_in, not_named, refused};
use super::policy::{PolicySchema, policy_args};

/// Where an upload URL's bytes go: the route of `quire-objects-api` that takes them (no
/// surface depends on another, so the path is repeated here; the black-box suite runs the
/// URL a tool gives).
const UPLOADS_PATH: &str = "/api/object/v1/uploads/";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListObjectsArgs {
    /// Project slug; default: the home project.
    pub project: Option<String>,
    /// `active` or `archived`; default both.
    pub status: Option<String>,
}

/// How `update_object` words its policy fields.
const UPDATE: PolicySchema = PolicySchema {
    access: "`private`, `password`, `allow_list` or `public`.",
    ..PolicySchema::UPDATE
};

policy_args! {
    pub struct UpdateObjectArgs {
        /// The object: id, slug, public id or alias.
        pub object: String,
        pub title: Option<String>,
        pub slug: Option<String>,
        pub filename: Option<String>,
        pub content_type: Option<String>,
        /// `active` or `archived`.
        pub status: Option<String>,
    }
    update: UPDATE
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteObjectArgs {
    /// The object: id, slug, public id or alias.
    pub object: String,
    /// The object's slug, typed again to confirm.
    pub confirm: String,
}

/// How `create_upload` words its policy fields.
const CREATE: PolicySchema = PolicySchema {
    access: "`private` (default), `password`, `allow_list` or `public`.",
    max_views: "Downloads allowed.",
    alias: "Short link alias.",
    ..PolicySchema::CREATE
};

policy_args! {
    pub struct CreateUploadArgs {
        /// E.g. `report.pdf`.
        pub filename: String,
        pub title: Option<String>,
        pub slug: Option<String>,
        pub content_type: Option<String>,
        /// Project slug; default: the home project.
        pub project: Option<String>,
        /// Default and ceiling: the server's limit.
        pub max_bytes: Option<u64>,
    }
    create: CREATE
}

/// An object as the tools show it.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObjectOut {
    pub id: String,
    pub slug: String,
    pub title: String,
    pub filename: String,
    pub content_type: String,
    pub size_bytes: u64,
    pub url: String,
    pub short_url: String,
    pub status: String,
    pub project: String,
    #[serde(flatten)]
    pub shown: Shown,
}

impl From<ObjectView> for ObjectOut {
    fn from(v: ObjectView) -> Self {
        let o = v.object;
        Self {
            id: o.id.0.to_string(),
            slug: o.slug,
            title: o.title,
            filename: o.filename,
            content_type: o.content_type,
            size_bytes: o.size_bytes,
            url: v.url,
            short_url: v.short_url,
            status: o.status.as_str().to_owned(),
            project: v.project_slug.as_str().to_owned(),
            shown: Shown::of(&v.link),
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ObjectsOut {
    pub objects: Vec<ObjectOut>,
    pub project: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UploadOut {
    /// PUT the file's bytes here as the raw body, once, no credential.
    pub upload_url: String,
    /// A shell line doing that; change the local path if the file is elsewhere.
    pub curl: String,
    pub expires_at: String,
    pub max_bytes: u64,
    /// The object it makes (served once the bytes arrive).
    pub id: String,
    pub url: String,
    pub short_url: String,
    pub slug: String,
}

/// `text` single-quoted for a POSIX shell.
fn shell_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The object named by its id, or by a slug, public id or alias among the home project's.
async fn find(cx: &Call<'_>, name: &str) -> Result<ObjectView, ToolError> {
    let objects = &cx.state.objects;
    if let Some(id) = id_in(name) {
        return objects
            .get(cx.principal(), ObjectId(id))
            .await
            .map_err(refused);
    }
    let (found, _) = objects
        .list(cx.principal(), None, None)
        .await
        .map_err(refused)?;
    found
        .into_iter()
        .find(|v| {
            v.object.slug == name
                || v.object.public_id == name
                || v.link.alias.as_deref() == Some(name)
        })
        .ok_or_else(|| not_named("object", name))
}

pub(super) async fn list_objects(
    cx: &Call<'_>,
    sent: ListObjectsArgs,
) -> Result<ObjectsOut, ToolError> {
    let (objects, project) = cx
        .state
        .objects
        .list(
            cx.principal(),
            sent.project.as_deref(),
            sent.status.as_deref(),
        )
        .await
        .map_err(refused)?;
    Ok(ObjectsOut {
        objects: objects.into_iter().map(ObjectOut::from).collect(),
        project: project.as_str().to_owned(),
    })
}

pub(super) async fn update_object(
    cx: &Call<'_>,
    mut sent: UpdateObjectArgs,
) -> Result<ObjectOut, ToolError> {
    let id = find(cx, &sent.object).await?.object.id;
    cx.acts_on(id.0);
    let policy = sent.policy();
    let view = cx
        .state
        .objects
        .update(
            cx.principal(),
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
        .await
        .map_err(refused)?;
    Ok(ObjectOut::from(view))
}

pub(super) async fn delete_object(
    cx: &Call<'_>,
    sent: DeleteObjectArgs,
) -> Result<DeletedIdOut, ToolError> {
    let view = find(cx, &sent.object).await?;
    cx.acts_on(view.object.id.0);
    confirmed(sent.confirm == view.object.slug, || {
        format!(
            "confirm must be the object's slug {:?}; nothing was deleted",
            view.object.slug
        )
    })?;
    cx.state
        .objects
        .delete(cx.principal(), view.object.id)
        .await
        .map_err(refused)?;
    Ok(DeletedIdOut {
        deleted: view.object.id.0.to_string(),
    })
}

pub(super) async fn create_upload(
    cx: &Call<'_>,
    mut sent: CreateUploadArgs,
) -> Result<UploadOut, ToolError> {
    let policy = sent.policy();
    let offer = cx
        .state
        .objects
        .offer_upload(
            cx.principal(),
            NewObject {
                title: sent.title,
                slug: sent.slug,
                filename: Some(sent.filename),
                content_type: sent.content_type,
                project: sent.project,
                declared_size: None,
                policy,
            },
            sent.max_bytes,
        )
        .await
        .map_err(refused)?;
    cx.acts_on(offer.view.object.id.0);
    let upload_url = format!(
        "{}{UPLOADS_PATH}{}",
        cx.state.base_url.trim_end_matches('/'),
        offer.token.expose()
    );
    let object = offer.view.object;
    let curl = format!(
        "curl -sS -T {} {}",
        shell_quoted(&format!("./{}", object.filename)),
        shell_quoted(&upload_url)
    );
    Ok(UploadOut {
        upload_url,
        curl,
        expires_at: offer.expires_at.format(&Rfc3339).unwrap_or_default(),
        max_bytes: offer.max_bytes,
        id: object.id.0.to_string(),
        url: offer.view.url,
        short_url: offer.view.short_url,
        slug: object.slug,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_local_path_is_quoted_for_the_shell() {
        assert_eq!(shell_quoted("./report.pdf"), "'./report.pdf'");
        assert_eq!(shell_quoted("./it's.pdf"), r"'./it'\''s.pdf'");
    }
}
