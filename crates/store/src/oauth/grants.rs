//! `GrantStore` (OAuth authorizations and their refresh tokens) on both backends
//! (`SigningKeyStore` is in `signing_keys`). Each single-use step is a conditional write
//! whose row count says whether this caller won, so two replicas racing on one code or
//! refresh token cannot both succeed.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_kernel::{AccountId, InfraError, ProjectId, Scopes};
use quire_oauth::grant::CodeChallenge;
use quire_oauth::resource::{parse_resource_name, resource_name};
use quire_oauth::{Approval, ClientId, Grant, GrantStage, GrantStore, LiveGrant, RefreshRecord};
use time::OffsetDateTime;

use crate::db::{Database, with_conn, with_tx};
use crate::error::{StoreError, infra};
use crate::schema::{oauth_grants, oauth_refresh_tokens};
use crate::types::{DbId, DbTs};

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = oauth_grants)]
struct GrantRow {
    id: String,
    client_id: String,
    account_id: DbId,
    scope: String,
    redirect_uri: String,
    state: Option<String>,
    code_challenge: String,
    request_hash: Option<String>,
    session_hash: Option<String>,
    request_expires_at: Option<DbTs>,
    code_hash: Option<String>,
    code_expires_at: Option<DbTs>,
    redeemed_at: Option<DbTs>,
    created_at: DbTs,
    revoked_at: Option<DbTs>,
    resource: String,
    project_id: Option<DbId>,
}

impl From<&Grant> for GrantRow {
    fn from(g: &Grant) -> Self {
        let mut row = Self {
            id: g.id.clone(),
            client_id: g.client_id.as_str().to_owned(),
            account_id: DbId(g.account_id.0),
            scope: g.scopes.to_csv(),
            redirect_uri: g.redirect_uri.clone(),
            state: g.state.clone(),
            code_challenge: g.code_challenge.as_str().to_owned(),
            request_hash: None,
            session_hash: None,
            request_expires_at: None,
            code_hash: None,
            code_expires_at: None,
            redeemed_at: None,
            created_at: DbTs(g.created_at),
            revoked_at: g.revoked_at.map(DbTs),
            resource: resource_name(g.resource).to_owned(),
            project_id: g.project_id.map(|p| DbId(p.0)),
        };
        match &g.stage {
            GrantStage::Pending {
                request_hash,
                session_hash,
                expires_at,
            } => {
                row.request_hash = Some(request_hash.clone());
                row.session_hash = Some(session_hash.clone());
                row.request_expires_at = Some(DbTs(*expires_at));
            }
            GrantStage::Approved {
                code_hash,
                code_expires_at,
            } => {
                row.code_hash = Some(code_hash.clone());
                row.code_expires_at = Some(DbTs(*code_expires_at));
            }
            GrantStage::Redeemed {
                code_hash,
                redeemed_at,
            } => {
                row.code_hash = Some(code_hash.clone());
                row.redeemed_at = Some(DbTs(*redeemed_at));
            }
        }
        row
    }
}

impl TryFrom<GrantRow> for Grant {
    type Error = StoreError;
    fn try_from(r: GrantRow) -> Result<Self, StoreError> {
        let corrupt = |what: &str| StoreError::Corrupt(format!("oauth grant: {what}"));
        let stage = match (
            r.code_hash,
            r.redeemed_at,
            r.code_expires_at,
            r.request_hash,
            r.session_hash,
            r.request_expires_at,
        ) {
            (Some(code_hash), Some(redeemed_at), ..) => GrantStage::Redeemed {
                code_hash,
                redeemed_at: redeemed_at.0,
            },
            (Some(code_hash), None, Some(code_expires_at), ..) => GrantStage::Approved {
                code_hash,
                code_expires_at: code_expires_at.0,
            },
            (None, None, None, Some(request_hash), Some(session_hash), Some(expires_at)) => {
                GrantStage::Pending {
                    request_hash,
                    session_hash,
                    expires_at: expires_at.0,
                }
            }
            _ => return Err(corrupt("stage")),
        };
        Ok(Grant {
            client_id: ClientId::parse(&r.client_id).ok_or_else(|| corrupt("client id"))?,
            account_id: AccountId(r.account_id.0),
            scopes: Scopes::from_csv(&r.scope).ok_or_else(|| corrupt("scope"))?,
            resource: parse_resource_name(&r.resource).ok_or_else(|| corrupt("resource"))?,
            project_id: r.project_id.map(|p| ProjectId(p.0)),
            code_challenge: CodeChallenge::parse(&r.code_challenge)
                .ok_or_else(|| corrupt("code challenge"))?,
            id: r.id,
            redirect_uri: r.redirect_uri,
            state: r.state,
            stage,
            created_at: r.created_at.0,
            revoked_at: r.revoked_at.map(|t| t.0),
        })
    }
}

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = oauth_refresh_tokens)]
struct RefreshRow {
    token_hash: String,
    grant_id: String,
    created_at: DbTs,
    expires_at: DbTs,
    rotated_at: Option<DbTs>,
}

