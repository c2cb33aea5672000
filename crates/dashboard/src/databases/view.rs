//! What the Databases pages show, made from the database service's answers: a database as
//! a row and a detail (its data API's settings among it), the last statement's result as a
//! table, PostgreSQL's refusal with its SQLSTATE, the data API's keys, and the database's
//! end users. Every field is text askama escapes; nothing here is markup but the `<time>`
//! elements `When` makes.

use quire_databases::service::EndUsersView;
use quire_databases::{
    DataApiSecret, DataApiSettings, DatabaseView, OpenTable, SqlOutcome, SqlRefusal,
};
use serde_json::Value;
use time::OffsetDateTime;

use crate::pages::row::human_bytes;
use crate::shared::when::When;

/// A database as the list and the detail show it.
pub(crate) struct DatabaseRow {
    pub id: String,
    pub slug: String,
    pub name: String,
    pub project: String,
    pub size: String,
    pub data_api: bool,
    /// The data API's secret was made (it was on once), so its keys exist.
    pub has_keys: bool,
    pub api_url: String,
    pub rest_url: String,
    pub created: When,
    pub expires: Option<When>,
    /// What `anon` reaches with no row-level security, when it was read (the detail).
    pub open_tables: Option<Vec<OpenTableRow>>,
    pub settings: SettingsShown,
}

/// The data API's settings that PostgREST leaves off by default, as the detail shows them
/// (changed through the API or the CLI).
pub(crate) struct SettingsShown {
    /// The exposed schemas, the default first.
    pub schemas: String,
    /// `no cap`, or the number.
    pub max_rows: String,
    pub aggregates: &'static str,
    pub explain: &'static str,
    pub tx_rollback: &'static str,
}

impl SettingsShown {
    fn new(s: &DataApiSettings) -> Self {
        let on = |b: bool| if b { "on" } else { "off" };
        Self {
            schemas: s.exposed_schemas.join(", "),
            max_rows: s
                .max_rows
                .map_or_else(|| "no cap".to_owned(), |n| n.to_string()),
            aggregates: on(s.aggregates),
            explain: on(s.explain),
            tx_rollback: on(s.tx_rollback),
        }
    }
}

/// A table whoever holds the anon key reaches with nothing to stop them.
pub(crate) struct OpenTableRow {
    pub name: String,
    pub kind: String,
    /// What `anon` may do to it, as a phrase: `select, insert, update, delete`.
    pub privileges: String,
}

impl From<OpenTable> for OpenTableRow {
    fn from(t: OpenTable) -> Self {
        Self {
            name: t.name,
            kind: t.kind,
            privileges: t.privileges.join(", "),
        }
    }
}

impl DatabaseRow {
    pub(crate) fn new(v: DatabaseView, now: OffsetDateTime) -> Self {
        let d = v.database;
        Self {
            id: d.id.0.to_string(),
            slug: d.slug.as_str().to_owned(),
            name: d.name,
            project: v.project_slug.as_str().to_owned(),
            // The cluster did not say (a database dropped meanwhile): nothing to show.
            size: v
                .size_bytes
                .map_or_else(|| "unknown".to_owned(), human_bytes),
            data_api: d.data_api_enabled,
            has_keys: d.jwt_secret.is_some(),
            api_url: v.api_url,
            rest_url: v.rest_url,
            created: When::new(d.created_at, now),
            expires: d.expires_at.map(|t| When::new(t, now)),
            open_tables: v
                .open_tables
                .map(|t| t.into_iter().map(OpenTableRow::from).collect()),
            settings: SettingsShown::new(&d.data_api_settings),
        }
    }
}

/// One value of a result, as text; SQL's NULL apart, so it cannot be told from the text
/// `NULL`.
pub(crate) struct Cell {
    pub text: String,
    pub null: bool,
}

impl Cell {
    fn of(value: &Value) -> Self {
        match value {
            Value::Null => Self {
                text: "NULL".into(),
                null: true,
            },
            // PostgreSQL's text for everything but numbers, booleans and JSON: as it came.
            Value::String(s) => Self {
                text: s.clone(),
                null: false,
            },
            other => Self {
                text: other.to_string(),
                null: false,
            },
        }
    }
}

/// The last statement's result.
pub(crate) struct ResultTable {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    pub row_count: u64,
}

impl ResultTable {
    pub(crate) fn new(o: SqlOutcome) -> Self {
        Self {
            rows: o
                .rows
                .iter()
                .map(|row| row.iter().map(Cell::of).collect())
                .collect(),
            columns: o.columns,
            row_count: o.row_count,
        }
    }

    /// What the count says: rows returned, or touched by a statement that returns none.
    pub(crate) fn summary(&self) -> String {
        let n = self.row_count;
        let rows = if n == 1 { "row" } else { "rows" };
        if self.columns.is_empty() {
            return format!("Done: {n} {rows} affected.");
        }
        let shown = self.rows.len() as u64;
        if shown < n {
            format!("{n} {rows}; the first {shown} are shown.")
        } else {
            format!("{n} {rows}.")
        }
    }
}

/// PostgreSQL's refusal of the SQL, in its own words.
pub(crate) struct SqlError {
    pub message: String,
    pub sqlstate: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
    pub position: Option<u32>,
}

impl From<SqlRefusal> for SqlError {
    fn from(r: SqlRefusal) -> Self {
        Self {
            message: r.message,
            sqlstate: r.sqlstate,
            detail: r.detail,
            hint: r.hint,
            position: r.position,
        }
    }
}

/// The SQL box as the answer shows it: what was typed (kept, so it can be fixed and run
/// again), and what came of it.
#[derive(Default)]
pub(crate) struct SqlBox {
    pub sql: String,
    pub result: Option<ResultTable>,
    pub error: Option<SqlError>,
}

