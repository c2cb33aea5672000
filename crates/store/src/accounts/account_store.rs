//! `AccountStore` on both backends.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_accounts::{Account, AccountStore, CreateAccountStoreError, SealedSecret};
use quire_kernel::{AccountId, Email, Handle, InfraError, ProjectId};
use quire_keys::KeyRecord;
use quire_projects::Project;
use time::OffsetDateTime;

use crate::db::{Database, with_conn, with_tx};
use crate::error::{StoreError, infra};
use crate::platform::keys::{KeyRow, insert_key_row};
use crate::platform::projects::ProjectRow;
use crate::schema::{accounts, recovery_codes, sessions};
use crate::types::{DbId, DbTs};

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = accounts)]
pub(crate) struct AccountRow {
    id: DbId,
    email: String,
    handle: String,
    password_hash: Option<String>,
    activated_at: Option<DbTs>,
    is_platform_admin: bool,
    default_project_id: DbId,
    created_at: DbTs,
    totp_secret: Option<String>,
    email_verified_at: Option<DbTs>,
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
            totp_secret: a.totp_secret.as_ref().map(|t| t.as_stored().to_owned()),
            email_verified_at: a.email_verified_at.map(DbTs),
        }
    }
}

impl TryFrom<AccountRow> for Account {
    type Error = StoreError;
    fn try_from(r: AccountRow) -> Result<Self, StoreError> {
        let corrupt = |what: &str| StoreError::Corrupt(format!("account {}: {what}", r.id.0));
        Ok(Account {
            id: AccountId(r.id.0),
            email: Email::stored(&r.email),
            handle: Handle::parse(&r.handle).map_err(|_| corrupt("handle"))?,
            password_hash: r.password_hash,
            email_verified_at: r.email_verified_at.map(|t| t.0),
            activated_at: r.activated_at.map(|t| t.0),
            is_platform_admin: r.is_platform_admin,
            default_project_id: ProjectId(r.default_project_id.0),
            created_at: r.created_at.0,
            totp_secret: r.totp_secret.map(SealedSecret::stored),
        })
    }
}

/// Inside a transaction: inserts an account row and its default project's row, with the
/// checkpoints `{step}:account` and `{step}:project` after each.
macro_rules! insert_account {
    ($db:ident, $conn:ident, $account:expr, $project:expr, $step:literal) => {
        diesel::insert_into($crate::schema::accounts::table)
            .values($account)
            .execute($conn)
            .await?;
        $db.checkpoint(concat!($step, ":account"))?;
        diesel::insert_into($crate::schema::projects::table)
            .values($project)
            .execute($conn)
            .await?;
        $db.checkpoint(concat!($step, ":project"))?;
    };
}
pub(crate) use insert_account;

