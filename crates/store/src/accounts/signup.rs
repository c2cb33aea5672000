//! `SignupStore` on both backends: accounts made without an operator, and the one-time
//! links. A link is spent by one conditional `UPDATE` (unused, unexpired, right purpose) in
//! the same transaction as what it does, so a link works once even under racing posts.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_accounts::{Account, CreateAccountStoreError};
use quire_kernel::{AccountId, InfraError};
use quire_projects::Project;
use quire_signup::{AccountToken, FirstAccount, LinkPurpose, SignupStore};
use time::OffsetDateTime;

use crate::accounts::account_store::{AccountRow, creation_error, insert_account};
use crate::db::{Database, with_conn, with_tx};
use crate::error::{Outcome, StoreError, infra};
use crate::limits::lock_key;
use crate::platform::projects::ProjectRow;
use crate::schema::{account_tokens, accounts, sessions};
use crate::types::{DbId, DbTs};

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = account_tokens)]
struct TokenRow {
    hash: String,
    account_id: Option<DbId>,
    purpose: String,
    created_at: DbTs,
    expires_at: DbTs,
    used_at: Option<DbTs>,
}

impl From<&AccountToken> for TokenRow {
    fn from(t: &AccountToken) -> Self {
        Self {
            hash: t.hash.clone(),
            account_id: t.account_id.map(|a| DbId(a.0)),
            purpose: t.purpose.as_str().to_owned(),
            created_at: DbTs(t.created_at),
            expires_at: DbTs(t.expires_at),
            used_at: None,
        }
    }
}

impl TryFrom<TokenRow> for AccountToken {
    type Error = StoreError;
    fn try_from(r: TokenRow) -> Result<Self, StoreError> {
        Ok(AccountToken {
            purpose: LinkPurpose::parse(&r.purpose)
                .ok_or_else(|| StoreError::Corrupt(format!("link purpose {:?}", r.purpose)))?,
            hash: r.hash,
            account_id: r.account_id.map(|a| AccountId(a.0)),
            created_at: r.created_at.0,
            expires_at: r.expires_at.0,
        })
    }
}

/// Spends the live link `hash` of `purpose` at `now`, returning its account column (the
/// outer `None`: no such live link).
macro_rules! spend_link {
    ($conn:ident, $hash:expr, $purpose:expr, $now:expr) => {
        diesel::update(
            account_tokens::table
                .find($hash)
                .filter(account_tokens::purpose.eq($purpose.as_str()))
                .filter(account_tokens::used_at.is_null())
                .filter(account_tokens::expires_at.gt(DbTs($now))),
        )
        .set(account_tokens::used_at.eq(Some(DbTs($now))))
        .returning(account_tokens::account_id)
        .get_result::<Option<DbId>>($conn)
        .await
        .optional()?
    };
}

#[async_trait]
impl SignupStore for Database {
    async fn has_accounts(&self) -> Result<bool, InfraError> {
        with_conn!(self, |conn| {
            Ok(
                diesel::select(diesel::dsl::exists(accounts::table.select(accounts::id)))
                    .get_result(conn)
                    .await?,
            )
        })
        .map_err(infra)
    }

    async fn live_link(
        &self,
        hash: &str,
        now: OffsetDateTime,
    ) -> Result<Option<AccountToken>, InfraError> {
        let hash = hash.to_owned();
        let row: Option<TokenRow> = with_conn!(self, |conn| {
            Ok(account_tokens::table
                .find(&hash)
                .filter(account_tokens::used_at.is_null())
                .filter(account_tokens::expires_at.gt(DbTs(now)))
                .select(TokenRow::as_select())
                .first(conn)
                .await
                .optional()?)
        })
        .map_err(infra)?;
        row.map(AccountToken::try_from).transpose().map_err(infra)
    }

    async fn issue_link(&self, token: &AccountToken) -> Result<(), InfraError> {
        let row = TokenRow::from(token);
        with_tx!(self, |db, conn| {
            if let Some(account) = row.account_id {
                diesel::update(
                    account_tokens::table
                        .filter(account_tokens::account_id.eq(account))
                        .filter(account_tokens::purpose.eq(&row.purpose))
                        .filter(account_tokens::used_at.is_null()),
                )
                .set(account_tokens::used_at.eq(Some(row.created_at)))
                .execute(conn)
                .await?;
                db.checkpoint("issue_link:voided")?;
            }
            diesel::insert_into(account_tokens::table)
                .values(&row)
                .execute(conn)
                .await?;
            Ok(())
        })
        .map_err(infra)
    }

