//! Resource embedding, planned as PostgREST's `ReadPlan` tree: each embedded resource in
//! `select` is resolved to one relationship of the schema cache (from its parent table or
//! view), then given the filters, `and`/`or` trees, orders and ranges whose keys name its
//! path (`clients.projects.id=eq.1`). What PostgREST refuses here is refused with its code:
//! a path naming no embedded resource (PGRST108), a spread of a to-many resource (PGRST119),
//! an order by a to-many resource (PGRST118), two resources under one name (42712).

use crate::error::RestError;
use crate::grammar::{Aggregate, Embed, Filter, LogicTree, OrderTerm, SelectItem};
use crate::query::{Query, Range};
use crate::schema::{Relationship, SchemaCache, Table};

/// An embedded resource and what the request asks of it.
pub(crate) struct Node<'s> {
    pub name: String,
    pub alias: Option<String>,
    pub inner: bool,
    pub spread: bool,
    /// Its own columns (`*`, columns, casts, aggregates), without the embedded resources.
    pub select: Vec<SelectItem>,
    /// A spread resource's aggregates, computed in its parent's row (`hoist`).
    pub hoisted: Vec<Hoisted>,
    pub rel: &'s Relationship,
    pub table: &'s Table,
    /// The table or view it is embedded in, as relationships name it.
    pub parent: String,
    pub depth: usize,
    pub children: Vec<Node<'s>>,
    pub filters: Vec<Filter>,
    pub logic: Vec<LogicTree>,
    pub order: Vec<OrderTerm>,
    pub range: Range,
    limit: Option<String>,
    offset: Option<String>,
}

impl Node<'_> {
    /// The name it answers under, and that filters such as `clients=not.is.null` and orders
    /// such as `order=clients(name)` use.
    pub fn key(&self) -> &str {
        self.alias.as_deref().unwrap_or(&self.name)
    }

    /// `rel()`, with nothing selected at any depth: joined (to filter, with `!inner`), but
    /// not in the answer.
    pub fn is_empty(&self) -> bool {
        self.select.is_empty() && self.children.iter().all(Node::is_empty)
    }
}

/// An aggregate of a spread resource, which PostgREST computes over its parent's rows
/// rather than the one row spread (`...invoices(total.sum())` sums per parent group): the
/// resource selects the column, the parent aggregates it.
#[derive(Debug, Clone)]
pub(crate) struct Hoisted {
    /// The resource's column it aggregates (the alias, else the field's name); `None` for
    /// `count()`, which counts the resource's rows.
    pub column: Option<String>,
    pub aggregate: Aggregate,
}

/// A spread resource's select list with its aggregates taken out to be hoisted: each
/// becomes the plain field (its alias and its own cast kept) that its parent aggregates.
fn hoist(select: Vec<SelectItem>) -> (Vec<SelectItem>, Vec<Hoisted>) {
    let mut kept = Vec::with_capacity(select.len());
    let mut hoisted = Vec::new();
    for item in select {
        let SelectItem::Aggregate(a) = item else {
            kept.push(item);
            continue;
        };
        let column = a.field.as_ref().map(|(field, cast)| {
            kept.push(SelectItem::Column {
                alias: a.alias.clone(),
                field: field.clone(),
                cast: cast.clone(),
            });
            a.alias
                .clone()
                .unwrap_or_else(|| crate::sql::output_name(field).to_owned())
        });
        hoisted.push(Hoisted {
            column,
            aggregate: a,
        });
    }
    (kept, hoisted)
}

/// The root's own columns and its embedded resources.
pub(crate) struct Forest<'s> {
    pub own: Vec<SelectItem>,
    pub children: Vec<Node<'s>>,
}

impl Forest<'_> {
    /// Every resource's range under a cap of `max` rows (`db-max-rows`), as PostgREST caps
    /// each node of a read's plan.
    pub fn capped(mut self, max: Option<u64>) -> Self {
        fn cap(nodes: &mut [Node<'_>], max: Option<u64>) {
            for n in nodes {
                n.range = n.range.capped(max);
                cap(&mut n.children, max);
            }
        }
        cap(&mut self.children, max);
        self
    }
}

/// PGRST108: a key addresses a resource that `select` does not embed.
pub(crate) fn not_embedded(resource: &str) -> RestError {
    RestError::new(
        400,
        "PGRST108",
        format!("'{resource}' is not an embedded resource in this request"),
    )
    .with_hint(format!(
        "Verify that '{resource}' is included in the 'select' query parameter."
    ))
}

fn not_to_one(code: &str, what: &str, origin: &str, target: &str) -> RestError {
    RestError::new(400, code, format!("A {what} on '{target}' is not possible")).with_details(
        format!("'{origin}' and '{target}' do not form a many-to-one or one-to-one relationship"),
    )
}

/// Whether the request embeds anything, or addresses embedded resources (which is then
/// refused when they are not embedded).
pub(crate) fn requested(q: &Query) -> bool {
    q.select.iter().any(|i| matches!(i, SelectItem::Embed(_)))
        || !q.embedded.is_empty()
        || q.order.iter().any(|t| matches!(t, OrderTerm::Embed { .. }))
}

