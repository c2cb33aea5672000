//! The SQL of embedded resources, in the shape PostgREST builds: each resource is a lateral
//! subquery joined to its parent's row, so the request stays one statement and PostgreSQL
//! runs no query per row. A to-one resource (many-to-one, one-to-one) is its row
//! (`row_to_json(…)::jsonb`, `null` when none), a to-many one the `json_agg` of its rows
//! (`[]` when none), a spread one its columns in the parent's row. `!inner` makes the join
//! an inner one, so rows without the resource are left out; a filter `rel=not.is.null` does
//! the same in a `WHERE`. The count (`Prefer: count=exact`) uses `EXISTS` for those instead
//! of building the resources.
//!
//! Aliases are numbered per statement (`pgrst_t1` the resource's table, `pgrst_e1` its
//! lateral subquery), so a table embedded in itself or twice never collides.

mod outputs;

use super::target::{Selection, cast_sql};
use super::{Sql, Target, ident, qualified};
use crate::embed::{Forest, Node};
use crate::error::RestError;
use crate::grammar::{Filter, IsVal, LogicTree, Operation, OrderTerm, SelectItem};
use crate::schema::Cardinality;
use outputs::{counts_rows, outputs, spread_into};

/// What the root level of a statement with embedded resources needs.
pub(crate) struct Parts {
    /// The root's columns, then each resource's.
    pub select: String,
    /// ` LEFT JOIN LATERAL (…) AS … ON …` for each resource.
    pub joins: String,
    /// ` WHERE …` or nothing: the root's filters, `rel=is.null` ones included.
    pub where_: String,
    /// ` GROUP BY …` or nothing: the columns beside the level's aggregates.
    pub group: String,
    /// ` ORDER BY …` or nothing, `order=rel(col)` included.
    pub order: String,
    /// ` WHERE …` or nothing for the count: `EXISTS` for inner and null-filtered resources.
    pub count_where: String,
    /// How many parameters there were before the count's: when the statement leaves the
    /// count query out, the parameters from here on are dropped.
    pub count_params: usize,
}

impl Parts {
    /// The parts of a statement without embedded resources: no joins, and the count under
    /// the same `WHERE`.
    pub fn plain(sql: &Sql, select: &Selection, where_: String, order: String) -> Parts {
        Parts {
            select: select.list(),
            joins: String::new(),
            count_where: where_.clone(),
            where_,
            group: select.group_by(),
            order,
            count_params: sql.params.len(),
        }
    }

    /// Drops the count's parameters when `statement` does not hold `count_query`.
    pub fn settle(&self, sql: &mut Sql, statement: &str, count_query: &str) {
        if !statement.contains(count_query) {
            sql.params.truncate(self.count_params);
        }
    }
}

/// The root level: `target` is the root relation (`"public"."t"` or `pgrst_source`).
pub(crate) fn root(
    sql: &mut Sql,
    target: &Target<'_>,
    forest: &Forest<'_>,
    filters: &[Filter],
    logic: &[LogicTree],
    order: &[OrderTerm],
) -> Result<Parts, RestError> {
    let mut b = Builder { sql, next: 0 };
    let level = b.level(
        target,
        &forest.own,
        &forest.children,
        filters,
        logic,
        order,
        false,
    )?;
    let count_params = b.sql.params.len();
    let count = b.count_conditions(target, &forest.children, filters, logic)?;
    Ok(Parts {
        select: level.select.list(),
        group: level.select.group_by(),
        joins: level.joins,
        where_: clause(" WHERE ", &level.conditions, " AND "),
        order: clause(" ORDER BY ", &level.order, ", "),
        count_where: clause(" WHERE ", &count, " AND "),
        count_params,
    })
}

fn clause(head: &str, parts: &[String], sep: &str) -> String {
    if parts.is_empty() {
        String::new()
    } else {
        format!("{head}{}", parts.join(sep))
    }
}

