//! The leased two-phase write that pages and objects share, on both backends. A row is
//! inserted `pending` under a lease once its slug and public id are claimed
//! ([`claim_names!`]); its lease is renewed while the upload runs; it is marked `ready` at
//! the end. A pending row whose lease lapsed is the janitor's ([`Leased::stale_pending`]),
//! and gives up its slug to a new write of its owner ([`Leased::lapsed_slug_holder`]). Only
//! `ready` rows are read as pages and objects, by id or by their owner's slug
//! ([`Leased::ready`], [`Leased::ready_by_slug`]).
//!
//! Slugs are one namespace per owner across pages and objects: a write that claims one first
//! locks its owner's account row (a no-op update: a row lock on PostgreSQL; SQLite's write
//! transaction holds the whole database already), then looks at the other table, so a page
//! publish and an object upload of one owner cannot both take the same slug.
//!
//! [`Leased`] is implemented for each table by [`leased_table!`], one body for both tables:
//! diesel's query types carry their table and columns, so a function generic over the table
//! would need a where clause per statement and per backend to say what the body says, and
//! would be instantiated per table all the same.

use quire_kernel::InfraError;
use time::OffsetDateTime;

use crate::db::Database;
use crate::error::{Outcome, StoreError, infra};
use crate::types::DbId;

/// The state of a row whose upload is under way.
pub(crate) const PENDING: &str = "pending";
/// The state of a row whose upload finished: the only rows read as pages and objects.
pub(crate) const READY: &str = "ready";

/// Which name a write was refused for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    PublicIdTaken,
    SlugTaken,
}

/// A table written in two phases (`pages`, `objects`), implemented by [`leased_table!`].
/// Each step is one statement on its own connection.
pub(crate) trait Leased {
    /// The table's row, as the store reads it.
    type Row;
    /// What the domain calls a row (`Page`, `Object`).
    type Record: TryFrom<Self::Row, Error = StoreError>;
    /// What marking a row ready writes besides its state and lease (`()` for nothing).
    type Ready;
    /// The unique constraint on the public id: its PostgreSQL name and SQLite column.
    const PUBLIC_ID_KEY: (&'static str, &'static str);
    /// The unique constraint on (owner, slug): its PostgreSQL name and SQLite column.
    const SLUG_KEY: (&'static str, &'static str);

    /// Row `id` when it is in `state` (`PENDING` or `READY`).
    async fn row(
        db: &Database,
        id: DbId,
        state: &'static str,
    ) -> Result<Option<Self::Row>, InfraError>;

    /// The ready record of `owner` holding `slug`.
    async fn ready_by_slug(
        db: &Database,
        owner: DbId,
        slug: &str,
    ) -> Result<Option<Self::Record>, InfraError>;

    /// Ready record `id`.
    async fn ready(db: &Database, id: DbId) -> Result<Option<Self::Record>, InfraError> {
        let row = Self::row(db, id, READY).await?;
        row.map(Self::Record::try_from).transpose().map_err(infra)
    }

    /// `rows` as the domain's records.
    fn records(rows: Vec<Self::Row>) -> Result<Vec<Self::Record>, InfraError> {
        rows.into_iter()
            .map(Self::Record::try_from)
            .collect::<Result<_, _>>()
            .map_err(infra)
    }

    /// Deletes row `id`, in whatever state (nothing when there is none).
    async fn delete(db: &Database, id: DbId) -> Result<(), InfraError>;

    /// Whether row `id` is there, in whatever state.
    async fn exists(db: &Database, id: DbId) -> Result<bool, InfraError>;

    /// Moves the lease of pending row `id` to `until`; `false` when no row of that id is
    /// pending (it was marked ready, or the janitor removed it).
    async fn renew_lease(
        db: &Database,
        id: DbId,
        until: OffsetDateTime,
    ) -> Result<bool, InfraError>;

    /// Marks pending row `id` ready, without a lease, writing `also` with it; `false` when no
    /// row of that id is pending (its lease lapsed and the janitor removed it).
    async fn mark_ready(db: &Database, id: DbId, also: Self::Ready) -> Result<bool, InfraError>;

    /// The pending rows whose lease lapsed before `now` (or that have none).
    async fn stale_pending(db: &Database, now: OffsetDateTime) -> Result<Vec<DbId>, InfraError>;

