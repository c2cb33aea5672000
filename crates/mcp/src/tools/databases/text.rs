//! `run_sql`'s text for the model: the rows aligned as psql prints them, with the count,
//! then a warning naming the tables the SQL left open to whoever holds the anon key.

use serde_json::Value;

use super::SqlOut;

/// Longest cell of the text table, in characters: the whole value is in the structured
/// content; the table is for reading.
const MAX_CELL_CHARS: usize = 200;

/// `run_sql`'s text: the rows as a table for the model to read (the values themselves are
/// in the structured content), then the warning about the tables the SQL left open.
pub(in crate::tools) fn sql_table(out: &SqlOut) -> String {
    let table = text_table(&out.columns, &out.rows, out.row_count);
    match out.open_tables.as_deref().and_then(open_warning) {
        Some(warning) => format!("{table}\n\n{warning}"),
        None => table,
    }
}

/// What the model is told when tables are open: which, and what closes them.
fn open_warning(tables: &[String]) -> Option<String> {
    if tables.is_empty() {
        return None;
    }
    Some(format!(
        "WARNING: open to anyone with the anon key, with no row-level security: {}. \
         Before real data goes in: alter table NAME enable row level security, then create \
         policy; for a view, alter view NAME set (security_invoker = on); or revoke from anon.",
        tables.join("; ")
    ))
}

fn cell(value: &Value) -> String {
    let text = match value {
        Value::Null => "NULL".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let text = text
        .replace('\n', "\\n")
        .replace('\r', "\\r")
        .replace('\t', " ");
    if text.chars().count() > MAX_CELL_CHARS {
        let cut: String = text.chars().take(MAX_CELL_CHARS).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// Columns and rows aligned as psql prints them, then the count.
fn text_table(columns: &[String], rows: &[Vec<Value>], row_count: u64) -> String {
    let plural = |n: u64| if n == 1 { "row" } else { "rows" };
    if columns.is_empty() {
        return format!("OK: {row_count} {} affected", plural(row_count));
    }
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(cell).collect())
        .collect();
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            cells
                .iter()
                .filter_map(|row| row.get(i))
                .map(|s| s.chars().count())
                .chain([c.chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |values: &mut dyn Iterator<Item = &String>| {
        let padded: Vec<String> = values
            .zip(&widths)
            .map(|(v, w)| format!("{v:<w$}"))
            .collect();
        padded.join(" | ").trim_end().to_owned()
    };
    let mut text = line(&mut columns.iter());
    text.push('\n');
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    text.push_str(&rule.join("-+-"));
    text.push('\n');
    for row in &cells {
        text.push_str(&line(&mut row.iter()));
        text.push('\n');
    }
    let shown = rows.len() as u64;
    if shown < row_count {
        text.push_str(&format!(
            "({row_count} {}; the first {shown} are shown)",
            plural(row_count)
        ));
    } else {
        text.push_str(&format!("({row_count} {})", plural(row_count)));
    }
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_result_reads_as_an_aligned_table_with_its_count() {
        let columns = vec!["id".to_owned(), "name".to_owned()];
        let rows = vec![vec![json!(1), json!("tea")], vec![json!(10), Value::Null]];
        assert_eq!(
            text_table(&columns, &rows, 2),
            "id | name\n---+-----\n1  | tea\n10 | NULL\n(2 rows)"
        );
        assert_eq!(text_table(&[], &[], 1), "OK: 1 row affected");
        let long = json!("x".repeat(300));
        let cut = text_table(&["v".to_owned()], &[vec![long]], 5000);
        assert!(cut.contains(&format!("{}…", "x".repeat(200))), "{cut}");
        assert!(cut.ends_with("(5000 rows; the first 1 are shown)"), "{cut}");
    }

    #[test]
    fn run_sqls_text_ends_with_the_tables_left_open_and_only_then() {
        let out = |open: Option<Vec<String>>| SqlOut {
            columns: Vec::new(),
            rows: Vec::new(),
            row_count: 0,
            open_tables: open,
        };
        assert_eq!(sql_table(&out(None)), "OK: 0 rows affected");
        assert_eq!(sql_table(&out(Some(Vec::new()))), "OK: 0 rows affected");
        let notes = "notes (table: select, insert)".to_owned();
        let warned = sql_table(&out(Some(vec![notes])));
        assert!(
            warned.starts_with(
                "OK: 0 rows affected\n\nWARNING: open to anyone with the anon key, with no \
                 row-level security: notes (table: select, insert). "
            ),
            "{warned}"
        );
        assert!(warned.contains("enable row level security"), "{warned}");
    }
}
