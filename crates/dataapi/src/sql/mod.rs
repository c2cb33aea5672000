//! SQL building. Identifiers come only from the schema cache and are always double-quoted;
//! values are only ever bound parameters, each written `$n::text` so PostgreSQL infers
//! `text` for it, then cast on to the column's base type (`$1::text::integer`).

pub(crate) mod call;
#[cfg(test)]
mod call_tests;
pub(crate) mod embed;
#[cfg(test)]
mod field_tests;
mod overloads;
pub(crate) mod read;
mod target;
pub(crate) mod write;

#[cfg(test)]
mod tests;

pub(crate) use target::{Target, output_name};

use crate::error::RestError;
use crate::grammar::{Filter, FtsOp, IsVal, LogicTree, Operation, QuantOp, Quantifier, SimpleOp};

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

/// `"schema"."name"`.
pub(crate) fn qualified(schema: &str, name: &str) -> String {
    format!("{}.{}", ident(schema), ident(name))
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

impl Target<'_> {
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
        let e = self.expr(sql, &f.field)?;
        let col = e.sql;
        let ty = e.type_name;
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
                let ty = if pattern { "text" } else { ty };
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
}

/// The outer statement every plan ends with: one row of `total`, `page_total` and `body`,
/// all built by PostgreSQL, read from the CTE `pgrst_source` (and `pgrst_source_count`).
pub(crate) fn outer(ctes: &str, total: &str, body: &str, inner: &str) -> String {
    outer_with(ctes, total, body, "", inner)
}

/// [`outer`] with `extra` columns after `body` (`, … AS inserted` for an upsert).
pub(crate) fn outer_with(ctes: &str, total: &str, body: &str, extra: &str, inner: &str) -> String {
    format!(
        "WITH {ctes} SELECT {total}::bigint AS total, pg_catalog.count(_postgrest_t)::bigint \
         AS page_total, {body}::text AS body{extra} FROM ({inner}) _postgrest_t"
    )
}