    /// The pending row of `owner` holding `slug` whose lease lapsed before `now`.
    async fn lapsed_slug_holder(
        db: &Database,
        owner: DbId,
        slug: &str,
        now: OffsetDateTime,
    ) -> Result<Option<DbId>, InfraError>;

    /// The name a failed insert or update of this table was refused for: a claim decided in
    /// the transaction ([`claim_names!`]) or a unique constraint a racing write reached first.
    fn refusal(e: &StoreError) -> Option<Refusal> {
        if e.is_outcome(Outcome::PublicIdTaken)
            || e.is_unique_violation(Self::PUBLIC_ID_KEY.0, Self::PUBLIC_ID_KEY.1)
        {
            Some(Refusal::PublicIdTaken)
        } else if e.is_outcome(Outcome::SlugTaken)
            || e.is_unique_violation(Self::SLUG_KEY.0, Self::SLUG_KEY.1)
        {
            Some(Refusal::SlugTaken)
        } else {
            None
        }
    }
}

/// Implements [`Leased`] for `crate::schema::$table::table`, read as `$row` (a
/// `#[derive(Selectable)]` of the table) and answered as `$record`. With `ready_also_sets: T`, marking a row ready also
/// writes the changeset `T` (a `#[derive(AsChangeset)]` of the table).
macro_rules! leased_table {
    ($table:ident, row: $row:ident, record: $record:ty $(, ready_also_sets: $ready:ty)?) => {
        const _: () = {
            use diesel::prelude::*;
            use diesel_async::RunQueryDsl;
            use quire_kernel::InfraError;
            use time::OffsetDateTime;

            use $crate::db::{Database, with_conn};
            use $crate::error::infra;
            use $crate::leased::{Leased, PENDING, READY};
            use $crate::schema::$table;
            use $crate::types::{DbId, DbTs};

            impl Leased for $table::table {
                type Row = $row;
                type Record = $record;
                type Ready = $crate::leased::leased_table!(@ready $($ready)?);
                const PUBLIC_ID_KEY: (&'static str, &'static str) = (
                    concat!(stringify!($table), "_public_id_key"),
                    concat!(stringify!($table), ".public_id"),
                );
                const SLUG_KEY: (&'static str, &'static str) = (
                    concat!(stringify!($table), "_account_slug_key"),
                    concat!(stringify!($table), ".slug"),
                );

                async fn row(
                    db: &Database,
                    id: DbId,
                    state: &'static str,
                ) -> Result<Option<$row>, InfraError> {
                    with_conn!(db, |conn| {
                        Ok($table::table
                            .find(id)
                            .filter($table::state.eq(state))
                            .select($row::as_select())
                            .first(conn)
                            .await
                            .optional()?)
                    })
                    .map_err(infra)
                }

                async fn ready_by_slug(
                    db: &Database,
                    owner: DbId,
                    slug: &str,
                ) -> Result<Option<$record>, InfraError> {
                    let slug = slug.to_owned();
                    let row: Option<$row> = with_conn!(db, |conn| {
                        Ok($table::table
                            .filter($table::account_id.eq(owner))
                            .filter($table::slug.eq(&slug))
                            .filter($table::state.eq(READY))
                            .select($row::as_select())
                            .first(conn)
                            .await
                            .optional()?)
                    })
                    .map_err(infra)?;
                    row.map(<$record>::try_from).transpose().map_err(infra)
                }

                async fn delete(db: &Database, id: DbId) -> Result<(), InfraError> {
                    with_conn!(db, |conn| {
                        diesel::delete($table::table.find(id)).execute(conn).await?;
                        Ok(())
                    })
                    .map_err(infra)
                }

                async fn exists(db: &Database, id: DbId) -> Result<bool, InfraError> {
                    let n: i64 = with_conn!(db, |conn| {
                        Ok($table::table.find(id).count().get_result(conn).await?)
                    })
                    .map_err(infra)?;
                    Ok(n > 0)
                }

                async fn renew_lease(
                    db: &Database,
                    id: DbId,
                    until: OffsetDateTime,
                ) -> Result<bool, InfraError> {
                    let renewed = with_conn!(db, |conn| {
                        Ok(diesel::update($table::table.find(id).filter($table::state.eq(PENDING)))
                            .set($table::lease_until.eq(DbTs(until)))
                            .execute(conn)
                            .await?)
                    })
                    .map_err(infra)?;
                    Ok(renewed > 0)
                }

                async fn mark_ready(
                    db: &Database,
                    id: DbId,
                    also: Self::Ready,
                ) -> Result<bool, InfraError> {
                    let marked = with_conn!(db, |conn| {
                        let changes =
                            $crate::leased::leased_table!(@ready_changes $table, also $(, $ready)?);
                        Ok(diesel::update($table::table.find(id).filter($table::state.eq(PENDING)))
                            .set(changes)
                            .execute(conn)
                            .await?)
                    })
                    .map_err(infra)?;
                    Ok(marked > 0)
                }

                async fn stale_pending(
                    db: &Database,
                    now: OffsetDateTime,
                ) -> Result<Vec<DbId>, InfraError> {
                    with_conn!(db, |conn| {
                        Ok($table::table
                            .filter($table::state.eq(PENDING))
                            .filter(
                                $table::lease_until
                                    .lt(DbTs(now))
                                    .or($table::lease_until.is_null()),
                            )
                            .select($table::id)
                            .load(conn)
                            .await?)
                    })
                    .map_err(infra)
                }

                async fn lapsed_slug_holder(
                    db: &Database,
                    owner: DbId,
                    slug: &str,
                    now: OffsetDateTime,
                ) -> Result<Option<DbId>, InfraError> {
                    let slug = slug.to_owned();
                    with_conn!(db, |conn| {
                        Ok($table::table
                            .filter($table::account_id.eq(owner))
                            .filter($table::slug.eq(&slug))
                            .filter($table::state.eq(PENDING))
                            .filter($table::lease_until.lt(DbTs(now)))
                            .select($table::id)
                            .first(conn)
                            .await
                            .optional()?)
                    })
                    .map_err(infra)
                }
            }
        };
    };
    (@ready) => { () };
    (@ready $ready:ty) => { $ready };
    (@ready_changes $table:ident, $also:ident) => {{
        let () = $also;
        ($table::state.eq(READY), $table::lease_until.eq(None::<DbTs>))
    }};
    (@ready_changes $table:ident, $also:ident, $ready:ty) => {
        ($table::state.eq(READY), $table::lease_until.eq(None::<DbTs>), &$also)
    };
}
pub(crate) use leased_table;