    async fn create_first_account(
        &self,
        setup_hash: &str,
        account: &Account,
        default_project: &Project,
        now: OffsetDateTime,
    ) -> Result<FirstAccount, CreateAccountStoreError> {
        let setup_hash = setup_hash.to_owned();
        let account_row = AccountRow::from(account);
        let project_row = ProjectRow::from(default_project);
        let result = with_tx!(self, |db, conn| {
            // Two setups racing on PostgreSQL queue here, so only one sees no account.
            lock_key!(conn, "first_run", "setup", now);
            if spend_link!(conn, &setup_hash, LinkPurpose::Setup, now).is_none() {
                return Ok(FirstAccount::LinkRefused);
            }
            let any: bool =
                diesel::select(diesel::dsl::exists(accounts::table.select(accounts::id)))
                    .get_result(conn)
                    .await?;
            if any {
                return Err(StoreError::Outcome(Outcome::AlreadySetUp));
            }
            insert_account!(db, conn, &account_row, &project_row, "create_first_account");
            diesel::delete(
                account_tokens::table
                    .filter(account_tokens::purpose.eq(LinkPurpose::Setup.as_str())),
            )
            .execute(conn)
            .await?;
            Ok(FirstAccount::Created)
        });
        match result {
            Ok(outcome) => Ok(outcome),
            Err(e) if e.is_outcome(Outcome::AlreadySetUp) => Ok(FirstAccount::AlreadySetUp),
            Err(e) => Err(creation_error(e)),
        }
    }

    async fn sign_up(
        &self,
        account: &Account,
        default_project: &Project,
        verification: &AccountToken,
    ) -> Result<(), CreateAccountStoreError> {
        let account_row = AccountRow::from(account);
        let project_row = ProjectRow::from(default_project);
        let token_row = TokenRow::from(verification);
        with_tx!(self, |db, conn| {
            insert_account!(db, conn, &account_row, &project_row, "sign_up");
            diesel::insert_into(account_tokens::table)
                .values(&token_row)
                .execute(conn)
                .await?;
            Ok(())
        })
        .map_err(creation_error)
    }

    async fn verify_email(
        &self,
        hash: &str,
        now: OffsetDateTime,
    ) -> Result<Option<AccountId>, InfraError> {
        let hash = hash.to_owned();
        with_tx!(self, |db, conn| {
            let Some(Some(account)) = spend_link!(conn, &hash, LinkPurpose::VerifyEmail, now)
            else {
                return Ok(None);
            };
            db.checkpoint("verify_email:spent")?;
            diesel::update(
                accounts::table
                    .find(account)
                    .filter(accounts::email_verified_at.is_null()),
            )
            .set(accounts::email_verified_at.eq(Some(DbTs(now))))
            .execute(conn)
            .await?;
            Ok(Some(AccountId(account.0)))
        })
        .map_err(infra)
    }

    async fn reset_password(
        &self,
        hash: &str,
        password_hash: &str,
        now: OffsetDateTime,
    ) -> Result<Option<AccountId>, InfraError> {
        let (hash, password_hash) = (hash.to_owned(), password_hash.to_owned());
        with_tx!(self, |db, conn| {
            let Some(Some(account)) = spend_link!(conn, &hash, LinkPurpose::ResetPassword, now)
            else {
                return Ok(None);
            };
            db.checkpoint("reset_password:spent")?;
            diesel::update(accounts::table.find(account))
                .set(accounts::password_hash.eq(Some(&password_hash)))
                .execute(conn)
                .await?;
            diesel::update(
                accounts::table
                    .find(account)
                    .filter(accounts::email_verified_at.is_null()),
            )
            .set(accounts::email_verified_at.eq(Some(DbTs(now))))
            .execute(conn)
            .await?;
            db.checkpoint("reset_password:password")?;
            diesel::delete(sessions::table.filter(sessions::account_id.eq(account)))
                .execute(conn)
                .await?;
            Ok(Some(AccountId(account.0)))
        })
        .map_err(infra)
    }

    async fn change_password(
        &self,
        account: AccountId,
        password_hash: &str,
        keep_session: &str,
    ) -> Result<u64, InfraError> {
        let (password_hash, keep) = (password_hash.to_owned(), keep_session.to_owned());
        with_tx!(self, |db, conn| {
            diesel::update(accounts::table.find(DbId(account.0)))
                .set(accounts::password_hash.eq(Some(&password_hash)))
                .execute(conn)
                .await?;
            db.checkpoint("change_password:password")?;
            let ended = diesel::delete(
                sessions::table
                    .filter(sessions::account_id.eq(DbId(account.0)))
                    .filter(sessions::id_hash.ne(&keep)),
            )
            .execute(conn)
            .await?;
            Ok(ended as u64)
        })
        .map_err(infra)
    }

    async fn forget_links_before(&self, cutoff: OffsetDateTime) -> Result<u64, InfraError> {
        let n = with_conn!(self, |conn| {
            Ok(diesel::delete(
                account_tokens::table.filter(account_tokens::expires_at.lt(DbTs(cutoff))),
            )
            .execute(conn)
            .await?)
        })
        .map_err(infra)?;
        Ok(n as u64)
    }
}
