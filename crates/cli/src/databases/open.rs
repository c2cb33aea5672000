//! The warning `quire db` prints about the tables a database leaves open to whoever holds
//! its anon key (`openTables` in the API's answers): under a database's details, under the
//! list for each database that has some, and after SQL that leaves some.

use serde_json::Value;

use super::render::{aligned, text_of};

/// Each open table as a row: its name, its kind, what `anon` may do to it.
fn rows(tables: &[Value]) -> Vec<Vec<String>> {
    tables
        .iter()
        .map(|t| {
            let privileges: Vec<&str> = t["privileges"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            vec![
                text_of(t, "name"),
                text_of(t, "kind"),
                privileges.join(", "),
            ]
        })
        .collect()
}

/// What to do about them, once per warning, in lines a terminal does not wrap.
const WHAT_TO_DO: &str = "\
Anyone with the anon key (every visitor of a page that uses the database) can do
this to them. Turn row-level security on and add policies
(alter table NAME enable row level security; create policy …), make a view
security_invoker (alter view NAME set (security_invoker = on)), or revoke anon's
privileges.";

/// The warning for `openTables`: `None` when there are none, or the server did not say.
pub(crate) fn warning(open_tables: &Value) -> Option<String> {
    let tables = open_tables.as_array().filter(|t| !t.is_empty())?;
    let n = tables.len();
    let head = format!(
        "WARNING: {n} {} open to anon, with no row-level security:",
        if n == 1 { "table is" } else { "tables are" }
    );
    let listed = aligned(&["TABLE", "KIND", "ANON MAY"], &rows(tables));
    let indented: Vec<String> = listed.lines().map(|l| format!("  {l}")).collect();
    Some(format!("{head}\n{}\n{WHAT_TO_DO}", indented.join("\n")))
}

/// One line per database of a list that leaves tables open, and what shows them.
pub(crate) fn list_warnings(list: &Value) -> Option<String> {
    let lines: Vec<String> = list["databases"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| {
            let names: Vec<String> = d["openTables"]
                .as_array()
                .filter(|t| !t.is_empty())?
                .iter()
                .map(|t| text_of(t, "name"))
                .collect();
            let slug = text_of(d, "slug");
            Some(format!(
                "WARNING: {slug} leaves {} open to anon, with no row-level security: {} \
                 (quire db get {slug})",
                if names.len() == 1 {
                    "a table"
                } else {
                    "tables"
                },
                names.join(", ")
            ))
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// `text`, then the warning for `open_tables` after a blank line, when there is one.
pub(crate) fn followed_by_warning(text: String, open_tables: &Value) -> String {
    match warning(open_tables) {
        Some(warning) => format!("{text}\n\n{warning}"),
        None => text,
    }
}
