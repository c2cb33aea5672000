//! SQL building. Identifiers come only from the schema cache and are always double-quoted;
//! values are only ever bound parameters, each written `$n::text` so PostgreSQL infers
//! `text` for it, then cast on to the column's base type (`$1::text::integer`).

pub(crate) mod call;
pub(crate) mod embed;
pub(crate) mod read;
pub(crate) mod write;

#[cfg(test)]
mod tests;

use crate::error::RestError;
use crate::grammar::{
    Field, Filter, FtsOp, IsVal, LogicTree, Operation, OrderTerm, QuantOp, Quantifier, SelectItem,
    SimpleOp,
};
use crate::schema::Column;

/// The statement being built and its parameters, bound as text (`None` is SQL NULL).
#[derive(Debug, Default)]
pub(crate) struct Sql {
    pub params: Vec<Option<String>>,
}

impl Sql {
    /// A placeholder for `value`, typed `text`.
    pub fn param(&mut self, value: Option<String>) -> String {
        self.params.push(value);
        format!("${}::text", self.params.len())
    }

    /// A placeholder for `value` cast to `type_name` (a checked schema-cache type).
    pub fn typed(&mut self, value: String, type_name: &str) -> String {
        let p = self.param(Some(value));
        format!("{p}::{type_name}")
    }
}

/// `"name"` with inner quotes doubled: safe for any name PostgreSQL accepts.
pub(crate) fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `"public"."name"`.
pub(crate) fn qualified(table: &str) -> String {
    format!("\"public\".{}", ident(table))
}

/// A PostgreSQL array literal of text elements (`{"a","b \"c\""}`), for `in.(…)`. NUL
/// characters, which text cannot hold, are dropped as PostgREST drops them.
pub(crate) fn array_literal<S: AsRef<str>>(values: &[S]) -> String {
    let items: Vec<String> = values
        .iter()
        .map(|v| {
            let v = v.as_ref().replace('\0', "");
            format!("\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\""))
        })
        .collect();
    format!("{{{}}}", items.join(","))
}

/// The relation filters, selects and orders refer to: its SQL name, its name in error
/// messages, and its columns.
pub(crate) struct Target<'a> {
    pub sql_name: String,
    pub label: &'a str,
    pub columns: &'a [Column],
}