/// In a write transaction (`with_tx!`): claims `$slug` for `$owner`, locking the owner's
/// account row until the transaction ends, and refuses it with `Outcome::SlugTaken` when the
/// owner's `$other` table (`pages` or `objects`) holds it. The caller's own table needs no
/// look: its unique constraint refuses the slug.
macro_rules! claim_slug {
    ($conn:ident, $owner:expr, $slug:expr, $other:ident) => {{
        diesel::update($crate::schema::accounts::table.find($owner))
            .set($crate::schema::accounts::id.eq($crate::schema::accounts::id))
            .execute($conn)
            .await?;
        let taken: i64 = $crate::schema::$other::table
            .filter($crate::schema::$other::account_id.eq($owner))
            .filter($crate::schema::$other::slug.eq($slug))
            .count()
            .get_result($conn)
            .await?;
        if taken > 0 {
            return Err($crate::error::StoreError::Outcome(
                $crate::error::Outcome::SlugTaken,
            ));
        }
    }};
}
pub(crate) use claim_slug;

/// In a write transaction, before a pending row is inserted: [`claim_slug!`], then refuses
/// `$public_id` with `Outcome::PublicIdTaken` when a link has it as its code (a page's or an
/// object's public id is the code of its link).
macro_rules! claim_names {
    ($conn:ident, $owner:expr, $slug:expr, $public_id:expr, $other:ident) => {{
        $crate::leased::claim_slug!($conn, $owner, $slug, $other);
        let code_in_use: i64 = $crate::schema::link_codes::table
            .filter($crate::schema::link_codes::code.eq($public_id))
            .count()
            .get_result($conn)
            .await?;
        if code_in_use > 0 {
            return Err($crate::error::StoreError::Outcome(
                $crate::error::Outcome::PublicIdTaken,
            ));
        }
    }};
}
pub(crate) use claim_names;