struct Level {
    select: Selection,
    joins: String,
    conditions: Vec<String>,
    order: Vec<String>,
}

/// The aliases of one embedded resource.
struct Names {
    table: String,
    lateral: String,
    rows: String,
    junction: String,
}

impl Names {
    fn new(k: usize) -> Self {
        Names {
            table: ident(&format!("pgrst_t{k}")),
            lateral: ident(&format!("pgrst_e{k}")),
            rows: ident(&format!("pgrst_r{k}")),
            junction: ident(&format!("pgrst_j{k}")),
        }
    }
}

struct Builder<'a> {
    sql: &'a mut Sql,
    next: usize,
}

/// `rel=is.null` / `rel=not.is.null` on an embedded resource of this level.
fn null_filter<'n, 's>(f: &Filter, children: &'n [Node<'s>]) -> Option<(&'n Node<'s>, bool)> {
    if !f.field.json_path.is_empty() || f.expr.op != Operation::Is(IsVal::Null) {
        return None;
    }
    let child = children.iter().find(|c| c.key() == f.field.name)?;
    Some((child, f.expr.negated))
}

/// ` WHERE cond` without its keyword: a filter rendered exactly as a plain request renders it.
fn strip(rendered: &str, head: &str) -> String {
    rendered.strip_prefix(head).unwrap_or(rendered).to_owned()
}