impl Target<'_> {
    /// The column a field names, or the error PostgreSQL would give for it (42703).
    pub fn column(&self, field: &Field) -> Result<&Column, RestError> {
        if !field.json_path.is_empty() {
            return Err(RestError::not_implemented(format!(
                "JSON paths (->, ->>) are not supported yet: '{}'",
                field.name
            )));
        }
        self.columns
            .iter()
            .find(|c| c.name == field.name)
            .ok_or_else(|| RestError::undefined_column(self.label, &field.name))
    }

    fn column_sql(&self, c: &Column) -> String {
        format!("{}.{}", self.sql_name, ident(&c.name))
    }

    /// The select list: `*`, or the named columns with their aliases and casts.
    ///
    /// # Errors
    /// 42703 for an unknown column, PGRST123 for aggregates, PGRST127 for JSON paths.
    pub fn select_list(&self, items: &[SelectItem]) -> Result<String, RestError> {
        if items.is_empty() {
            return Ok(format!("{}.*", self.sql_name));
        }
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            out.push(match item {
                SelectItem::Star => format!("{}.*", self.sql_name),
                SelectItem::Column { alias, field, cast } => {
                    let c = self.column(field)?;
                    let name = ident(alias.as_deref().unwrap_or(&c.name));
                    match cast {
                        // The grammar admits only letters, digits, `_` and spaces in a cast.
                        Some(t) => format!("CAST({} AS {t}) AS {name}", self.column_sql(c)),
                        None => format!("{} AS {name}", self.column_sql(c)),
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

    /// ` WHERE …` for the filters (ANDed, a column filtered twice included) and logic trees,
    /// or nothing.
    pub fn where_clause(
        &self,
        sql: &mut Sql,
        filters: &[Filter],
        logic: &[LogicTree],
    ) -> Result<String, RestError> {
        let mut parts = Vec::new();
        for f in filters {
            parts.push(self.filter(sql, f)?);
        }
        for t in logic {
            parts.push(self.logic(sql, t)?);
        }
        Ok(if parts.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", parts.join(" AND "))
        })
    }

    fn logic(&self, sql: &mut Sql, tree: &LogicTree) -> Result<String, RestError> {
        match tree {
            LogicTree::Stmt(f) => self.filter(sql, f),
            LogicTree::Expr {
                negated,
                and,
                children,
            } => {
                let mut parts = Vec::with_capacity(children.len());
                for c in children {
                    parts.push(self.logic(sql, c)?);
                }
                let joined = parts.join(if *and { " AND " } else { " OR " });
                Ok(if *negated {
                    format!("NOT ({joined})")
                } else {
                    format!("({joined})")
                })
            }
        }
    }

    fn filter(&self, sql: &mut Sql, f: &Filter) -> Result<String, RestError> {
        let c = self.column(&f.field)?;
        let col = self.column_sql(c);
        let ty = &c.type_name;
        let cond = match &f.expr.op {
            Operation::Quant(op, quant, v) => {
                let (sym, pattern) = match op {
                    QuantOp::Eq => ("=", false),
                    QuantOp::Gt => (">", false),
                    QuantOp::Gte => (">=", false),
                    QuantOp::Lt => ("<", false),
                    QuantOp::Lte => ("<=", false),
                    QuantOp::Like => ("LIKE", true),
                    QuantOp::ILike => ("ILIKE", true),
                    QuantOp::Match => ("~", true),
                    QuantOp::IMatch => ("~*", true),
                };
                let value = if matches!(op, QuantOp::Like | QuantOp::ILike) {
                    v.replace('*', "%")
                } else {
                    v.clone()
                };
                // Patterns are text whatever the column; other values take its type.
                let ty = if pattern { "text" } else { ty.as_str() };
                match quant {
                    None => format!("{col} {sym} {}", sql.typed(value, ty)),
                    Some(q) => {
                        let q = if *q == Quantifier::Any { "ANY" } else { "ALL" };
                        format!("{col} {sym} {q}({})", sql.typed(value, &format!("{ty}[]")))
                    }
                }
            }
            Operation::Simple(op, v) => {
                let sym = match op {
                    SimpleOp::Neq => "<>",
                    SimpleOp::Cs => "@>",
                    SimpleOp::Cd => "<@",
                    SimpleOp::Ov => "&&",
                    SimpleOp::Sl => "<<",
                    SimpleOp::Sr => ">>",
                    SimpleOp::Nxr => "&<",
                    SimpleOp::Nxl => "&>",
                    SimpleOp::Adj => "-|-",
                };
                format!("{col} {sym} {}", sql.typed(v.clone(), ty))
            }
            Operation::In(values) => {
                let values: &[String] = if values.len() == 1 && values[0].is_empty() {
                    &[]
                } else {
                    values
                };
                let list = sql.typed(array_literal(values), &format!("{ty}[]"));
                format!("{col} = ANY({list})")
            }
            Operation::Is(v) => {
                let word = match v {
                    IsVal::Null => "NULL",
                    IsVal::NotNull => "NOT NULL",
                    IsVal::True => "TRUE",
                    IsVal::False => "FALSE",
                    IsVal::Unknown => "UNKNOWN",
                };
                format!("{col} IS {word}")
            }
            Operation::IsDistinct(v) => {
                format!("{col} IS DISTINCT FROM {}", sql.typed(v.clone(), ty))
            }
            Operation::Fts(op, lang, v) => {
                let func = match op {
                    FtsOp::Fts => "to_tsquery",
                    FtsOp::Plain => "plainto_tsquery",
                    FtsOp::Phrase => "phraseto_tsquery",
                    FtsOp::Websearch => "websearch_to_tsquery",
                };
                let lang = match lang {
                    Some(l) => format!("{}::regconfig, ", sql.param(Some(l.clone()))),
                    None => String::new(),
                };
                let query = sql.param(Some(v.clone()));
                format!("{col} @@ {func}({lang}{query})")
            }
        };
        Ok(if f.expr.negated {
            format!("NOT ({cond})")
        } else {
            cond
        })
    }

    /// ` ORDER BY …`, or nothing.
    pub fn order_by(&self, terms: &[OrderTerm]) -> Result<String, RestError> {
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
                    let c = self.column(field)?;
                    let mut s = self.column_sql(c);
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

/// The outer statement every plan ends with: one row of `total`, `page_total` and `body`,
/// all built by PostgreSQL, read from the CTE `pgrst_source` (and `pgrst_source_count`).
pub(crate) fn outer(ctes: &str, total: &str, body: &str, inner: &str) -> String {
    format!(
        "WITH {ctes} SELECT {total}::bigint AS total, pg_catalog.count(_postgrest_t)::bigint \
         AS page_total, {body}::text AS body FROM ({inner}) _postgrest_t"
    )
}
