//! The Files page: the account's objects per project (title and file name, address, access
//! and state, size, downloads against the budget, last change) with the upload form (a drop
//! zone that is also a plain file input; the bytes go to `upload`), and an object's
//! detail: its address and short link with the QR code, file name, type, size and SHA-256,
//! the settings the API offers (title, file name, alias, access, password, allow list,
//! expiry, budget), the downloads chart, archive, restore and delete. Each action goes through
//! the object service, as the API's routes do.

pub(crate) mod upload;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use quire_kernel::{InfraError, ObjectId, Principal};
use quire_objects::{ObjectError, ObjectPatch, ObjectView};
use time::OffsetDateTime;

use quire_edge::ApiError;
use quire_edge::AppState;

use crate::pages::qr_svg;
use crate::pages::row::{ACCESS_CHOICES, human_bytes};
use crate::shared::behind_link::{BehindLink, PolicyFacts, expires, max_views, optional};
use crate::shared::chart::views_chart;
use crate::shared::guards::Owner;
use crate::shared::nav::{Who, project_slugs, section};
use crate::shared::render::{listed, page_with_uploads};
use crate::shared::session::query;
use crate::shared::when::When;

/// An object as the list and the detail show it.
pub(crate) struct FileRow {
    id: String,
    title: String,
    filename: String,
    content_type: String,
    /// Served as a sandboxed download whatever the visitor asks (HTML, SVG, XML).
    active_content: bool,
    url: String,
    short_url: String,
    alias: String,
    project: String,
    /// `active` or `archived`: what archive and restore change.
    status: &'static str,
    policy: PolicyFacts,
    size: String,
    size_bytes: u64,
    sha256: String,
    created: When,
    updated: When,
}

impl FileRow {
    pub(crate) fn new(v: ObjectView, now: OffsetDateTime) -> Self {
        let ObjectView {
            object: o,
            link: l,
            url,
            short_url,
            project_slug,
        } = v;
        let status = o.status.as_str();
        let policy = PolicyFacts::new(&l, o.archived_at.is_some(), now);
        Self {
            id: o.id.0.to_string(),
            active_content: o.is_active_content(),
            title: o.title,
            filename: o.filename,
            content_type: o.content_type,
            url,
            short_url,
            alias: l.alias.unwrap_or_default(),
            project: project_slug.as_str().to_owned(),
            status,
            policy,
            size: human_bytes(o.size_bytes),
            size_bytes: o.size_bytes,
            sha256: o.sha256,
            created: When::new(o.created_at, now),
            updated: When::new(o.updated_at, now),
        }
    }
}

#[derive(Template)]
#[template(path = "files.html")]
struct FilesPage<'a> {
    signed_in_as: Option<Who>,
    error: Option<String>,
    /// The object just uploaded, when the upload script came back here.
    uploaded: Option<(String, String)>,
    projects: Vec<String>,
    project: &'a str,
    status: &'a str,
    files: Vec<FileRow>,
    accesses: [(&'static str, &'static str); 4],
    /// The server's cap on one object, in words and in bytes (the script checks it first).
    max_size: String,
    max_bytes: u64,
}

#[derive(Template)]
#[template(path = "file_detail.html")]
struct DetailPage {
    signed_in_as: Option<Who>,
    error: Option<String>,
    f: FileRow,
    /// The allow list, one handle or email a line.
    allow: String,
    qr_svg: String,
    accesses: [(&'static str, &'static str); 4],
    chart: String,
    chart_days: u16,
}

/// How many days the downloads chart shows.
const CHART_DAYS: u16 = 30;

/// The settings form of the detail (and of the upload form, which the upload script posts to
/// the new object once its bytes are in); a field a form lacks is empty.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct FileFields {
    action: String,
    title: String,
    filename: String,
    alias: String,
    access: String,
    password: String,
    allow: String,
    expires_at: String,
    max_views: String,
    confirm: String,
}

