//! Column types that exist on both backends: a UUID is native `uuid` on PostgreSQL and
//! hyphenated TEXT on SQLite; a time is `timestamptz` on PostgreSQL and fixed-width RFC 3339
//! UTC TEXT with microseconds on SQLite (so text order is time order).

use diesel::backend::Backend;
use diesel::deserialize::{self, FromSql, FromSqlRow};
use diesel::expression::AsExpression;
use diesel::pg::Pg;
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::{Text, Timestamptz};
use diesel::sqlite::Sqlite;
use time::format_description::FormatItem;
use time::macros::format_description;
use time::{OffsetDateTime, PrimitiveDateTime, UtcOffset};
use uuid::Uuid;

pub mod sql {
    /// A UUID column.
    #[derive(
        Debug, Clone, Copy, Default, diesel::sql_types::SqlType, diesel::query_builder::QueryId,
    )]
    #[diesel(postgres_type(oid = 2950, array_oid = 2951))]
    #[diesel(sqlite_type(name = "Text"))]
    pub struct DbUuid;

    /// A point in time (UTC).
    #[derive(
        Debug, Clone, Copy, Default, diesel::sql_types::SqlType, diesel::query_builder::QueryId,
    )]
    #[diesel(postgres_type(oid = 1184, array_oid = 1185))]
    #[diesel(sqlite_type(name = "Text"))]
    pub struct DbTime;

    /// Times order as times on both backends (SQLite's text is fixed-width), so `MIN` and
    /// comparisons of them mean what they say.
    impl diesel::sql_types::SqlOrd for DbTime {}
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, AsExpression, FromSqlRow)]
#[diesel(sql_type = sql::DbUuid)]
pub struct DbId(pub Uuid);

#[derive(Debug, Clone, Copy, PartialEq, Eq, AsExpression, FromSqlRow)]
#[diesel(sql_type = sql::DbTime)]
pub struct DbTs(pub OffsetDateTime);

impl ToSql<sql::DbUuid, Pg> for DbId {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        <Uuid as ToSql<diesel::sql_types::Uuid, Pg>>::to_sql(&self.0, out)
    }
}

impl FromSql<sql::DbUuid, Pg> for DbId {
    fn from_sql(bytes: <Pg as Backend>::RawValue<'_>) -> deserialize::Result<Self> {
        <Uuid as FromSql<diesel::sql_types::Uuid, Pg>>::from_sql(bytes).map(DbId)
    }
}

impl ToSql<sql::DbUuid, Sqlite> for DbId {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        out.set_value(self.0.hyphenated().to_string());
        Ok(IsNull::No)
    }
}

impl FromSql<sql::DbUuid, Sqlite> for DbId {
    fn from_sql(bytes: <Sqlite as Backend>::RawValue<'_>) -> deserialize::Result<Self> {
        let text = <String as FromSql<Text, Sqlite>>::from_sql(bytes)?;
        Ok(DbId(Uuid::parse_str(&text)?))
    }
}

/// How a time is stored in SQLite: UTC text of fixed width, to the microsecond, so that
/// comparing the text compares the times (what `ORDER BY` and the range filters rely on).
pub const SQLITE_TIME: &[FormatItem<'static>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]Z");

impl ToSql<sql::DbTime, Pg> for DbTs {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        <OffsetDateTime as ToSql<Timestamptz, Pg>>::to_sql(&self.0, out)
    }
}

impl FromSql<sql::DbTime, Pg> for DbTs {
    fn from_sql(bytes: <Pg as Backend>::RawValue<'_>) -> deserialize::Result<Self> {
        <OffsetDateTime as FromSql<Timestamptz, Pg>>::from_sql(bytes).map(DbTs)
    }
}

impl ToSql<sql::DbTime, Sqlite> for DbTs {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        let utc = self.0.to_offset(UtcOffset::UTC);
        out.set_value(utc.format(SQLITE_TIME)?);
        Ok(IsNull::No)
    }
}

impl FromSql<sql::DbTime, Sqlite> for DbTs {
    fn from_sql(bytes: <Sqlite as Backend>::RawValue<'_>) -> deserialize::Result<Self> {
        let text = <String as FromSql<Text, Sqlite>>::from_sql(bytes)?;
        let t = PrimitiveDateTime::parse(&text, SQLITE_TIME)?;
        Ok(DbTs(t.assume_utc()))
    }
}
