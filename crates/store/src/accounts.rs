//! `AccountStore` on both backends.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_accounts::{Account, AccountStore, CreateAccountStoreError};
use quire_kernel::{AccountId, Email, Handle, InfraError, ProjectId};
use quire_keys::KeyRecord;
use quire_projects::Project;

use crate::db::{Database, with_conn, with_tx};
use crate::error::StoreError;
use crate::keys::{KeyRow, insert_key_row};
use crate::projects::ProjectRow;
use crate::schema::{accounts, projects};
use crate::types::{DbId, DbTs};

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = accounts)]
struct AccountRow {
    id: DbId,
    email: String,
    handle: String,
    password_hash: Option<String>,
    activated_at: Option<DbTs>,
    is_platform_admin: bool,
    default_project_id: DbId,
    created_at: DbTs,
}

impl From<&Account> for AccountRow {
    fn from(a: &Account) -> Self {
        Self {
            id: DbId(a.id.0),
            email: a.email.as_str().to_owned(),
            handle: a.handle.as_str().to_owned(),
            password_hash: a.password_hash.clone(),
            activated_at: a.activated_at.map(DbTs),
            is_platform_admin: a.is_platform_admin,
            default_project_id: DbId(a.default_project_id.0),
            created_at: DbTs(a.created_at),
        }
    }
}

impl TryFrom<AccountRow> for Account {
    type Error = StoreError;
    fn try_from(r: AccountRow) -> Result<Self, StoreError> {
        let corrupt = |what: &str| StoreError::Corrupt(format!("account {}: {what}", r.id.0));
        Ok(Account {
            id: AccountId(r.id.0),
            email: Email::parse(&r.email).map_err(|_| corrupt("email"))?,
            handle: Handle::parse(&r.handle).map_err(|_| corrupt("handle"))?,
            password_hash: r.password_hash,
            activated_at: r.activated_at.map(|t| t.0),
            is_platform_admin: r.is_platform_admin,
            default_project_id: ProjectId(r.default_project_id.0),
            created_at: r.created_at.0,
        })
    }
}

#[async_trait]
impl AccountStore for Database {
    async fn create_account(
        &self,
        account: &Account,
        default_project: &Project,
        first_key: &KeyRecord,
    ) -> Result<(), CreateAccountStoreError> {
        let account_row = AccountRow::from(account);
        let project_row = ProjectRow::from(default_project);
        let key_row = KeyRow::from(first_key);
        let result = with_tx!(self, |db, conn| {
            diesel::insert_into(accounts::table)
                .values(&account_row)
                .execute(conn)
                .await?;
            db.checkpoint("create_account:account")?;
            diesel::insert_into(projects::table)
                .values(&project_row)
                .execute(conn)
                .await?;
            db.checkpoint("create_account:project")?;
            insert_key_row(&key_row).execute(conn).await?;
            Ok(())
        });
        result.map_err(|e| {
            if e.is_unique_violation("accounts_handle_key", "accounts.handle")
                || e.is_unique_violation("projects_slug_key", "projects.slug")
            {
                CreateAccountStoreError::HandleTaken
            } else if e.is_unique_violation("accounts_email_key", "accounts.email") {
                CreateAccountStoreError::EmailTaken
            } else {
                CreateAccountStoreError::Infra(e.into())
            }
        })
    }

    async fn account_by_id(&self, id: AccountId) -> Result<Option<Account>, InfraError> {
        let row: Option<AccountRow> = with_conn!(self, |conn| {
            Ok(accounts::table
                .find(DbId(id.0))
                .select(AccountRow::as_select())
                .first(conn)
                .await
                .optional()?)
        })
        .map_err(InfraError::from)?;
        row.map(Account::try_from)
            .transpose()
            .map_err(InfraError::from)
    }
}