/// The data API's keys, shown once on the answer to the post that asked for them.
pub(crate) struct Keys {
    pub url: String,
    pub rest_url: String,
    pub anon_key: String,
    pub service_role_key: String,
    pub jwt_secret: String,
}

impl From<DataApiSecret> for Keys {
    fn from(s: DataApiSecret) -> Self {
        Self {
            url: s.api_url,
            rest_url: s.rest_url,
            anon_key: s.keys.anon,
            service_role_key: s.keys.service_role,
            jwt_secret: s.jwt_secret,
        }
    }
}

impl Keys {
    /// The supabase-py line a page's builder starts from: the anon key only.
    pub(crate) fn python(&self) -> String {
        format!(
            "supabase = create_client(\"{}\", \"{}\")",
            self.url, self.anon_key
        )
    }

    /// The same for supabase-js.
    pub(crate) fn javascript(&self) -> String {
        format!(
            "const supabase = createClient(\"{}\", \"{}\")",
            self.url, self.anon_key
        )
    }
}

/// An end user of the database, as the Users section lists them.
pub(crate) struct UserRow {
    pub id: String,
    pub email: String,
    pub created: When,
    /// `None` when they never signed in.
    pub last_sign_in: Option<When>,
}

/// The database's end users: the newest ones, and how many there are in all.
pub(crate) struct UserList {
    pub rows: Vec<UserRow>,
    pub total: u64,
}

impl UserList {
    pub(crate) fn new(v: EndUsersView, now: OffsetDateTime) -> Self {
        Self {
            rows: v
                .users
                .into_iter()
                .map(|u| UserRow {
                    id: u.id.to_string(),
                    email: u.email,
                    created: When::new(u.created_at, now),
                    last_sign_in: u.last_sign_in_at.map(|t| When::new(t, now)),
                })
                .collect(),
            total: v.total,
        }
    }

    /// What the count says, and whether the list is cut.
    pub(crate) fn summary(&self) -> String {
        let n = self.total;
        let shown = self.rows.len() as u64;
        match n {
            0 => "No users yet.".into(),
            1 => "1 user.".into(),
            _ if shown < n => format!("{n} users; the newest {shown} are shown."),
            _ => format!("{n} users."),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn values_read_as_text_and_null_stays_apart_from_the_word() {
        let table = ResultTable::new(SqlOutcome {
            columns: vec!["a".into(), "b".into(), "c".into()],
            rows: vec![vec![json!(1), json!("NULL"), Value::Null]],
            row_count: 1,
            open_tables: None,
        });
        let row = &table.rows[0];
        assert_eq!((row[0].text.as_str(), row[0].null), ("1", false));
        assert_eq!((row[1].text.as_str(), row[1].null), ("NULL", false));
        assert_eq!((row[2].text.as_str(), row[2].null), ("NULL", true));
        assert_eq!(table.summary(), "1 row.");
    }

    #[test]
    fn the_users_count_says_how_many_and_what_was_cut() {
        let now = OffsetDateTime::now_utc();
        let user = |email: &str, signed_in: bool| quire_databases::EndUser {
            id: uuid::Uuid::new_v4(),
            email: email.into(),
            email_confirmed_at: Some(now),
            user_metadata: json!({}),
            app_metadata: json!({}),
            created_at: now,
            updated_at: now,
            last_sign_in_at: signed_in.then_some(now),
        };
        let none = UserList::new(
            EndUsersView {
                users: vec![],
                total: 0,
            },
            now,
        );
        assert_eq!(none.summary(), "No users yet.");
        let one = UserList::new(
            EndUsersView {
                users: vec![user("a@example.com", false)],
                total: 1,
            },
            now,
        );
        assert_eq!(one.summary(), "1 user.");
        assert!(one.rows[0].last_sign_in.is_none());
        assert_eq!(one.rows[0].email, "a@example.com");
        let cut = UserList::new(
            EndUsersView {
                users: vec![user("a@example.com", true), user("b@example.com", true)],
                total: 75,
            },
            now,
        );
        assert_eq!(cut.summary(), "75 users; the newest 2 are shown.");
        assert!(cut.rows[1].last_sign_in.is_some());
        let all = UserList::new(
            EndUsersView {
                users: vec![user("a@example.com", true), user("b@example.com", false)],
                total: 2,
            },
            now,
        );
        assert_eq!(all.summary(), "2 users.");
    }

    #[test]
    fn the_settings_read_as_words() {
        let shown = SettingsShown::new(&DataApiSettings::default());
        assert_eq!(
            (
                shown.schemas.as_str(),
                shown.max_rows.as_str(),
                shown.aggregates
            ),
            ("public", "no cap", "off")
        );
        let shown = SettingsShown::new(&DataApiSettings {
            exposed_schemas: vec!["api".into(), "public".into()],
            max_rows: Some(100),
            aggregates: true,
            explain: true,
            tx_rollback: false,
        });
        assert_eq!(
            (
                shown.schemas.as_str(),
                shown.max_rows.as_str(),
                shown.explain,
                shown.tx_rollback
            ),
            ("api, public", "100", "on", "off")
        );
    }

    #[test]
    fn the_count_says_what_was_touched_and_what_was_cut() {
        let touched = ResultTable::new(SqlOutcome {
            columns: vec![],
            rows: vec![],
            row_count: 2,
            open_tables: None,
        });
        assert_eq!(touched.summary(), "Done: 2 rows affected.");
        let cut = ResultTable::new(SqlOutcome {
            columns: vec!["n".into()],
            rows: vec![vec![json!(1)]],
            row_count: 5_000,
            open_tables: None,
        });
        assert_eq!(cut.summary(), "5000 rows; the first 1 are shown.");
    }
}