impl From<&RefreshRecord> for RefreshRow {
    fn from(r: &RefreshRecord) -> Self {
        Self {
            token_hash: r.token_hash.clone(),
            grant_id: r.grant_id.clone(),
            created_at: DbTs(r.created_at),
            expires_at: DbTs(r.expires_at),
            rotated_at: r.rotated_at.map(DbTs),
        }
    }
}

impl From<RefreshRow> for RefreshRecord {
    fn from(r: RefreshRow) -> Self {
        Self {
            token_hash: r.token_hash,
            grant_id: r.grant_id,
            created_at: r.created_at.0,
            expires_at: r.expires_at.0,
            rotated_at: r.rotated_at.map(|t| t.0),
        }
    }
}

#[async_trait]
impl GrantStore for Database {
    async fn insert_oauth_grant(&self, grant: &Grant) -> Result<(), InfraError> {
        let row = GrantRow::from(grant);
        with_conn!(self, |conn| {
            diesel::insert_into(oauth_grants::table)
                .values(&row)
                .execute(conn)
                .await?;
            Ok(())
        })
        .map_err(infra)
    }

    async fn pending_grant(
        &self,
        request_hash: &str,
        session_hash: &str,
        now: OffsetDateTime,
    ) -> Result<Option<Grant>, InfraError> {
        let (request_hash, session_hash) = (request_hash.to_owned(), session_hash.to_owned());
        let row: Option<GrantRow> = with_conn!(self, |conn| {
            Ok(oauth_grants::table
                .filter(oauth_grants::request_hash.eq(Some(request_hash)))
                .filter(oauth_grants::session_hash.eq(Some(session_hash)))
                .filter(oauth_grants::code_hash.is_null())
                .filter(oauth_grants::request_expires_at.gt(Some(DbTs(now))))
                .select(GrantRow::as_select())
                .first(conn)
                .await
                .optional()?)
        })
        .map_err(infra)?;
        row.map(Grant::try_from).transpose().map_err(infra)
    }

    async fn settle_pending(
        &self,
        request_hash: &str,
        session_hash: &str,
        now: OffsetDateTime,
        approval: Option<&Approval>,
    ) -> Result<Option<Grant>, InfraError> {
        let (request_hash, session_hash) = (request_hash.to_owned(), session_hash.to_owned());
        let approval = approval.map(|a| {
            (
                a.code_hash.clone(),
                DbTs(a.code_expires_at),
                DbId(a.project_id.0),
                a.scopes.to_csv(),
            )
        });
        let row: Option<GrantRow> = with_tx!(self, |conn| {
            let Some(row) = oauth_grants::table
                .filter(oauth_grants::request_hash.eq(Some(request_hash)))
                .filter(oauth_grants::session_hash.eq(Some(session_hash)))
                .filter(oauth_grants::code_hash.is_null())
                .filter(oauth_grants::request_expires_at.gt(Some(DbTs(now))))
                .select(GrantRow::as_select())
                .first(conn)
                .await
                .optional()?
            else {
                return Ok(None);
            };
            let still_pending = oauth_grants::table
                .find(row.id.clone())
                .filter(oauth_grants::code_hash.is_null());
            let changed = match approval {
                Some((code_hash, code_expires_at, project_id, scope)) => {
                    diesel::update(still_pending)
                        .set((
                            oauth_grants::code_hash.eq(Some(code_hash)),
                            oauth_grants::code_expires_at.eq(Some(code_expires_at)),
                            oauth_grants::project_id.eq(Some(project_id)),
                            oauth_grants::scope.eq(scope),
                            oauth_grants::request_hash.eq(None::<String>),
                            oauth_grants::session_hash.eq(None::<String>),
                            oauth_grants::request_expires_at.eq(None::<DbTs>),
                        ))
                        .execute(conn)
                        .await?
                }
                None => diesel::delete(still_pending).execute(conn).await?,
            };
            Ok((changed == 1).then_some(row))
        })
        .map_err(infra)?;
        row.map(Grant::try_from).transpose().map_err(infra)
    }

    async fn grant_by_code(&self, code_hash: &str) -> Result<Option<Grant>, InfraError> {
        let code_hash = code_hash.to_owned();
        let row: Option<GrantRow> = with_conn!(self, |conn| {
            Ok(oauth_grants::table
                .filter(oauth_grants::code_hash.eq(Some(code_hash)))
                .select(GrantRow::as_select())
                .first(conn)
                .await
                .optional()?)
        })
        .map_err(infra)?;
        row.map(Grant::try_from).transpose().map_err(infra)
    }

