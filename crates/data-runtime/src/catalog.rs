//! What the schema cache was loaded from, in a form cheap to ask for again: for each kind of
//! name a request can miss, a fingerprint of the catalog rows that hold such names. The
//! load reads all three in the same statement (one snapshot) as the cache; a request that
//! names what the cache lacks reads the one its kind needs, and the cache is loaded again
//! only when it differs.
//!
//! A fingerprint is the count of the rows and the sum of a hash of each row's oid and
//! `xmin`. Every statement that makes or renames a name writes a new version of the row
//! that holds it (`CREATE TABLE` and `ALTER TABLE … RENAME` a `pg_class` row, `ADD COLUMN`
//! and `RENAME COLUMN` a `pg_attribute` row, `CREATE FUNCTION` and `CREATE OR REPLACE` a
//! `pg_proc` row), and a new version has the `xmin` of the transaction that wrote it, which
//! no version read by the last load can have; a dropped row leaves the count or the sum.
//! So a name the catalog gained since the load always changes its kind's fingerprint.
//! What changes one without changing a name (a grant, an index, `VACUUM FREEZE`) costs
//! one load more, never a wrong answer. `VACUUM` and `ANALYZE` write statistics in place,
//! without a new version.

use quire_databases::Missing;

/// The exposed schemas' oids, from the JSON array of their names that is `$1` of the
/// load ([`SchemaCache::LOAD_SQL`](quire_dataapi::SchemaCache::LOAD_SQL)) and of each
/// question, as an array computed once: joined with the catalog, they were planned for the
/// hundred rows PostgreSQL assumes a set-returning function gives, and the questions for a
/// column and a function took two to four times as long as `public`'s alone.
macro_rules! exposed {
    () => {
        "ANY (ARRAY(SELECT n.oid FROM pg_catalog.pg_namespace n \
        JOIN pg_catalog.json_array_elements_text($1::text::json) AS s(name) ON n.nspname = s.name))"
    };
}

/// The relations of the exposed schemas (tables, views and their kin, also indexes,
/// sequences and composite types): where a table's name is. A seq scan of `pg_class`,
/// which has no index by namespace alone: a few hundred rows in a tenant's database.
const TABLES: &str = concat!(
    "SELECT count(*)::text || ':' || coalesce(sum(pg_catalog.hashint8(\
    (c.oid::int8 << 32) | c.xmin::text::int8)), 0)::text \
    FROM pg_catalog.pg_class c WHERE c.relnamespace = ",
    exposed!()
);

/// The columns of those relations, through `pg_attribute`'s index by relation. Rows of one
/// relation made by one statement hash alike; the sum still moves when any of them does.
const COLUMNS: &str = concat!(
    "SELECT count(*)::text || ':' || coalesce(sum(pg_catalog.hashint8(\
    (a.attrelid::int8 << 32) | a.xmin::text::int8)), 0)::text \
    FROM pg_catalog.pg_class c \
    JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 \
    WHERE c.relnamespace = ",
    exposed!()
);

/// The functions of the exposed schemas: their names and arguments. A seq scan of `pg_proc` (about
/// 3,300 rows, nearly all of them the system's).
const FUNCTIONS: &str = concat!(
    "SELECT count(*)::text || ':' || coalesce(sum(pg_catalog.hashint8(\
    (p.oid::int8 << 32) | p.xmin::text::int8)), 0)::text \
    FROM pg_catalog.pg_proc p WHERE p.pronamespace = ",
    exposed!()
);

/// The statement that asks for `missing`'s fingerprint: one row, one text column; its
/// parameter is the load's.
pub(crate) fn question(missing: Missing) -> &'static str {
    match missing {
        Missing::Table => TABLES,
        Missing::Column => COLUMNS,
        Missing::Function => FUNCTIONS,
    }
}

/// `load`, a statement of one row and one column (the cache), with the three fingerprints
/// as the next three columns, read in the same snapshot.
pub(crate) fn with_fingerprints(load: &str) -> String {
    format!(
        "SELECT cache::text, ({TABLES}), ({COLUMNS}), ({FUNCTIONS}) FROM ({}) AS loaded(cache)",
        load.trim().trim_end_matches(';')
    )
}

/// The fingerprints the cache was loaded with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Fingerprints {
    tables: String,
    columns: String,
    functions: String,
}

impl Fingerprints {
    /// From the load's columns after the cache, in [`with_fingerprints`]' order.
    pub fn read(columns: impl IntoIterator<Item = Option<String>>) -> Option<Self> {
        let mut columns = columns.into_iter();
        Some(Self {
            tables: columns.next()??,
            columns: columns.next()??,
            functions: columns.next()??,
        })
    }

    pub fn of(&self, missing: Missing) -> &str {
        match missing {
            Missing::Table => &self.tables,
            Missing::Column => &self.columns,
            Missing::Function => &self.functions,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_load_reads_each_question_in_its_own_statement() {
        let sql = with_fingerprints("SELECT 1;\n");
        for missing in [Missing::Table, Missing::Column, Missing::Function] {
            assert!(
                sql.contains(&format!("({})", question(missing))),
                "{missing:?}"
            );
        }
        assert!(sql.ends_with("FROM (SELECT 1) AS loaded(cache)"), "{sql}");
        let read = Fingerprints::read(["1:2", "3:4", "5:6"].map(|s| Some(s.to_owned())));
        let read = read.unwrap_or_default();
        assert_eq!(
            [Missing::Table, Missing::Column, Missing::Function].map(|m| read.of(m)),
            ["1:2", "3:4", "5:6"]
        );
        assert_eq!(Fingerprints::read([Some("1:2".to_owned()), None]), None);
    }
}