impl Builder<'_> {
    fn names(&mut self) -> Names {
        self.next += 1;
        Names::new(self.next)
    }

    #[allow(clippy::too_many_arguments)]
    fn level(
        &mut self,
        target: &Target<'_>,
        own: &[SelectItem],
        children: &[Node<'_>],
        filters: &[Filter],
        logic: &[LogicTree],
        order: &[OrderTerm],
        embedded: bool,
    ) -> Result<Level, RestError> {
        let aggregating = own
            .iter()
            .any(|i| matches!(i, SelectItem::Aggregate(_)) || counts_rows(target, i, embedded))
            || children.iter().any(|c| c.spread && !c.hoisted.is_empty());
        let mut select = Selection::default();
        for item in own {
            self.own_item(target, item, embedded, aggregating, &mut select)?;
        }
        if embedded && own.is_empty() && children.is_empty() {
            select.push(format!("{}.*", target.sql_name), false);
        }
        let mut joins = String::new();
        let mut laterals = Vec::with_capacity(children.len());
        for c in children {
            let names = self.names();
            let sub = self.subquery(c, &target.sql_name, &names)?;
            let kind = if c.inner { "INNER" } else { "LEFT" };
            let (l, agg) = (&names.lateral, ident("pgrst_agg"));
            if c.rel.to_one() {
                joins.push_str(&format!(" {kind} JOIN LATERAL ({sub}) AS {l} ON TRUE"));
                if c.spread {
                    spread_into(&mut select, c, l, aggregating);
                } else if !c.is_empty() {
                    select.push(
                        format!("row_to_json({l}.*)::jsonb AS {}", ident(c.key())),
                        false,
                    );
                }
            } else {
                let on = if c.inner {
                    format!("{l}.{agg} IS NOT NULL")
                } else {
                    "TRUE".to_owned()
                };
                let r = &names.rows;
                joins.push_str(&format!(
                    " {kind} JOIN LATERAL (SELECT json_agg({r}.*)::jsonb AS {agg} FROM ({sub}) AS \
                     {r}) AS {l} ON {on}"
                ));
                if !c.is_empty() {
                    select.push(
                        format!("COALESCE({l}.{agg}, '[]') AS {}", ident(c.key())),
                        false,
                    );
                }
            }
            laterals.push(names.lateral);
        }
        let mut conditions = Vec::new();
        for f in filters {
            conditions.push(self.condition(target, f, children, &laterals, false)?);
        }
        for t in logic {
            conditions.push(self.tree(target, t, children, &laterals, false)?);
        }
        let mut terms = Vec::with_capacity(order.len());
        for t in order {
            terms.push(order_term(self.sql, target, t, children, &laterals)?);
        }
        Ok(Level {
            select,
            joins,
            conditions,
            order: terms,
        })
    }

    /// An item of this level's select list; in an embedded resource, `count` that is no
    /// column counts its rows (`clients(count)`), as PostgreSQL reads `t.count` as
    /// `count(t)` for PostgREST.
    fn own_item(
        &mut self,
        target: &Target<'_>,
        item: &SelectItem,
        embedded: bool,
        aggregating: bool,
        select: &mut Selection,
    ) -> Result<(), RestError> {
        if counts_rows(target, item, embedded)
            && let SelectItem::Column { alias, cast, .. } = item
        {
            let name = ident(alias.as_deref().unwrap_or("count"));
            let count = cast_sql("pg_catalog.count(*)".to_owned(), cast.as_deref());
            select.push(format!("{count} AS {name}"), true);
            return Ok(());
        }
        target.select_into(self.sql, item, aggregating, select)
    }

    /// `FROM` and the join conditions of a resource, with `parent` the parent's SQL name; a
    /// computed relationship's function takes the parent's row, and no condition.
    fn from(&self, c: &Node<'_>, parent: &str, n: &Names) -> (String, Vec<String>) {
        let t = &n.table;
        let col = |alias: &str, name: &str| format!("{alias}.{}", ident(name));
        let mut from = format!("{} AS {t}", qualified(&c.table.schema, &c.table.name));
        let mut conditions = Vec::new();
        match &c.rel.cardinality {
            Cardinality::Computed { function, .. } => {
                // Cast over `pgrst_source`, as PostgREST casts it: that picks the overload.
                let row = if parent == "pgrst_source" {
                    format!("pgrst_source::{}", qualified(&c.table.schema, &c.parent))
                } else {
                    format!("{parent}.*")
                };
                from = format!("{}({row}) AS {t}", qualified(&c.table.schema, function));
            }
            Cardinality::ManyToMany(j) => {
                let on: Vec<String> = j
                    .target
                    .iter()
                    .map(|(fc, jc)| format!("{} = {}", col(&n.junction, jc), col(t, fc)))
                    .collect();
                from.push_str(&format!(
                    " JOIN {} AS {} ON {}",
                    qualified(&c.table.schema, &j.table),
                    n.junction,
                    on.join(" AND ")
                ));
                for (pc, jc) in &j.source {
                    conditions.push(format!("{} = {}", col(&n.junction, jc), col(parent, pc)));
                }
            }
            _ => {
                for (pc, fc) in &c.rel.columns {
                    conditions.push(format!("{} = {}", col(t, fc), col(parent, pc)));
                }
            }
        }
        (from, conditions)
    }

    fn subquery(&mut self, c: &Node<'_>, parent: &str, n: &Names) -> Result<String, RestError> {
        let target = Target::alias(n.table.clone(), c.table, c.depth);
        let level = self.level(
            &target,
            &c.select,
            &c.children,
            &c.filters,
            &c.logic,
            &c.order,
            true,
        )?;
        let (from, mut conditions) = self.from(c, parent, n);
        conditions.extend(level.conditions);
        Ok(format!(
            "SELECT {} FROM {from}{}{}{}{}{}",
            level.select.list(),
            level.joins,
            clause(" WHERE ", &conditions, " AND "),
            level.select.group_by(),
            clause(" ORDER BY ", &level.order, ", "),
            c.range.sql()
        ))
    }

    /// A filter of this level. In the data query `rel=is.null` tests the resource's lateral
    /// (`laterals`, in the order of `children`); in the count it is an `EXISTS`.
    fn condition(
        &mut self,
        target: &Target<'_>,
        f: &Filter,
        children: &[Node<'_>],
        laterals: &[String],
        count: bool,
    ) -> Result<String, RestError> {
        let Some((child, negated)) = null_filter(f, children) else {
            let rendered = target.where_clause(self.sql, std::slice::from_ref(f), &[])?;
            return Ok(strip(&rendered, " WHERE "));
        };
        if count {
            let exists = self.exists(child, &target.sql_name)?;
            return Ok(if negated {
                exists
            } else {
                format!("NOT {exists}")
            });
        }
        let i = children
            .iter()
            .position(|c| std::ptr::eq(c, child))
            .unwrap_or_default();
        let l = &laterals[i];
        let value = if child.rel.to_one() {
            format!("row_to_json({l}.*)")
        } else {
            format!("{l}.{}", ident("pgrst_agg"))
        };
        let not = if negated { "" } else { "NOT " };
        Ok(format!("{value} IS {not}DISTINCT FROM NULL"))
    }

    fn tree(
        &mut self,
        target: &Target<'_>,
        t: &LogicTree,
        children: &[Node<'_>],
        laterals: &[String],
        count: bool,
    ) -> Result<String, RestError> {
        match t {
            LogicTree::Stmt(f) => self.condition(target, f, children, laterals, count),
            LogicTree::Expr {
                negated,
                and,
                children: trees,
            } => {
                let mut parts = Vec::with_capacity(trees.len());
                for c in trees {
                    parts.push(self.tree(target, c, children, laterals, count)?);
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

    /// The conditions a row of this level is counted under: its filters, with an `EXISTS`
    /// for each null-filtered and each `!inner` resource.
    fn count_conditions(
        &mut self,
        target: &Target<'_>,
        children: &[Node<'_>],
        filters: &[Filter],
        logic: &[LogicTree],
    ) -> Result<Vec<String>, RestError> {
        let mut out = Vec::new();
        for f in filters {
            out.push(self.condition(target, f, children, &[], true)?);
        }
        for t in logic {
            out.push(self.tree(target, t, children, &[], true)?);
        }
        for c in children.iter().filter(|c| c.inner) {
            out.push(self.exists(c, &target.sql_name)?);
        }
        Ok(out)
    }

    /// `EXISTS (SELECT 1 …)`: a row of `c` for the parent row, under `c`'s filters.
    fn exists(&mut self, c: &Node<'_>, parent: &str) -> Result<String, RestError> {
        let n = self.names();
        let target = Target::alias(n.table.clone(), c.table, c.depth);
        let (from, mut conditions) = self.from(c, parent, &n);
        conditions.extend(self.count_conditions(&target, &c.children, &c.filters, &c.logic)?);
        Ok(format!(
            "EXISTS (SELECT 1 FROM {from}{})",
            clause(" WHERE ", &conditions, " AND ")
        ))
    }
}

/// An order term of this level: a column, or `rel(col)` of a to-one resource, which must be
/// among the columns the resource answers with.
fn order_term(
    sql: &mut Sql,
    target: &Target<'_>,
    t: &OrderTerm,
    children: &[Node<'_>],
    laterals: &[String],
) -> Result<String, RestError> {
    let OrderTerm::Embed {
        name,
        field,
        desc,
        nulls_first,
    } = t
    else {
        let rendered = target.order_by(sql, std::slice::from_ref(t))?;
        return Ok(strip(&rendered, " ORDER BY "));
    };
    let (i, child) = children
        .iter()
        .enumerate()
        .find(|(_, c)| c.key() == name)
        .ok_or_else(|| crate::embed::not_embedded(name))?;
    if !field.json_path.is_empty() {
        return Err(RestError::not_implemented(format!(
            "JSON paths (->, ->>) are not supported yet: '{}'",
            field.name
        )));
    }
    let answers = outputs(child).iter().any(|o| match o {
        Some(n) => *n == field.name,
        None => child.table.column(&field.name).is_some(),
    });
    if !answers {
        return Err(RestError::undefined_column(
            &format!("{}_{}_{}", child.parent, child.key(), child.depth),
            &field.name,
        ));
    }
    let mut s = format!("{}.{}", laterals[i], ident(&field.name));
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
    Ok(s)
}
