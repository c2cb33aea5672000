//! What a resource's subquery answers with, and what a spread resource puts in its
//! parent's row: its columns, or the aggregates hoisted from it (`crate::embed::Hoisted`).

use crate::embed::Node;
use crate::grammar::SelectItem;
use crate::sql::ident;
use crate::sql::target::{Selection, Target, aggregate_sql, output_name};

/// `clients(count)`: a field named `count` of an embedded resource with no such column.
pub(super) fn counts_rows(target: &Target<'_>, item: &SelectItem, embedded: bool) -> bool {
    matches!(item, SelectItem::Column { field, .. }
        if embedded
            && field.name == "count"
            && field.json_path.is_empty()
            && !target.columns.iter().any(|c| c.name == "count"))
}

/// A spread resource's columns in its parent's row, `l` its lateral: each output, or its
/// aggregate where one was hoisted from it; every column by name when the parent
/// aggregates, so that each can be grouped by.
pub(super) fn spread_into(select: &mut Selection, c: &Node<'_>, l: &str, aggregating: bool) {
    let outputs = if aggregating {
        expanded_outputs(c)
    } else {
        spread_outputs(c)
    };
    for o in outputs {
        let Some(n) = o else {
            select.push(format!("{l}.*"), false);
            continue;
        };
        let column = format!("{l}.{}", ident(&n));
        match c
            .hoisted
            .iter()
            .find(|h| h.column.as_deref() == Some(n.as_str()))
        {
            Some(h) => select.push(aggregate_sql(&h.aggregate, &column), true),
            None => select.push(column, false),
        }
    }
    for h in c.hoisted.iter().filter(|h| h.column.is_none()) {
        select.push(aggregate_sql(&h.aggregate, &format!("{l}.*")), true);
    }
}

/// [`spread_outputs`] with `*` written out as the resource's columns.
fn expanded_outputs(c: &Node<'_>) -> Vec<Option<String>> {
    let mut out = Vec::new();
    for item in &c.select {
        match item {
            SelectItem::Star => out.extend(c.table.columns.iter().map(|k| Some(k.name.clone()))),
            SelectItem::Column { alias, field, .. } => out.push(Some(
                alias
                    .clone()
                    .unwrap_or_else(|| output_name(field).to_owned()),
            )),
            _ => {}
        }
    }
    for child in &c.children {
        if child.spread {
            out.extend(expanded_outputs(child));
        } else if !child.is_empty() {
            out.push(Some(child.key().to_owned()));
        }
    }
    out
}

/// What a spread resource puts in its parent's row: its columns (`None` for `*`) and, in
/// turn, its embedded resources' outputs. Nothing for `...rel()`; `*` alone when it selects
/// `*`, which covers the rest.
fn spread_outputs(c: &Node<'_>) -> Vec<Option<String>> {
    if c.select.contains(&SelectItem::Star) {
        return vec![None];
    }
    let mut out = Vec::new();
    for item in &c.select {
        match item {
            SelectItem::Star => out.push(None),
            SelectItem::Column { alias, field, .. } => {
                out.push(Some(
                    alias
                        .clone()
                        .unwrap_or_else(|| output_name(field).to_owned()),
                ));
            }
            _ => {}
        }
    }
    for child in &c.children {
        if child.spread {
            out.extend(spread_outputs(child));
        } else if !child.is_empty() {
            out.push(Some(child.key().to_owned()));
        }
    }
    out
}

/// The columns a resource's subquery answers with: its own (`None` for all of its table's),
/// then its embedded resources'.
pub(super) fn outputs(c: &Node<'_>) -> Vec<Option<String>> {
    if c.select.is_empty() && c.children.is_empty() {
        return vec![None];
    }
    spread_outputs(c)
}
