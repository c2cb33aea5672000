//! `InvitationStore` and `CaptchaLedger` on both backends.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_accounts::{Binding, CaptchaLedger, Invitation, InvitationStore, PhoneNumber};
use quire_kernel::{AccountId, Handle, InfraError};
use time::OffsetDateTime;

use crate::db::{Database, with_conn, with_tx};
use crate::error::{Outcome, StoreError, infra};
use crate::schema::{accounts, captcha_uses, invitations};
use crate::types::{DbId, DbTs};

type InvitationRow = (String, DbTs, Option<DbId>, Option<DbTs>, Option<String>);

fn invitation(row: InvitationRow) -> Result<Invitation, StoreError> {
    let (number, added_at, bound_id, bound_at, handle) = row;
    let bound_to = match (bound_id, handle) {
        (Some(id), Some(handle)) => Some((
            AccountId(id.0),
            Handle::parse(&handle)
                .map_err(|_| StoreError::Corrupt(format!("account {}: handle", id.0)))?,
        )),
        _ => None,
    };
    Ok(Invitation {
        number: PhoneNumber::from_stored(number),
        added_at: added_at.0,
        bound_to,
        bound_at: bound_at.map(|t| t.0),
    })
}

#[async_trait]
impl InvitationStore for Database {
    async fn add_invitations(
        &self,
        numbers: &[PhoneNumber],
        now: OffsetDateTime,
    ) -> Result<u64, InfraError> {
        let numbers: Vec<String> = numbers.iter().map(|n| n.as_str().to_owned()).collect();
        with_tx!(self, |conn| {
            let mut added = 0;
            for number in &numbers {
                added += diesel::insert_into(invitations::table)
                    .values((
                        invitations::number.eq(number),
                        invitations::added_at.eq(DbTs(now)),
                    ))
                    .on_conflict_do_nothing()
                    .execute(conn)
                    .await?;
            }
            Ok(added as u64)
        })
        .map_err(infra)
    }

    async fn remove_invitation(&self, number: &PhoneNumber) -> Result<bool, InfraError> {
        let number = number.as_str().to_owned();
        let n = with_conn!(self, |conn| {
            Ok(diesel::delete(invitations::table.find(&number))
                .execute(conn)
                .await?)
        })
        .map_err(infra)?;
        Ok(n == 1)
    }

    async fn invitations(&self) -> Result<Vec<Invitation>, InfraError> {
        let rows: Vec<InvitationRow> = with_conn!(self, |conn| {
            Ok(invitations::table
                .left_join(accounts::table)
                .select((
                    invitations::number,
                    invitations::added_at,
                    invitations::bound_account_id,
                    invitations::bound_at,
                    accounts::handle.nullable(),
                ))
                .order(invitations::number.asc())
                .load(conn)
                .await?)
        })
        .map_err(infra)?;
        rows.into_iter()
            .map(invitation)
            .collect::<Result<_, _>>()
            .map_err(infra)
    }

    async fn bind_and_activate(
        &self,
        account: AccountId,
        number: &PhoneNumber,
        now: OffsetDateTime,
    ) -> Result<Binding, InfraError> {
        let number = number.as_str().to_owned();
        let account = DbId(account.0);
        let result = with_tx!(self, |db, conn| {
            let activated = diesel::update(
                accounts::table
                    .find(account)
                    .filter(accounts::activated_at.is_null()),
            )
            .set(accounts::activated_at.eq(Some(DbTs(now))))
            .execute(conn)
            .await?;
            if activated == 0 {
                return Ok(Binding::AlreadyActivated);
            }
            db.checkpoint("bind_and_activate:activated")?;
            let bound = diesel::update(
                invitations::table.find(&number).filter(
                    invitations::bound_account_id
                        .is_null()
                        .or(invitations::bound_account_id.eq(account)),
                ),
            )
            .set((
                invitations::bound_account_id.eq(Some(account)),
                invitations::bound_at.eq(Some(DbTs(now))),
            ))
            .execute(conn)
            .await?;
            if bound == 0 {
                return Err(StoreError::Outcome(Outcome::NotEligible));
            }
            Ok(Binding::Activated)
        });
        match result {
            Ok(binding) => Ok(binding),
            Err(StoreError::Outcome(Outcome::NotEligible)) => Ok(Binding::NotEligible),
            // The account holds another number already (bound before an operator
            // deactivated it): the contract calls that already activated.
            Err(e)
                if e.is_unique_violation(
                    "invitations_bound_account_idx",
                    "invitations.bound_account_id",
                ) =>
            {
                Ok(Binding::AlreadyActivated)
            }
            Err(e) => Err(infra(e)),
        }
    }
}

#[async_trait]
impl CaptchaLedger for Database {
    async fn spend_captcha(
        &self,
        nonce_hash: &str,
        expires_at: OffsetDateTime,
    ) -> Result<bool, InfraError> {
        let nonce_hash = nonce_hash.to_owned();
        let n = with_conn!(self, |conn| {
            Ok(diesel::insert_into(captcha_uses::table)
                .values((
                    captcha_uses::nonce_hash.eq(&nonce_hash),
                    captcha_uses::expires_at.eq(DbTs(expires_at)),
                ))
                .on_conflict_do_nothing()
                .execute(conn)
                .await?)
        })
        .map_err(infra)?;
        Ok(n == 1)
    }

    async fn forget_captchas_before(&self, cutoff: OffsetDateTime) -> Result<u64, InfraError> {
        let n = with_conn!(self, |conn| {
            Ok(diesel::delete(
                captcha_uses::table.filter(captcha_uses::expires_at.lt(DbTs(cutoff))),
            )
            .execute(conn)
            .await?)
        })
        .map_err(infra)?;
        Ok(n as u64)
    }
}
