//! A database's data API settings: what of PostgREST's behaviour that PostgREST leaves off
//! by default its owner has turned on. Behind PostgREST an operator turns these on with
//! `ALTER ROLE authenticator SET pgrst.…`; here the authenticator role is Quire's, so the
//! owner sets them on the database's record instead (`PATCH …/data-api`), and every
//! replica's instance takes them within its record check. Each maps to one of PostgREST's
//! settings: `exposed_schemas` to `db-schemas`, `max_rows` to `db-max-rows`, `aggregates` to
//! `db-aggregates-enabled`, `explain` to `db-plan-enabled` and `tx_rollback` to
//! `db-tx-end = commit-allow-override`.

/// Most schemas one data API exposes. Each is loaded into every instance's schema cache.
pub const MAX_EXPOSED_SCHEMAS: usize = 16;

/// The largest `max_rows`: past it a cap caps nothing a client could use.
pub const MAX_ROWS_LIMIT: u64 = 1_000_000;

/// The schema the data API exposes until its owner says otherwise, as PostgREST's default.
pub const DEFAULT_SCHEMA: &str = "public";

/// A database's data API settings. The default is PostgREST's: `public` alone, no cap on
/// rows, and aggregates, EXPLAIN and `Prefer: tx=rollback` off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataApiSettings {
    /// The schemas the data API exposes, the default (a request without a profile) first;
    /// never empty, each a name [`check_schema`] takes, none twice.
    pub exposed_schemas: Vec<String>,
    /// Most rows a read or a representation answers, whatever the request asks.
    pub max_rows: Option<u64>,
    /// `count()`, `sum()`, `avg()`, `min()` and `max()` in `select`.
    pub aggregates: bool,
    /// The plan of a request, `Accept: application/vnd.pgrst.plan`.
    pub explain: bool,
    /// `Prefer: tx=rollback`: a write answered and then rolled back.
    pub tx_rollback: bool,
}

impl Default for DataApiSettings {
    fn default() -> Self {
        Self {
            exposed_schemas: vec![DEFAULT_SCHEMA.to_owned()],
            max_rows: None,
            aggregates: false,
            explain: false,
            tx_rollback: false,
        }
    }
}

/// A change of settings: `None` keeps a field; `max_rows: Some(None)` removes the cap.
/// Values are as sent, judged by [`DataApiSettings::patched`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SettingsPatch {
    pub exposed_schemas: Option<Vec<String>>,
    pub max_rows: Option<Option<i128>>,
    pub aggregates: Option<bool>,
    pub explain: Option<bool>,
    pub tx_rollback: Option<bool>,
}

impl DataApiSettings {
    /// These settings with `patch` applied.
    ///
    /// # Errors
    /// A message naming the field and its rule, for the first value that breaks one:
    /// nothing is applied then.
    pub fn patched(&self, patch: SettingsPatch) -> Result<Self, String> {
        let mut next = self.clone();
        if let Some(schemas) = patch.exposed_schemas {
            next.exposed_schemas = check_schemas(schemas)?;
        }
        if let Some(max_rows) = patch.max_rows {
            next.max_rows = max_rows.map(check_max_rows).transpose()?;
        }
        next.aggregates = patch.aggregates.unwrap_or(next.aggregates);
        next.explain = patch.explain.unwrap_or(next.explain);
        next.tx_rollback = patch.tx_rollback.unwrap_or(next.tx_rollback);
        Ok(next)
    }

    /// What the planner takes of these (the exposed schemas are the schema cache's).
    #[must_use]
    pub fn planner(&self) -> quire_dataapi::Settings {
        quire_dataapi::Settings {
            aggregates: self.aggregates,
            explain: self.explain,
            tx_override: self.tx_rollback,
            max_rows: self.max_rows,
        }
    }

    /// The schemas as the record keeps them: comma-separated (no name holds a comma).
    #[must_use]
    pub fn schemas_text(&self) -> String {
        self.exposed_schemas.join(",")
    }

    /// The schemas from the record's text.
    ///
    /// # Errors
    /// When the text is not a list [`check_schemas`] takes (a corrupt record).
    pub fn schemas_of(text: &str) -> Result<Vec<String>, String> {
        check_schemas(text.split(',').map(str::to_owned).collect())
    }
}

fn check_max_rows(n: i128) -> Result<u64, String> {
    u64::try_from(n)
        .ok()
        .filter(|n| (1..=MAX_ROWS_LIMIT).contains(n))
        .ok_or_else(|| {
            format!("maxRows must be a whole number from 1 to {MAX_ROWS_LIMIT}, or null for no cap")
        })
}

/// A list of schemas to expose: 1 to [`MAX_EXPOSED_SCHEMAS`] names, each one
/// [`check_schema`] takes, none twice; kept in its order (the first is the default).
///
/// # Errors
/// A message naming the rule broken (and the name that broke it).
pub fn check_schemas(schemas: Vec<String>) -> Result<Vec<String>, String> {
    if schemas.is_empty() || schemas.len() > MAX_EXPOSED_SCHEMAS {
        return Err(format!(
            "exposedSchemas must name 1 to {MAX_EXPOSED_SCHEMAS} schemas, the default first"
        ));
    }
    for (i, name) in schemas.iter().enumerate() {
        check_schema(name)?;
        if schemas[..i].contains(name) {
            return Err(format!("exposedSchemas names {name:?} twice"));
        }
    }
    Ok(schemas)
}

