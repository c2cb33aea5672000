//! What `quire db` prints that needs no server: an SQL result as psql's aligned table, an
//! SQL refusal with a caret under where PostgreSQL stopped, a database, a list, a secret.
//! Widths are terminal columns, not bytes: an accent or a CJK character must not push the
//! caret or the column bars out of line.

use serde_json::Value;

/// Widest a table cell is shown; longer ones end in `…` (`--json` has them whole).
const MAX_CELL: usize = 40;
/// Widest an SQL line around a caret is shown, and how much of it may precede the caret.
const MAX_LINE: usize = 72;
const BEFORE_CARET: usize = 40;

/// Terminal columns of one character: 0 for combining marks, 2 for East Asian wide ones and
/// emoji, else 1. The main ranges only: the CLI takes no Unicode table crate for this.
fn char_width(c: char) -> usize {
    match u32::from(c) {
        0x0300..=0x036F | 0x200B..=0x200F | 0xFE00..=0xFE0F => 0,
        0x1100..=0x115F
        | 0x2E80..=0x303E
        | 0x3041..=0x33FF
        | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xA000..=0xA4CF
        | 0xAC00..=0xD7A3
        | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F
        | 0xFF00..=0xFF60
        | 0xFFE0..=0xFFE6
        | 0x1F300..=0x1F64F
        | 0x1F900..=0x1F9FF
        | 0x20000..=0x3FFFD => 2,
        _ => 1,
    }
}

pub(crate) fn width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

/// `s` cut to `max` columns, ending in `…` when cut.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_owned();
    }
    let mut kept = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = char_width(c);
        if used + w + 1 > max {
            break;
        }
        kept.push(c);
        used += w;
    }
    kept.push('…');
    kept
}