/// The allow list as typed: handles or emails, one a line or separated by commas.
fn allow_entries(raw: &str) -> Vec<String> {
    raw.split([',', '\n', '\r'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

fn settings(f: &FileFields) -> Result<ObjectPatch, ObjectError> {
    Ok(ObjectPatch {
        title: optional(&f.title),
        filename: optional(&f.filename),
        policy: quire_links::PolicyPatch {
            alias: Some(optional(&f.alias)),
            access: optional(&f.access),
            password: optional(&f.password).map(Some),
            allow: Some(allow_entries(&f.allow)),
            expires_at: Some(expires(&f.expires_at)),
            max_views: Some(max_views(&f.max_views, ObjectError::Invalid)?),
        },
        ..ObjectPatch::default()
    })
}

/// `GET /account/files?project=&status=&uploaded=`.
pub async fn files(
    state: web::Data<AppState>,
    req: HttpRequest,
    Owner { account, principal }: Owner,
) -> Result<HttpResponse, ApiError> {
    let q = query(&req);
    let projects = project_slugs(&state, &principal).await?;
    let status = if q.get("status").is_some_and(|s| s == "archived") {
        "archived"
    } else {
        "active"
    };
    let now = state.links.now();
    let outcome = state
        .objects
        .list(
            &principal,
            q.get("project").map(String::as_str),
            Some(status),
        )
        .await
        .map(|(views, slug)| (slug, views));
    let (status_code, error, project, rows) = listed(outcome, |v| FileRow::new(v, now))?.parts();
    let uploaded = q.get("uploaded").and_then(|id| {
        rows.iter()
            .find(|r| &r.id == id)
            .map(|r| (r.id.clone(), r.title.clone()))
    });
    let max_bytes = state.objects.max_bytes();
    page_with_uploads(
        &state,
        status_code,
        &FilesPage {
            signed_in_as: Who::of(&account, section::FILES),
            error,
            uploaded,
            projects,
            project: &project,
            status,
            files: rows,
            accesses: ACCESS_CHOICES,
            max_size: human_bytes(max_bytes),
            max_bytes,
        },
    )
}

pub(crate) fn object_id(raw: &str) -> Result<ObjectId, ApiError> {
    uuid::Uuid::parse_str(raw)
        .map(ObjectId)
        .map_err(|_| ApiError::from(ObjectError::NotFound))
}

/// The Files page's own part of the detail's actions.
pub(crate) enum Files {}

impl BehindLink for Files {
    type Id = ObjectId;
    type Form = FileFields;
    type Patch = ObjectPatch;
    type Error = ObjectError;
    const PAGES: &'static str = "/account/files";
    const NOUN: &'static str = "file";

    fn id(raw: &str) -> Result<ObjectId, ApiError> {
        object_id(raw)
    }

    fn uuid(id: ObjectId) -> uuid::Uuid {
        id.0
    }

    fn action(f: &FileFields) -> (&str, &str) {
        (&f.action, &f.confirm)
    }

    fn invalid(message: String) -> ObjectError {
        ObjectError::Invalid(message)
    }

    fn infra(e: ObjectError) -> Result<InfraError, ObjectError> {
        match e {
            ObjectError::Infra(e) => Ok(e),
            e => Err(e),
        }
    }

    fn status(status: &'static str) -> ObjectPatch {
        ObjectPatch {
            status: Some(status.into()),
            ..ObjectPatch::default()
        }
    }

    fn settings(f: &FileFields) -> Result<ObjectPatch, ObjectError> {
        settings(f)
    }

    async fn project(
        state: &AppState,
        principal: &Principal,
        id: ObjectId,
    ) -> Result<String, ObjectError> {
        let view = state.objects.get(principal, id).await?;
        Ok(view.project_slug.as_str().to_owned())
    }

    async fn delete(
        state: &AppState,
        principal: &Principal,
        id: ObjectId,
    ) -> Result<(), ObjectError> {
        state.objects.delete(principal, id).await
    }

    async fn update(
        state: &AppState,
        principal: &Principal,
        id: ObjectId,
        patch: ObjectPatch,
    ) -> Result<(), ObjectError> {
        state.objects.update(principal, id, patch).await.map(|_| ())
    }

    async fn detail(
        state: &AppState,
        principal: &Principal,
        handle: &str,
        id: ObjectId,
        shown: (StatusCode, Option<String>),
    ) -> Result<HttpResponse, ApiError> {
        let now = state.links.now();
        let view = state
            .objects
            .get(principal, id)
            .await
            .map_err(ApiError::from)?;
        let days = state
            .objects
            .daily_views(principal, id, CHART_DAYS)
            .await
            .map_err(ApiError::from)?;
        let allow = state
            .objects
            .allowed(&view.link)
            .await
            .map_err(ApiError::from)?
            .join("\n");
        let f = FileRow::new(view, now);
        page_with_uploads(
            state,
            shown.0,
            &DetailPage {
                signed_in_as: Who::acting(principal, handle, section::FILES),
                error: shown.1,
                qr_svg: qr_svg(&f.short_url),
                f,
                allow,
                accesses: ACCESS_CHOICES,
                chart: views_chart(&days),
                chart_days: CHART_DAYS,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_form_becomes_a_full_patch() {
        let patch = settings(&FileFields {
            title: " Report ".into(),
            access: "allow_list".into(),
            allow: "bob, cat@example.com\r\n\n dan ".into(),
            max_views: "5".into(),
            ..FileFields::default()
        })
        .unwrap();
        assert_eq!(patch.title.as_deref(), Some("Report"));
        assert_eq!(
            patch.filename, None,
            "an empty file name keeps the stored one"
        );
        assert_eq!(patch.policy.alias, Some(None), "an empty alias clears it");
        assert_eq!(
            patch.policy.password, None,
            "an empty password keeps the stored one"
        );
        assert_eq!(
            patch.policy.allow.unwrap(),
            ["bob", "cat@example.com", "dan"].map(String::from)
        );
        assert_eq!(patch.policy.expires_at, Some(None));
        assert_eq!(patch.policy.max_views, Some(Some(5)));
        assert!(matches!(
            settings(&FileFields {
                max_views: "many".into(),
                ..FileFields::default()
            }),
            Err(ObjectError::Invalid(m)) if m.contains("max_views")
        ));
    }
}
