//! Which table column each column of a view is a plain reference to, read from the view's
//! rewrite rule (`pg_rewrite.ev_action`, a `pg_node_tree`) as PostgREST's
//! `allViewsKeyDependencies` reads it: the top-level query's target list carries, for every
//! output column that is a column reference, the relation and column it came from
//! (`resorigtbl`, `resorigcol`). A view over a view points at the inner view; the cache
//! follows such chains to a table.

use std::collections::{HashMap, HashSet};

use serde::Deserialize;

use super::ViewColumn;

/// A relation of the exposed schema as `LOAD_SQL` lists it: its columns by number and, for a
/// view, its definition.
#[derive(Deserialize)]
pub(crate) struct RawRelation {
    oid: i64,
    name: String,
    view: bool,
    #[serde(default)]
    columns: Option<HashMap<String, String>>,
    #[serde(default)]
    definition: Option<String>,
}

/// The views, and each view column that traces to a table's column (through views, with
/// cycles and chains longer than the schema cut off).
pub(crate) fn traced(relations: &[RawRelation]) -> (HashSet<String>, Vec<ViewColumn>) {
    let by_oid: HashMap<i64, &RawRelation> = relations.iter().map(|r| (r.oid, r)).collect();
    let column = |r: &RawRelation, n: i64| {
        r.columns
            .as_ref()
            .and_then(|c| c.get(&n.to_string()))
            .cloned()
    };
    let origins: HashMap<i64, HashMap<i64, (i64, i64)>> = relations
        .iter()
        .filter_map(|r| {
            let def = r.definition.as_deref()?;
            let cols = column_origins(def)
                .into_iter()
                .map(|(resno, table, col)| (resno, (table, col)))
                .collect();
            Some((r.oid, cols))
        })
        .collect();
    let views = relations
        .iter()
        .filter(|r| r.view)
        .map(|r| r.name.clone())
        .collect();
    let mut out = Vec::new();
    let mut view_list: Vec<&RawRelation> = relations.iter().filter(|r| r.view).collect();
    view_list.sort_by(|a, b| a.name.cmp(&b.name));
    for v in view_list {
        let Some(cols) = origins.get(&v.oid) else {
            continue;
        };
        let mut numbers: Vec<&i64> = cols.keys().collect();
        numbers.sort_unstable();
        for resno in numbers {
            let mut at = cols[resno];
            // A view over a view: follow it to the table.
            for _ in 0..relations.len() {
                match origins.get(&at.0).and_then(|o| o.get(&at.1)) {
                    Some(next) if by_oid.get(&at.0).is_some_and(|r| r.view) => at = *next,
                    _ => break,
                }
            }
            let (Some(table), Some(view_col)) = (by_oid.get(&at.0), column(v, *resno)) else {
                continue;
            };
            if table.view {
                continue;
            }
            if let Some(table_col) = column(table, at.1) {
                out.push(ViewColumn {
                    view: v.name.clone(),
                    column: view_col,
                    table: table.name.clone(),
                    table_column: table_col,
                });
            }
        }
    }
    (views, out)
}

/// One `pg_node_tree` value: a node `{NAME :field value …}`, a list `(…)`, or an atom.
#[derive(Debug)]
enum Value {
    Node(Vec<(String, Vec<Value>)>),
    List(Vec<Value>),
    Atom(String),
}

/// The tokens `pg_strtok` reads: whitespace separates, `(){}` stand alone, and a backslash
/// escapes the next character.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if "(){}".contains(c) {
            out.push(c.to_string());
            chars.next();
        } else {
            let mut token = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() || "(){}".contains(c) {
                    break;
                }
                chars.next();
                if c == '\\' {
                    token.extend(chars.next());
                } else {
                    token.push(c);
                }
            }
            out.push(token);
        }
    }
    out
}