/// A value as one line of a cell: NULL spelled out (an empty cell could be an empty
/// string), JSON compact, line breaks as `↵` so a row stays one line.
fn cell(v: &Value) -> String {
    let text = match v {
        Value::Null => return "NULL".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    text.replace("\r\n", "\n")
        .chars()
        .map(|c| match c {
            '\n' => '↵',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

fn pad(s: &str, to: usize) -> String {
    format!("{s}{}", " ".repeat(to.saturating_sub(width(s))))
}

fn pad_left(s: &str, to: usize) -> String {
    format!("{}{s}", " ".repeat(to.saturating_sub(width(s))))
}

fn center(s: &str, to: usize) -> String {
    let room = to.saturating_sub(width(s));
    format!("{}{s}{}", " ".repeat(room / 2), " ".repeat(room - room / 2))
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A `{columns, rows, rowCount}` answer as psql prints it: centred headers, numbers on the
/// right, `(N rows)` under it; a statement with no columns (DDL, an INSERT without
/// RETURNING) as the count of rows it touched.
pub(crate) fn result_table(result: &Value) -> String {
    let columns: Vec<String> = result["columns"]
        .as_array()
        .map(|cs| cs.iter().map(|c| truncate(&cell(c), MAX_CELL)).collect())
        .unwrap_or_default();
    let count = result["rowCount"].as_u64().unwrap_or(0);
    if columns.is_empty() {
        return format!("OK, {} affected", plural(count, "row", "rows"));
    }
    let rows: Vec<Vec<(String, bool)>> = result["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|row| {
            (0..columns.len())
                .map(|i| (truncate(&cell(&row[i]), MAX_CELL), row[i].is_number()))
                .collect()
        })
        .collect();
    let widths: Vec<usize> = (0..columns.len())
        .map(|i| {
            rows.iter()
                .map(|r| width(&r[i].0))
                .chain([width(&columns[i])])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<String>| format!(" {}", cells.join(" | ")).trim_end().to_owned();
    let mut lines = vec![line(
        columns
            .iter()
            .zip(&widths)
            .map(|(c, w)| center(c, *w))
            .collect(),
    )];
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(w + 2)).collect();
    lines.push(rule.join("+"));
    for row in &rows {
        lines.push(line(
            row.iter()
                .zip(&widths)
                .map(|((text, number), w)| {
                    if *number {
                        pad_left(text, *w)
                    } else {
                        pad(text, *w)
                    }
                })
                .collect(),
        ));
    }
    let shown = rows.len() as u64;
    lines.push(if count > shown {
        format!(
            "({}; the first {shown} shown)",
            plural(count, "row", "rows")
        )
    } else {
        format!("({})", plural(shown, "row", "rows"))
    });
    lines.join("\n")
}

/// The line of `sql` holding the 1-based character `position`, as psql shows it: its number,
/// its text (tabs as spaces, a long line cut around the place with `...`), and the columns
/// before the caret. `None` when the position is outside the SQL.
pub(crate) fn caret(sql: &str, position: u64) -> Option<(usize, String, usize)> {
    let chars: Vec<char> = sql.chars().collect();
    let at = usize::try_from(position).ok()?.checked_sub(1)?;
    // One past the end is where "syntax error at end of input" points.
    if at > chars.len() {
        return None;
    }
    let start = chars[..at]
        .iter()
        .rposition(|c| *c == '\n')
        .map_or(0, |i| i + 1);
    let end = chars[at..]
        .iter()
        .position(|c| *c == '\n')
        .map_or(chars.len(), |i| at + i);
    let number = chars[..start].iter().filter(|c| **c == '\n').count() + 1;
    let shown: Vec<(char, usize)> = chars[start..end]
        .iter()
        .map(|c| match c {
            '\t' => (' ', 1),
            // The `\r` of a CRLF line end takes no room and is not shown.
            '\r' => ('\r', 0),
            c => (*c, char_width(*c)),
        })
        .collect();
    let caret_at = at - start;
    // Keep at most BEFORE_CARET columns before the caret, then as much after as fits.
    let mut from = caret_at;
    let mut before = 0;
    while from > 0 && before + shown[from - 1].1 <= BEFORE_CARET {
        from -= 1;
        before += shown[from].1;
    }
    let mut to = caret_at;
    let mut used = before;
    while to < shown.len() && used + shown[to].1 <= MAX_LINE {
        used += shown[to].1;
        to += 1;
    }
    let mut text = String::new();
    let mut column = before;
    if from > 0 {
        text.push_str("...");
        column += 3;
    }
    text.extend(
        shown[from..to]
            .iter()
            .map(|(c, _)| *c)
            .filter(|c| *c != '\r'),
    );
    if to < shown.len() {
        text.push_str("...");
    }
    Some((number, text.trim_end().to_owned(), column))
}

/// PostgreSQL's refusal (an `sql_error` body) as psql words it: `ERROR:`, the line with a
/// caret when there is a position, then `DETAIL:` and `HINT:`.
pub(crate) fn sql_error(sql: &str, body: &Value) -> String {
    let mut lines = vec![format!(
        "ERROR: {}",
        body["message"]
            .as_str()
            .unwrap_or("PostgreSQL refused the SQL")
    )];
    if let Some((number, text, column)) = body["position"].as_u64().and_then(|p| caret(sql, p)) {
        let prefix = format!("LINE {number}: ");
        lines.push(format!("{prefix}{text}"));
        lines.push(format!("{}^", " ".repeat(width(&prefix) + column)));
    }
    for (field, label) in [("detail", "DETAIL"), ("hint", "HINT")] {
        if let Some(text) = body[field].as_str() {
            lines.push(format!("{label}: {text}"));
        }
    }
    lines.join("\n")
}

/// Rows under upper-case headers, columns two spaces apart (the `list` style).
pub(crate) fn aligned(headers: &[&str], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..headers.len())
        .map(|i| {
            rows.iter()
                .map(|r| width(&r[i]))
                .chain([width(headers[i])])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| {
        cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| pad(c, *w))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_owned()
    };
    let mut lines = vec![line(headers.to_vec())];
    lines.extend(
        rows.iter()
            .map(|r| line(r.iter().map(String::as_str).collect())),
    );
    lines.join("\n")
}

pub(crate) fn text_of(v: &Value, field: &str) -> String {
    v[field].as_str().unwrap_or("-").to_owned()
}

fn expiry(d: &Value) -> String {
    d["expiresAt"].as_str().unwrap_or("never").to_owned()
}

/// One database, a field a line.
pub(crate) fn details(d: &Value) -> String {
    let slug = text_of(d, "slug");
    let api = if d["dataApi"]["enabled"] == true {
        format!("on, {}", text_of(&d["dataApi"], "url"))
    } else {
        format!("off (quire db enable-api {slug})")
    };
    let fields = [
        ("name", text_of(d, "name")),
        ("project", text_of(d, "project")),
        ("id", text_of(d, "id")),
        ("status", text_of(d, "status")),
        ("size", size(d["sizeBytes"].as_u64())),
        ("expires", expiry(d)),
        ("data API", api),
        (
            "settings",
            super::settings::summary(&slug, &d["dataApi"]["settings"]),
        ),
        ("created", text_of(d, "createdAt")),
    ];
    fields
        .iter()
        .map(|(k, v)| format!("{k:<9} {v}"))
        .collect::<Vec<_>>()
        .join("\n")
}

pub(crate) fn list_text(list: &Value) -> String {
    let project = text_of(list, "project");
    let rows: Vec<Vec<String>> = list["databases"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            vec![
                text_of(d, "slug"),
                truncate(&text_of(d, "name"), 30),
                size(d["sizeBytes"].as_u64()),
                if d["dataApi"]["enabled"] == true {
                    "on"
                } else {
                    "off"
                }
                .to_owned(),
                expiry(d),
                text_of(d, "id"),
            ]
        })
        .collect();
    let listed = if rows.is_empty() {
        format!("No databases in project {project}.")
    } else {
        aligned(
            &["SLUG", "NAME", "SIZE", "DATA API", "EXPIRES", "ID"],
            &rows,
        )
    };
    match quota_text(&list["quota"]) {
        Some(quota) => format!("{listed}\n\n{quota}"),
        None => listed,
    }
}

/// The account's databases and their bytes beside its quotas (every project of the
/// account), as the list's `quota` gives them.
fn quota_text(quota: &Value) -> Option<String> {
    let of = |used: String, limit: &Value, show: &dyn Fn(u64) -> String| match limit.as_u64() {
        Some(limit) => format!("{used} of {}", show(limit)),
        None => used,
    };
    let count = &quota["databases"];
    let bytes = &quota["bytes"];
    let databases = of(count["used"].as_u64()?.to_string(), &count["limit"], &|n| {
        n.to_string()
    });
    let held = of(size(bytes["used"].as_u64()), &bytes["limit"], &|n| {
        size(Some(n))
    });
    Some(format!(
        "This account has {databases} databases, holding {held} (all its projects)."
    ))
}

pub(crate) fn secret_text(name: &str, s: &Value) -> String {
    let url = text_of(s, "url");
    let anon = text_of(s, "anonKey");
    format!(
        "The data API of {name}\n\
         URL:               {url}\n\
         REST URL:          {}\n\
         Auth URL:          {}\n\
         anon key:          {anon}\n\
         service role key:  {}\n\
         JWT secret:        {}\n\n\
         The anon key is for browsers and apps: it runs under row-level security.\n\
         The service role key bypasses row-level security: keep it on servers you trust,\n\
         and never ship it in a page or an app. Both keys last ten years and are revoked\n\
         only together (quire db rotate-secret {name}). A Quire key with the base app acts\n\
         as service_role too and is revocable one by one (quire keys create --apps base).\n\n\
         From Python (pip install supabase):\n  \
           from supabase import create_client\n  \
           supabase = create_client(\"{url}\", \"{anon}\")",
        text_of(s, "restUrl"),
        text_of(s, "authUrl"),
        text_of(s, "serviceRoleKey"),
        text_of(s, "jwtSecret"),
    )
}

/// Bytes as people read them (binary units, one decimal); `-` when the server did not say.
pub(crate) fn size(bytes: Option<u64>) -> String {
    let Some(bytes) = bytes else {
        return "-".to_owned();
    };
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = "KiB";
    for bigger in ["MiB", "GiB", "TiB"] {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = bigger;
    }
    format!("{value:.1} {unit}")
}