/// The forest for a request on `origin` (a table, a view, or the table a function returns)
/// of the schema `in_schema`, whose relationships alone it may follow.
///
/// # Errors
/// PGRST200/PGRST201 for an embedding no relationship or several answer, PGRST119, PGRST118,
/// PGRST108 and 42712 as the module says.
pub(crate) fn forest<'s>(
    schema: &'s SchemaCache,
    in_schema: &str,
    origin: &str,
    q: &Query,
) -> Result<Forest<'s>, RestError> {
    let (own, mut children) = nodes(schema, in_schema, origin, &q.select, 1)?;
    let e = &q.embedded;
    for (path, f) in &e.filters {
        find(&mut children, path)?.filters.push(f.clone());
    }
    for (path, t) in &e.logic {
        find(&mut children, path)?.logic.push(t.clone());
    }
    for (path, terms) in &e.order {
        find(&mut children, path)?
            .order
            .extend(terms.iter().cloned());
    }
    for (path, v) in &e.limit {
        find(&mut children, path)?.limit = Some(v.clone());
    }
    for (path, v) in &e.offset {
        find(&mut children, path)?.offset = Some(v.clone());
    }
    related_orders(origin, &q.order, &children)?;
    finish(&mut children)?;
    Ok(Forest { own, children })
}

fn nodes<'s>(
    schema: &'s SchemaCache,
    in_schema: &str,
    origin: &str,
    select: &[SelectItem],
    depth: usize,
) -> Result<(Vec<SelectItem>, Vec<Node<'s>>), RestError> {
    let mut own = Vec::new();
    let mut children: Vec<Node<'s>> = Vec::new();
    for item in select {
        let SelectItem::Embed(e) = item else {
            own.push(item.clone());
            continue;
        };
        let node = node(schema, in_schema, origin, e, depth)?;
        if children.iter().any(|c| c.key() == node.key()) {
            // PostgREST names both joins alike and PostgreSQL refuses the statement.
            return Err(RestError::new(
                400,
                "42712",
                format!(
                    "table name \"{origin}_{}_{depth}\" specified more than once",
                    node.key()
                ),
            ));
        }
        children.push(node);
    }
    Ok((own, children))
}

fn node<'s>(
    schema: &'s SchemaCache,
    in_schema: &str,
    origin: &str,
    e: &Embed,
    depth: usize,
) -> Result<Node<'s>, RestError> {
    let rel = schema.find_rel_in(in_schema, origin, &e.name, e.hint.as_deref())?;
    if e.spread && !rel.to_one() {
        return Err(not_to_one(
            "PGRST119",
            "spread operation",
            &rel.table,
            &e.name,
        ));
    }
    let table = schema
        .table_in(in_schema, &rel.foreign_table)
        .ok_or_else(|| RestError::table_not_found(in_schema, &rel.foreign_table))?;
    let (select, children) = nodes(schema, in_schema, &table.name, &e.select, depth + 1)?;
    let (select, hoisted) = if e.spread {
        hoist(select)
    } else {
        (select, Vec::new())
    };
    Ok(Node {
        name: e.name.clone(),
        alias: e.alias.clone(),
        inner: e.inner,
        spread: e.spread,
        select,
        hoisted,
        rel,
        table,
        parent: origin.to_owned(),
        depth,
        children,
        filters: Vec::new(),
        logic: Vec::new(),
        order: Vec::new(),
        range: Range::ALL,
        limit: None,
        offset: None,
    })
}

/// The node a key's path names, matching each step by name or alias as PostgREST does.
fn find<'n, 's>(
    children: &'n mut [Node<'s>],
    path: &[String],
) -> Result<&'n mut Node<'s>, RestError> {
    let (first, rest) = path.split_first().ok_or_else(|| not_embedded(""))?;
    let node = children
        .iter_mut()
        .find(|c| &c.name == first || c.alias.as_ref() == Some(first))
        .ok_or_else(|| not_embedded(first))?;
    if rest.is_empty() {
        Ok(node)
    } else {
        find(&mut node.children, rest)
    }
}

/// `order=rel(col)` needs `rel` embedded, and to-one.
fn related_orders(
    origin: &str,
    order: &[OrderTerm],
    children: &[Node<'_>],
) -> Result<(), RestError> {
    for t in order {
        if let OrderTerm::Embed { name, .. } = t {
            let child = children
                .iter()
                .find(|c| c.key() == name)
                .ok_or_else(|| not_embedded(name))?;
            if !child.rel.to_one() {
                return Err(not_to_one("PGRST118", "related order", origin, name));
            }
        }
    }
    Ok(())
}

/// Checks each node's related orders and turns its `limit`/`offset` into its range.
fn finish(children: &mut [Node<'_>]) -> Result<(), RestError> {
    for c in children {
        related_orders(&c.table.name, &c.order, &c.children)?;
        let number = |v: &Option<String>| v.as_deref().and_then(|v| v.trim().parse::<i64>().ok());
        c.range = match (number(&c.limit), number(&c.offset)) {
            (Some(l), o) => {
                let lower = o.unwrap_or(0);
                Range {
                    lower,
                    upper: Some(lower.saturating_add(l).saturating_sub(1)),
                }
            }
            (None, Some(lower)) => Range { lower, upper: None },
            (None, None) => Range::ALL,
        };
        finish(&mut c.children)?;
    }
    Ok(())
}

#[cfg(test)]
mod computed_tests;
#[cfg(test)]
mod plans;
#[cfg(test)]
pub(crate) mod tests;
