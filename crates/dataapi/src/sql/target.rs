//! The relation a request's `select`, filters and `order` address, and how a field of it is
//! written: a column, a computed field (a function of the table's row), either followed by
//! a JSON path (`data->a->>b`, as PostgREST writes it, keys and indexes bound as values).

use super::{Sql, ident, qualified};
use crate::error::RestError;
use crate::grammar::{Field, JsonOp, JsonOperand, OrderTerm, SelectItem};
use crate::schema::{Column, Table};

/// The relation filters, selects and orders refer to: its SQL name, its name in error
/// messages, its columns, and the table its rows are of (whose computed fields apply).
pub(crate) struct Target<'a> {
    pub sql_name: String,
    pub label: &'a str,
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
            label: &table.name,
            columns: &table.columns,
            table: Some(table),
        }
    }

    /// `table` under an alias (an embedded resource's `pgrst_t1`).
    pub fn alias(sql_name: String, table: &'a Table) -> Self {
        Target {
            sql_name,
            label: &table.name,
            columns: &table.columns,
            table: Some(table),
        }
    }

    /// The CTE `pgrst_source`, whose rows are `table`'s when it is given.
    pub fn source(label: &'a str, columns: &'a [Column], table: Option<&'a Table>) -> Self {
        Target {
            sql_name: "pgrst_source".to_owned(),
            label,
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
            return Err(RestError::undefined_column(self.label, &field.name));
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

    /// The select list: `*`, or the named fields with their aliases and casts.
    ///
    /// # Errors
    /// 42703 for an unknown column, PGRST123 for aggregates.
    pub fn select_list(&self, sql: &mut Sql, items: &[SelectItem]) -> Result<String, RestError> {
        if items.is_empty() {
            return Ok(format!("{}.*", self.sql_name));
        }
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            out.push(match item {
                SelectItem::Star => format!("{}.*", self.sql_name),
                SelectItem::Column { alias, field, cast } => {
                    let e = self.expr(sql, field)?;
                    let name = ident(alias.as_deref().unwrap_or_else(|| output_name(field)));
                    match cast {
                        // The grammar admits only letters, digits, `_` and spaces in a cast.
                        Some(t) => format!("CAST({} AS {t}) AS {name}", e.sql),
                        None => format!("{} AS {name}", e.sql),
                    }
                }
                SelectItem::Aggregate => {
                    return Err(RestError::new(
                        400,
                        "PGRST123",
                        "Use of aggregate functions is not allowed",
                    ));
                }
                // Embedded resources are planned by `embed`, never here.
                SelectItem::Embed(e) => return Err(crate::embed::not_embedded(&e.name)),
            });
        }
        Ok(out.join(", "))
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