/// Values until a closing token (`}` or `)`) or, inside a node, the next `:field`.
fn values(toks: &[String], pos: &mut usize, in_node: bool) -> Vec<Value> {
    let mut out = Vec::new();
    while let Some(t) = toks.get(*pos) {
        match t.as_str() {
            "}" | ")" => break,
            _ if in_node && t.starts_with(':') => break,
            "{" => {
                *pos += 1;
                // The node's name; its fields follow.
                *pos += 1;
                let mut fields = Vec::new();
                while let Some(key) = toks.get(*pos) {
                    if key == "}" {
                        break;
                    }
                    *pos += 1;
                    fields.push((key.clone(), values(toks, pos, true)));
                }
                *pos += 1;
                out.push(Value::Node(fields));
            }
            "(" => {
                *pos += 1;
                let items = values(toks, pos, false);
                *pos += 1;
                out.push(Value::List(items));
            }
            _ => {
                out.push(Value::Atom(t.clone()));
                *pos += 1;
            }
        }
    }
    out
}

fn field<'v>(fields: &'v [(String, Vec<Value>)], key: &str) -> Option<&'v [Value]> {
    fields
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_slice())
}

fn number(fields: &[(String, Vec<Value>)], key: &str) -> Option<i64> {
    match field(fields, key)? {
        [Value::Atom(a)] => a.parse().ok(),
        _ => None,
    }
}

/// `(view column number, relation oid, column number)` for each output column of the view's
/// query that is a plain column reference; nothing for a definition that does not read as
/// one query.
pub(crate) fn column_origins(definition: &str) -> Vec<(i64, i64, i64)> {
    let toks = tokens(definition);
    let mut pos = 0;
    let top = values(&toks, &mut pos, false);
    let query = match top.first() {
        Some(Value::List(queries)) => queries.first(),
        other => other,
    };
    let Some(Value::Node(fields)) = query else {
        return Vec::new();
    };
    let Some([Value::List(entries)]) = field(fields, ":targetList") else {
        return Vec::new();
    };
    entries
        .iter()
        .filter_map(|e| {
            let Value::Node(f) = e else { return None };
            let junk = matches!(field(f, ":resjunk"), Some([Value::Atom(a)]) if a == "true");
            let table = number(f, ":resorigtbl")?;
            (!junk && table != 0)
                .then(|| Some((number(f, ":resno")?, table, number(f, ":resorigcol")?)))
                .flatten()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::column_origins;

    #[test]
    fn the_top_level_target_list_gives_each_columns_origin() {
        // `CREATE VIEW v AS SELECT w.id, w."a b" AS "c) d", 'x' AS k FROM "we ird{x}" w`,
        // trimmed; a subquery's own target list in the range table must not count.
        let def = r#"({QUERY :commandType 1 :rtable ({RANGETBLENTRY :eref {ALIAS :aliasname w :colnames ("id" "a\ b")} :rtekind 1 :subquery {QUERY :targetList ({TARGETENTRY :expr {VAR :varno 1} :resno 1 :resname id :resorigtbl 999 :resorigcol 7 :resjunk false})}}) :targetList ({TARGETENTRY :expr {VAR :varno 3 :varattno 1} :resno 1 :resname id :ressortgroupref 0 :resorigtbl 16395 :resorigcol 1 :resjunk false} {TARGETENTRY :expr {VAR :varno 3} :resno 2 :resname c\)\ d :ressortgroupref 0 :resorigtbl 16395 :resorigcol 2 :resjunk false} {TARGETENTRY :expr {CONST :consttype 25 :constvalue 5 [ 20 0 0 0 120 ]} :resno 3 :resname k :resorigtbl 0 :resorigcol 0 :resjunk false} {TARGETENTRY :expr {VAR} :resno 4 :resname x :resorigtbl 16395 :resorigcol 3 :resjunk true}) :override 0})"#;
        assert_eq!(column_origins(def), [(1, 16395, 1), (2, 16395, 2)]);
        assert!(column_origins("").is_empty());
        assert!(column_origins("({QUERY :targetList <>})").is_empty());
        assert!(column_origins("(((").is_empty());
    }
}
