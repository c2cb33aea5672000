//! The relation a request's `select`, filters and `order` address, and how a field of it is
//! written: a column, a computed field (a function of the table's row), either followed by
//! a JSON path (`data->a->>b`, as PostgREST writes it, keys and indexes bound as values).

use std::borrow::Cow;

use super::{Sql, ident, qualified};
use crate::error::RestError;
use crate::grammar::{Aggregate, Field, JsonOp, JsonOperand, OrderTerm, SelectItem};
use crate::schema::{Column, Table};

/// The relation filters, selects and orders refer to: its SQL name, its name in error
/// messages, its columns, and the table its rows are of (whose computed fields apply).
pub(crate) struct Target<'a> {
    pub sql_name: String,
    pub label: Cow<'a, str>,
    pub columns: &'a [Column],
    pub table: Option<&'a Table>,
}

/// A field written as SQL, with the type a value compared with it is cast to.
pub(crate) struct Expr<'a> {
    pub sql: String,
    pub type_name: &'a str,
}

impl<'a> Target<'a> {
    /// The table itself, by its qualified name.
    pub fn of_table(table: &'a Table) -> Self {
        Target {
            sql_name: qualified(&table.schema, &table.name),
            label: Cow::Borrowed(&table.name),
            columns: &table.columns,
            table: Some(table),
        }
    }

    /// `table` under an alias (an embedded resource's `pgrst_t1`), named in errors as
    /// PostgREST aliases it, with its depth (`messages_1`).
    pub fn alias(sql_name: String, table: &'a Table, depth: usize) -> Self {
        Target {
            sql_name,
            label: Cow::Owned(format!("{}_{depth}", table.name)),
            columns: &table.columns,
            table: Some(table),
        }
    }

    /// The CTE `pgrst_source`, whose rows are `table`'s when it is given.
    pub fn source(label: &'a str, columns: &'a [Column], table: Option<&'a Table>) -> Self {
        Target {
            sql_name: "pgrst_source".to_owned(),
            label: Cow::Borrowed(label),
            columns,
            table,
        }
    }

    fn column_sql(&self, c: &Column) -> String {
        format!("{}.{}", self.sql_name, ident(&c.name))
    }

    /// The row as a value of the table's row type, for a computed field's argument: the
    /// table's own row, or (over `pgrst_source`) the CTE's row cast to the table's type.
    fn row(&self, table: &Table) -> String {
        if self.sql_name == "pgrst_source" {
            format!("pgrst_source::{}", qualified(&table.schema, &table.name))
        } else {
            format!("{}.*", self.sql_name)
        }
    }

