//! A project as a row of `projects`, and back.

use diesel::prelude::*;
use quire_kernel::{AccountId, Color, ProjectId, ProjectSlug};
use quire_projects::{Project, ProjectStatus};

use crate::error::StoreError;
use crate::schema::projects;
use crate::types::{DbId, DbTs};

#[derive(Debug, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = projects)]
#[diesel(treat_none_as_null = true)]
pub(crate) struct ProjectRow {
    pub(crate) id: DbId,
    account_id: DbId,
    name: String,
    tag: String,
    color: String,
    slug: String,
    pub(crate) oauth_client_id: Option<String>,
    status: String,
    created_at: DbTs,
    updated_at: DbTs,
}

impl From<&Project> for ProjectRow {
    fn from(p: &Project) -> Self {
        Self {
            id: DbId(p.id.0),
            account_id: DbId(p.account_id.0),
            name: p.name.clone(),
            tag: p.tag.clone(),
            color: p.color.as_str().to_owned(),
            slug: p.slug.as_str().to_owned(),
            oauth_client_id: p.oauth_client_id.clone(),
            status: p.status.as_str().to_owned(),
            created_at: DbTs(p.created_at),
            updated_at: DbTs(p.updated_at),
        }
    }
}

impl TryFrom<ProjectRow> for Project {
    type Error = StoreError;
    fn try_from(r: ProjectRow) -> Result<Self, StoreError> {
        let corrupt = |what: &str| StoreError::Corrupt(format!("project {}: {what}", r.id.0));
        Ok(Project {
            id: ProjectId(r.id.0),
            account_id: AccountId(r.account_id.0),
            color: Color::parse(&r.color).map_err(|_| corrupt("color"))?,
            slug: ProjectSlug::parse(&r.slug).map_err(|_| corrupt("slug"))?,
            status: ProjectStatus::parse(&r.status).ok_or_else(|| corrupt("status"))?,
            name: r.name,
            tag: r.tag,
            oauth_client_id: r.oauth_client_id,
            created_at: r.created_at.0,
            updated_at: r.updated_at.0,
        })
    }
}