/// What a unique violation while creating an account means: the handle (or the default
/// project's slug, which is the handle) or the email is taken.
pub(crate) fn creation_error(e: StoreError) -> CreateAccountStoreError {
    if e.is_unique_violation("accounts_handle_key", "accounts.handle")
        || e.is_unique_violation("projects_slug_key", "projects.slug")
    {
        CreateAccountStoreError::HandleTaken
    } else if e.is_unique_violation("accounts_email_key", "accounts.email") {
        CreateAccountStoreError::EmailTaken
    } else {
        CreateAccountStoreError::Infra(e.into())
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
        with_tx!(self, |db, conn| {
            insert_account!(db, conn, &account_row, &project_row, "create_account");
            insert_key_row(&key_row).execute(conn).await?;
            Ok(())
        })
        .map_err(creation_error)
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
        .map_err(infra)?;
        row.map(Account::try_from).transpose().map_err(infra)
    }

    async fn accounts(&self) -> Result<Vec<Account>, InfraError> {
        let rows: Vec<AccountRow> = with_conn!(self, |conn| {
            Ok(accounts::table
                .order((accounts::created_at.asc(), accounts::handle.asc()))
                .select(AccountRow::as_select())
                .load(conn)
                .await?)
        })
        .map_err(infra)?;
        rows.into_iter()
            .map(Account::try_from)
            .collect::<Result<_, _>>()
            .map_err(infra)
    }

    async fn account_by_login(&self, login: &str) -> Result<Option<Account>, InfraError> {
        let login = login.to_owned();
        let row: Option<AccountRow> = with_conn!(self, |conn| {
            Ok(accounts::table
                .filter(accounts::email.eq(&login).or(accounts::handle.eq(&login)))
                .select(AccountRow::as_select())
                .first(conn)
                .await
                .optional()?)
        })
        .map_err(infra)?;
        row.map(Account::try_from).transpose().map_err(infra)
    }

    async fn set_password_hash(&self, id: AccountId, hash: &str) -> Result<bool, InfraError> {
        let hash = hash.to_owned();
        let n = with_conn!(self, |conn| {
            Ok(diesel::update(accounts::table.find(DbId(id.0)))
                .set(accounts::password_hash.eq(Some(&hash)))
                .execute(conn)
                .await?)
        })
        .map_err(infra)?;
        Ok(n == 1)
    }

    async fn enroll_totp(
        &self,
        id: AccountId,
        secret: &SealedSecret,
        step: u64,
        keep_session: &str,
        recovery_hashes: &[String],
        now: OffsetDateTime,
    ) -> Result<bool, InfraError> {
        let secret = secret.as_stored().to_owned();
        let keep_session = keep_session.to_owned();
        let step = step_column(step)?;
        let codes = recovery_rows(id, recovery_hashes, now);
        with_tx!(self, |db, conn| {
            let n = diesel::update(
                accounts::table
                    .find(DbId(id.0))
                    .filter(accounts::totp_secret.is_null()),
            )
            .set((
                accounts::totp_secret.eq(Some(&secret)),
                accounts::totp_last_step.eq(Some(step)),
            ))
            .execute(conn)
            .await?;
            if n == 0 {
                return Ok(false);
            }
            db.checkpoint("enroll_totp:account")?;
            diesel::delete(recovery_codes::table.filter(recovery_codes::account_id.eq(DbId(id.0))))
                .execute(conn)
                .await?;
            // Ten rows; one INSERT each, as diesel-async has no batch insert on SQLite.
            for code in &codes {
                diesel::insert_into(recovery_codes::table)
                    .values(code)
                    .execute(conn)
                    .await?;
            }
            db.checkpoint("enroll_totp:recovery_codes")?;
            diesel::update(
                sessions::table
                    .filter(sessions::account_id.eq(DbId(id.0)))
                    .filter(sessions::id_hash.ne(&keep_session)),
            )
            .set(sessions::mfa_satisfied.eq(false))
            .execute(conn)
            .await?;
            diesel::update(sessions::table.find(&keep_session))
                .set(sessions::pending_totp_secret.eq(None::<String>))
                .execute(conn)
                .await?;
            Ok(true)
        })
        .map_err(infra)
    }

    async fn remove_totp(&self, id: AccountId) -> Result<bool, InfraError> {
        with_tx!(self, |db, conn| {
            let n = diesel::update(
                accounts::table
                    .find(DbId(id.0))
                    .filter(accounts::totp_secret.is_not_null()),
            )
            .set((
                accounts::totp_secret.eq(None::<String>),
                accounts::totp_last_step.eq(None::<i64>),
            ))
            .execute(conn)
            .await?;
            if n == 0 {
                return Ok(false);
            }
            db.checkpoint("remove_totp:account")?;
            diesel::delete(recovery_codes::table.filter(recovery_codes::account_id.eq(DbId(id.0))))
                .execute(conn)
                .await?;
            db.checkpoint("remove_totp:recovery_codes")?;
            diesel::update(sessions::table.filter(sessions::account_id.eq(DbId(id.0))))
                .set(sessions::mfa_satisfied.eq(true))
                .execute(conn)
                .await?;
            Ok(true)
        })
        .map_err(infra)
    }

    async fn replace_recovery_codes(
        &self,
        id: AccountId,
        recovery_hashes: &[String],
        now: OffsetDateTime,
    ) -> Result<bool, InfraError> {
        let codes = recovery_rows(id, recovery_hashes, now);
        with_tx!(self, |db, conn| {
            let enrolled: i64 = accounts::table
                .find(DbId(id.0))
                .filter(accounts::totp_secret.is_not_null())
                .count()
                .get_result(conn)
                .await?;
            if enrolled == 0 {
                return Ok(false);
            }
            diesel::delete(recovery_codes::table.filter(recovery_codes::account_id.eq(DbId(id.0))))
                .execute(conn)
                .await?;
            db.checkpoint("replace_recovery_codes:delete")?;
            // Ten rows; one INSERT each, as diesel-async has no batch insert on SQLite.
            for code in &codes {
                diesel::insert_into(recovery_codes::table)
                    .values(code)
                    .execute(conn)
                    .await?;
            }
            Ok(true)
        })
        .map_err(infra)
    }

    async fn use_recovery_code(
        &self,
        id: AccountId,
        hash: &str,
        now: OffsetDateTime,
    ) -> Result<bool, InfraError> {
        let hash = hash.to_owned();
        let n = with_conn!(self, |conn| {
            Ok(diesel::update(
                recovery_codes::table
                    .find(&hash)
                    .filter(recovery_codes::account_id.eq(DbId(id.0)))
                    .filter(recovery_codes::used_at.is_null()),
            )
            .set(recovery_codes::used_at.eq(Some(DbTs(now))))
            .execute(conn)
            .await?)
        })
        .map_err(infra)?;
        Ok(n == 1)
    }

    async fn recovery_codes_left(&self, id: AccountId) -> Result<u64, InfraError> {
        let n: i64 = with_conn!(self, |conn| {
            Ok(recovery_codes::table
                .filter(recovery_codes::account_id.eq(DbId(id.0)))
                .filter(recovery_codes::used_at.is_null())
                .count()
                .get_result(conn)
                .await?)
        })
        .map_err(infra)?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    async fn legacy_totp_secrets(&self) -> Result<Vec<(AccountId, SealedSecret)>, InfraError> {
        let rows: Vec<(DbId, Option<String>)> = with_conn!(self, |conn| {
            Ok(accounts::table
                .filter(accounts::totp_secret.is_not_null())
                .filter(accounts::totp_secret.not_like("v1.%"))
                .select((accounts::id, accounts::totp_secret))
                .load(conn)
                .await?)
        })
        .map_err(infra)?;
        Ok(rows
            .into_iter()
            .filter_map(|(id, s)| Some((AccountId(id.0), SealedSecret::stored(s?))))
            .collect())
    }

    async fn reseal_totp(
        &self,
        id: AccountId,
        old: &SealedSecret,
        new: &SealedSecret,
    ) -> Result<bool, InfraError> {
        let (old, new) = (old.as_stored().to_owned(), new.as_stored().to_owned());
        let n = with_conn!(self, |conn| {
            Ok(diesel::update(
                accounts::table
                    .find(DbId(id.0))
                    .filter(accounts::totp_secret.eq(Some(&old))),
            )
            .set(accounts::totp_secret.eq(Some(&new)))
            .execute(conn)
            .await?)
        })
        .map_err(infra)?;
        Ok(n == 1)
    }

    async fn set_activated(
        &self,
        id: AccountId,
        at: Option<OffsetDateTime>,
    ) -> Result<bool, InfraError> {
        let n = with_conn!(self, |conn| {
            Ok(diesel::update(accounts::table.find(DbId(id.0)))
                .set(accounts::activated_at.eq(at.map(DbTs)))
                .execute(conn)
                .await?)
        })
        .map_err(infra)?;
        Ok(n == 1)
    }

    async fn use_totp_step(&self, id: AccountId, step: u64) -> Result<bool, InfraError> {
        let step = step_column(step)?;
        let n = with_conn!(self, |conn| {
            Ok(diesel::update(
                accounts::table
                    .find(DbId(id.0))
                    .filter(accounts::totp_secret.is_not_null())
                    .filter(
                        accounts::totp_last_step
                            .is_null()
                            .or(accounts::totp_last_step.lt(step)),
                    ),
            )
            .set(accounts::totp_last_step.eq(Some(step)))
            .execute(conn)
            .await?)
        })
        .map_err(infra)?;
        Ok(n == 1)
    }
}

#[derive(Debug, Insertable)]
#[diesel(table_name = recovery_codes)]
struct RecoveryCodeRow {
    code_hash: String,
    account_id: DbId,
    created_at: DbTs,
}

fn recovery_rows(id: AccountId, hashes: &[String], now: OffsetDateTime) -> Vec<RecoveryCodeRow> {
    hashes
        .iter()
        .map(|h| RecoveryCodeRow {
            code_hash: h.clone(),
            account_id: DbId(id.0),
            created_at: DbTs(now),
        })
        .collect()
}

fn step_column(step: u64) -> Result<i64, InfraError> {
    i64::try_from(step).map_err(|_| InfraError::new("TOTP step out of range"))
}