    /// The SQL of `field` and its type, or the error PostgreSQL would give for an unknown
    /// name (42703).
    pub fn expr(&self, sql: &mut Sql, field: &Field) -> Result<Expr<'a>, RestError> {
        let (base, type_name) = if let Some(c) = self.columns.iter().find(|c| c.name == field.name)
        {
            (self.column_sql(c), c.type_name.as_str())
        } else if let Some((t, f)) = self
            .table
            .and_then(|t| t.computed(&field.name).map(|f| (t, f)))
        {
            let call = format!("{}({})", qualified(&t.schema, &f.name), self.row(t));
            (call, f.type_name.as_str())
        } else {
            return Err(RestError::undefined_column(&self.label, &field.name));
        };
        let Some(last) = field.json_path.last() else {
            return Ok(Expr {
                sql: base,
                type_name,
            });
        };
        // json and jsonb take the arrows as they are (so their indexes apply); any other
        // type is made jsonb first, as PostgREST does.
        let json = type_name == "json" || type_name == "jsonb";
        let mut s = if json {
            base
        } else {
            format!("to_jsonb({base})")
        };
        for op in &field.json_path {
            s.push_str(match op {
                JsonOp::Arrow(_) => "->",
                JsonOp::DoubleArrow(_) => "->>",
            });
            match op.operand() {
                JsonOperand::Key(k) => s.push_str(&sql.param(Some(k.clone()))),
                JsonOperand::Index(i) => s.push_str(&sql.typed(i.clone(), "integer")),
            }
        }
        let type_name = match last {
            JsonOp::DoubleArrow(_) => "text",
            JsonOp::Arrow(_) if type_name == "json" => "json",
            JsonOp::Arrow(_) => "jsonb",
        };
        Ok(Expr {
            sql: format!("({s})"),
            type_name,
        })
    }

    /// The select list: `*`, or the named fields with their aliases and casts, and the
    /// aggregates among them.
    ///
    /// # Errors
    /// 42703 for an unknown column.
    pub fn select_list(&self, sql: &mut Sql, items: &[SelectItem]) -> Result<Selection, RestError> {
        let mut selection = Selection::default();
        if items.is_empty() {
            selection.push(format!("{}.*", self.sql_name), false);
            return Ok(selection);
        }
        let aggregating = items.iter().any(|i| matches!(i, SelectItem::Aggregate(_)));
        for item in items {
            self.select_into(sql, item, aggregating, &mut selection)?;
        }
        Ok(selection)
    }

    /// One item of a select list. `*` is the relation's columns one by one when the list
    /// aggregates (so each can be grouped by), as PostgREST expands it.
    pub fn select_into(
        &self,
        sql: &mut Sql,
        item: &SelectItem,
        aggregating: bool,
        selection: &mut Selection,
    ) -> Result<(), RestError> {
        match item {
            SelectItem::Star if aggregating => {
                for c in self.columns {
                    selection.push(self.column_sql(c), false);
                }
            }
            SelectItem::Star => selection.push(format!("{}.*", self.sql_name), false),
            SelectItem::Column { alias, field, cast } => {
                let e = self.expr(sql, field)?;
                let name = ident(alias.as_deref().unwrap_or_else(|| output_name(field)));
                selection.push(
                    format!("{} AS {name}", cast_sql(e.sql, cast.as_deref())),
                    false,
                );
            }
            SelectItem::Aggregate(a) => {
                let value = match &a.field {
                    Some((field, cast)) => cast_sql(self.expr(sql, field)?.sql, cast.as_deref()),
                    None => "*".to_owned(),
                };
                selection.push(aggregate_sql(a, &value), true);
            }
            // Embedded resources are planned by `embed`, never here.
            SelectItem::Embed(e) => return Err(crate::embed::not_embedded(&e.name)),
        }
        Ok(())
    }

    /// ` ORDER BY …`, or nothing.
    pub fn order_by(&self, sql: &mut Sql, terms: &[OrderTerm]) -> Result<String, RestError> {
        if terms.is_empty() {
            return Ok(String::new());
        }
        let mut parts = Vec::with_capacity(terms.len());
        for t in terms {
            match t {
                OrderTerm::Embed { name, .. } => return Err(crate::embed::not_embedded(name)),
                OrderTerm::Column {
                    field,
                    desc,
                    nulls_first,
                } => {
                    let mut s = self.expr(sql, field)?.sql;
                    match desc {
                        Some(true) => s.push_str(" DESC"),
                        Some(false) => s.push_str(" ASC"),
                        None => {}
                    }
                    match nulls_first {
                        Some(true) => s.push_str(" NULLS FIRST"),
                        Some(false) => s.push_str(" NULLS LAST"),
                        None => {}
                    }
                    parts.push(s);
                }
            }
        }
        Ok(format!(" ORDER BY {}", parts.join(", ")))
    }
}

/// `value` cast to `cast`, when given. The grammar admits only letters, digits, `_` and
/// spaces in a cast.
pub(crate) fn cast_sql(value: String, cast: Option<&str>) -> String {
    match cast {
        Some(t) => format!("CAST({value} AS {t})"),
        None => value,
    }
}

/// `a` over `value` (`*` for `count()`), cast and named as PostgREST writes it: the alias,
/// else the function's name, which PostgreSQL would give the column.
pub(crate) fn aggregate_sql(a: &Aggregate, value: &str) -> String {
    let call = format!("pg_catalog.{}({value})", a.func.name());
    let name = ident(a.alias.as_deref().unwrap_or(a.func.name()));
    format!("{} AS {name}", cast_sql(call, a.cast.as_deref()))
}

/// A select list being built: each entry one column of the answer. When some entries are
/// aggregates, the rows are grouped by the others, by their positions (so a JSON path's
/// bound keys, or an alias that is also a column's name, cannot make the grouping differ
/// from what is selected).
#[derive(Debug, Default)]
pub(crate) struct Selection {
    items: Vec<String>,
    /// 1-based positions of the entries that are no aggregate.
    plain: Vec<usize>,
    aggregates: bool,
}

impl Selection {
    pub fn push(&mut self, entry: String, aggregate: bool) {
        self.items.push(entry);
        if aggregate {
            self.aggregates = true;
        } else {
            self.plain.push(self.items.len());
        }
    }

    pub fn list(&self) -> String {
        self.items.join(", ")
    }

    /// ` GROUP BY 1, 3`, or nothing when no entry aggregates or every one does.
    pub fn group_by(&self) -> String {
        if !self.aggregates || self.plain.is_empty() {
            return String::new();
        }
        let positions: Vec<String> = self.plain.iter().map(ToString::to_string).collect();
        format!(" GROUP BY {}", positions.join(", "))
    }
}

/// The key a field has in the answer when no alias is given: its name, or for a JSON path
/// its last key (after an index, the last key before it, else the name), as PostgREST
/// names it (`data->a->>b` is `b`, `data->1->c->>2` is `c`, `data->3` is `data`).
pub(crate) fn output_name(field: &Field) -> &str {
    field
        .json_path
        .iter()
        .rev()
        .find_map(|op| match op.operand() {
            JsonOperand::Key(k) => Some(k.as_str()),
            JsonOperand::Index(_) => None,
        })
        .unwrap_or(&field.name)
}
