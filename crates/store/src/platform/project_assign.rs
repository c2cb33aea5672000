//! `ProjectStore::assign_resource` on both backends: a key, a page or an object (each with
//! its link), a URL link or a ready database moved to another project of its account.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_kernel::{AccountId, ProjectId};
use quire_projects::{AssignStoreError, ResourceType};
use uuid::Uuid;

use crate::db::{Database, with_conn, with_tx};
use crate::error::{Outcome, StoreError};
use crate::links::{OBJECT_KIND, PAGE_KIND, URL_KIND};
use crate::platform::databases::READY as DATABASE_READY;
use crate::schema::{api_keys, databases, links, objects, pages};
use crate::types::DbId;

pub(crate) async fn assign_resource(
    db: &Database,
    account: AccountId,
    resource_type: ResourceType,
    resource_id: Uuid,
    dest: ProjectId,
) -> Result<(), AssignStoreError> {
    let account = DbId(account.0);
    let result = match resource_type {
        ResourceType::Key => with_tx!(db, |conn| {
            let tier: Option<String> = api_keys::table
                .find(DbId(resource_id))
                .filter(api_keys::account_id.eq(account))
                .select(api_keys::tier)
                .first(conn)
                .await
                .optional()?;
            match tier.as_deref() {
                None => return Err(StoreError::Outcome(Outcome::ResourceNotFound)),
                Some("master") => return Err(StoreError::Outcome(Outcome::MasterKey)),
                Some(_) => {}
            }
            diesel::update(api_keys::table.find(DbId(resource_id)))
                .set(api_keys::project_id.eq(DbId(dest.0)))
                .execute(conn)
                .await?;
            Ok(())
        }),
        // A page moves with its link.
        ResourceType::Page => with_tx!(db, |conn| {
            let id = DbId(resource_id);
            let moved = diesel::update(
                pages::table
                    .find(id)
                    .filter(pages::account_id.eq(account))
                    .filter(pages::state.eq("ready")),
            )
            .set(pages::project_id.eq(DbId(dest.0)))
            .execute(conn)
            .await?;
            if moved == 0 {
                return Err(StoreError::Outcome(Outcome::ResourceNotFound));
            }
            diesel::update(
                links::table
                    .filter(links::target_kind.eq(PAGE_KIND))
                    .filter(links::target_id.eq(id)),
            )
            .set(links::project_id.eq(DbId(dest.0)))
            .execute(conn)
            .await?;
            Ok(())
        }),
        ResourceType::Link => with_conn!(db, |conn| {
            let moved = diesel::update(
                links::table
                    .find(DbId(resource_id))
                    .filter(links::account_id.eq(account))
                    .filter(links::target_kind.eq(URL_KIND)),
            )
            .set(links::project_id.eq(DbId(dest.0)))
            .execute(conn)
            .await?;
            if moved == 0 {
                return Err(StoreError::Outcome(Outcome::ResourceNotFound));
            }
            Ok(())
        }),
        // An object moves with its link.
        ResourceType::Object => with_tx!(db, |conn| {
            let id = DbId(resource_id);
            let moved = diesel::update(
                objects::table
                    .find(id)
                    .filter(objects::account_id.eq(account))
                    .filter(objects::state.eq("ready")),
            )
            .set(objects::project_id.eq(DbId(dest.0)))
            .execute(conn)
            .await?;
            if moved == 0 {
                return Err(StoreError::Outcome(Outcome::ResourceNotFound));
            }
            diesel::update(
                links::table
                    .filter(links::target_kind.eq(OBJECT_KIND))
                    .filter(links::target_id.eq(id)),
            )
            .set(links::project_id.eq(DbId(dest.0)))
            .execute(conn)
            .await?;
            Ok(())
        }),
        // Only a ready database: one being created or dropped is not the account's to see.
        ResourceType::Database => with_conn!(db, |conn| {
            let moved = diesel::update(
                databases::table
                    .find(DbId(resource_id))
                    .filter(databases::account_id.eq(account))
                    .filter(databases::status.eq(DATABASE_READY)),
            )
            .set(databases::project_id.eq(DbId(dest.0)))
            .execute(conn)
            .await?;
            if moved == 0 {
                return Err(StoreError::Outcome(Outcome::ResourceNotFound));
            }
            Ok(())
        }),
    };
    result.map_err(|e| {
        if e.is_outcome(Outcome::ResourceNotFound) {
            AssignStoreError::NotFound
        } else if e.is_outcome(Outcome::MasterKey) {
            AssignStoreError::MasterKey
        } else {
            AssignStoreError::Infra(e.into())
        }
    })
}