    async fn redeem_code(
        &self,
        grant_id: &str,
        now: OffsetDateTime,
        first: &RefreshRecord,
    ) -> Result<bool, InfraError> {
        let grant_id = grant_id.to_owned();
        let refresh = RefreshRow::from(first);
        with_tx!(self, |db, conn| {
            let redeemed = diesel::update(
                oauth_grants::table
                    .find(grant_id)
                    .filter(oauth_grants::code_hash.is_not_null())
                    .filter(oauth_grants::redeemed_at.is_null())
                    .filter(oauth_grants::revoked_at.is_null()),
            )
            .set(oauth_grants::redeemed_at.eq(Some(DbTs(now))))
            .execute(conn)
            .await?;
            if redeemed != 1 {
                return Ok(false);
            }
            db.checkpoint("redeem_code:redeemed")?;
            diesel::insert_into(oauth_refresh_tokens::table)
                .values(&refresh)
                .execute(conn)
                .await?;
            Ok(true)
        })
        .map_err(infra)
    }

    async fn refresh_token(
        &self,
        token_hash: &str,
    ) -> Result<Option<(RefreshRecord, Grant)>, InfraError> {
        let token_hash = token_hash.to_owned();
        let found: Option<(RefreshRow, GrantRow)> = with_conn!(self, |conn| {
            Ok(oauth_refresh_tokens::table
                .inner_join(oauth_grants::table)
                .filter(oauth_refresh_tokens::token_hash.eq(token_hash))
                .select((RefreshRow::as_select(), GrantRow::as_select()))
                .first(conn)
                .await
                .optional()?)
        })
        .map_err(infra)?;
        found
            .map(|(r, g)| Ok((RefreshRecord::from(r), Grant::try_from(g)?)))
            .transpose()
            .map_err(infra)
    }

    async fn rotate_refresh(
        &self,
        old_hash: &str,
        now: OffsetDateTime,
        reusable_after: OffsetDateTime,
        next: &RefreshRecord,
    ) -> Result<bool, InfraError> {
        let old_hash = old_hash.to_owned();
        let next = RefreshRow::from(next);
        with_tx!(self, |db, conn| {
            let live_grant = oauth_grants::table
                .find(next.grant_id.clone())
                .filter(oauth_grants::revoked_at.is_null())
                .select(oauth_grants::id)
                .first::<String>(conn)
                .await
                .optional()?;
            if live_grant.is_none() {
                return Ok(false);
            }
            let rotated = diesel::update(
                oauth_refresh_tokens::table
                    .find(old_hash.clone())
                    .filter(oauth_refresh_tokens::rotated_at.is_null()),
            )
            .set(oauth_refresh_tokens::rotated_at.eq(Some(DbTs(now))))
            .execute(conn)
            .await?;
            // Within the grace window a rotated token may be exchanged again; it keeps its
            // first rotation time.
            let within_grace = if rotated == 1 {
                1
            } else {
                oauth_refresh_tokens::table
                    .find(old_hash)
                    .filter(oauth_refresh_tokens::rotated_at.gt(Some(DbTs(reusable_after))))
                    .count()
                    .get_result::<i64>(conn)
                    .await?
            };
            if within_grace != 1 {
                return Ok(false);
            }
            db.checkpoint("rotate_refresh:rotated")?;
            diesel::insert_into(oauth_refresh_tokens::table)
                .values(&next)
                .execute(conn)
                .await?;
            Ok(true)
        })
        .map_err(infra)
    }

    async fn revoke_grant(&self, grant_id: &str, at: OffsetDateTime) -> Result<(), InfraError> {
        let grant_id = grant_id.to_owned();
        with_conn!(self, |conn| {
            diesel::update(
                oauth_grants::table
                    .find(grant_id)
                    .filter(oauth_grants::revoked_at.is_null()),
            )
            .set(oauth_grants::revoked_at.eq(Some(DbTs(at))))
            .execute(conn)
            .await?;
            Ok(())
        })
        .map_err(infra)
    }

    async fn live_grants(
        &self,
        account: AccountId,
        now: OffsetDateTime,
    ) -> Result<Vec<LiveGrant>, InfraError> {
        let rows: Vec<(GrantRow, DbTs)> = with_conn!(self, |conn| {
            Ok(oauth_grants::table
                .inner_join(oauth_refresh_tokens::table)
                .filter(oauth_grants::account_id.eq(DbId(account.0)))
                .filter(oauth_grants::revoked_at.is_null())
                .filter(oauth_grants::redeemed_at.is_not_null())
                .filter(oauth_refresh_tokens::rotated_at.is_null())
                .filter(oauth_refresh_tokens::expires_at.gt(DbTs(now)))
                .select((GrantRow::as_select(), oauth_refresh_tokens::created_at))
                .load(conn)
                .await?)
        })
        .map_err(infra)?;
        // A refresh retried within the reuse window leaves two unrotated tokens: the newest
        // one counts.
        let mut live: Vec<LiveGrant> = Vec::new();
        for (row, issued) in rows {
            match live.iter_mut().find(|g| g.grant.id == row.id) {
                Some(g) => g.last_issued_at = g.last_issued_at.max(issued.0),
                None => live.push(LiveGrant {
                    grant: Grant::try_from(row).map_err(infra)?,
                    last_issued_at: issued.0,
                }),
            }
        }
        Ok(live)
    }
}