/// A schema name the data API may expose: as PostgreSQL writes a name unquoted (ASCII
/// letters, digits, `_` and `$`, not starting with a digit or `$`), at most 63 bytes, and
/// not one of PostgreSQL's (`pg_…`, `information_schema`) nor `auth`, where the database's
/// end users and their password hashes and sessions live, reached only through the auth
/// API.
///
/// # Errors
/// A message naming the schema and the rule.
pub fn check_schema(name: &str) -> Result<(), String> {
    let first_ok = name
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    let rest_ok = name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$');
    if !first_ok || !rest_ok || name.len() > 63 {
        return Err(format!(
            "exposedSchemas: {name:?} is not a schema name: 1-63 letters, digits, _ or $, \
             not starting with a digit or $"
        ));
    }
    let lower = name.to_ascii_lowercase();
    if lower.starts_with("pg_") || lower == "information_schema" {
        return Err(format!(
            "exposedSchemas: {name:?} is PostgreSQL's own schema and is not exposed"
        ));
    }
    if name == "auth" {
        return Err(
            "exposedSchemas: \"auth\" holds the database's end users, their password hashes and \
             sessions, reached only through the auth API; it is not exposed"
                .to_owned(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schemas(names: &[&str]) -> SettingsPatch {
        SettingsPatch {
            exposed_schemas: Some(names.iter().map(|s| (*s).to_owned()).collect()),
            ..SettingsPatch::default()
        }
    }

    #[test]
    fn the_default_is_postgrests() {
        let d = DataApiSettings::default();
        assert_eq!(d.exposed_schemas, ["public"]);
        assert_eq!(d.max_rows, None);
        assert!(!d.aggregates && !d.explain && !d.tx_rollback);
        assert_eq!(d.schemas_text(), "public");
    }

    #[test]
    fn a_patch_changes_what_it_names_and_keeps_the_rest() {
        let on = DataApiSettings::default()
            .patched(SettingsPatch {
                aggregates: Some(true),
                max_rows: Some(Some(100)),
                ..schemas(&["api", "public"])
            })
            .unwrap();
        assert_eq!(on.exposed_schemas, ["api", "public"]);
        assert_eq!(on.max_rows, Some(100));
        assert!(on.aggregates && !on.explain && !on.tx_rollback);
        let next = on
            .patched(SettingsPatch {
                explain: Some(true),
                ..SettingsPatch::default()
            })
            .unwrap();
        assert_eq!(next.max_rows, Some(100));
        assert!(next.aggregates && next.explain);
        let uncapped = next
            .patched(SettingsPatch {
                max_rows: Some(None),
                aggregates: Some(false),
                ..SettingsPatch::default()
            })
            .unwrap();
        assert_eq!(uncapped.max_rows, None);
        assert!(!uncapped.aggregates && uncapped.explain);
    }

    #[test]
    fn bad_values_are_refused_naming_the_field() {
        let d = DataApiSettings::default();
        for bad in [
            schemas(&[]),
            schemas(&["public", "public"]),
            schemas(&["1api"]),
            schemas(&["$x"]),
            schemas(&["a-b"]),
            schemas(&["a,b"]),
            schemas(&[""]),
            schemas(&[" public"]),
            schemas(&["pg_catalog"]),
            schemas(&["PG_toast"]),
            schemas(&["information_schema"]),
            schemas(&["auth"]),
            schemas(&["é"]),
            schemas(&[&"a".repeat(64)]),
            schemas(
                &(0..=MAX_EXPOSED_SCHEMAS)
                    .map(|i| format!("s{i}"))
                    .collect::<Vec<_>>()
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>(),
            ),
        ] {
            let message = d.patched(bad.clone()).unwrap_err();
            assert!(message.starts_with("exposedSchemas"), "{bad:?}: {message}");
        }
        for n in [0, -1, i128::from(MAX_ROWS_LIMIT) + 1, i128::MAX] {
            let message = d
                .patched(SettingsPatch {
                    max_rows: Some(Some(n)),
                    ..SettingsPatch::default()
                })
                .unwrap_err();
            assert!(message.starts_with("maxRows"), "{n}: {message}");
        }
    }

    #[test]
    fn names_postgresql_takes_unquoted_pass() {
        let fine = [
            "api",
            "_private",
            "Api2",
            "v$1",
            &"a".repeat(63),
            "authz",
            "pgx",
        ];
        let d = DataApiSettings::default()
            .patched(schemas(&fine))
            .expect("fine names");
        assert_eq!(d.exposed_schemas, fine);
        assert_eq!(
            DataApiSettings::schemas_of(&d.schemas_text()).unwrap(),
            fine
        );
        assert!(DataApiSettings::schemas_of("").is_err());
    }
}
