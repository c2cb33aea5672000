//! `POST` (insert and upsert), `PATCH` and `DELETE` on a table or view. PostgreSQL decodes
//! the body (`json_populate_recordset` over the table's row type), so Rust maps no types.

use std::collections::BTreeSet;

use serde_json::Value;

use super::{Sql, Target, embed, ident, outer, outer_with};
use crate::answer::{Kind, body_sql};
use crate::body::json_body;
use crate::error::RestError;
use crate::headers::{Representation, Resolution};
use crate::query::Range;
use crate::schema::{Column, SchemaCache, Table};
use crate::{Ctx, Plan, object_keys};

/// The columns the body writes: `columns=` when given, else the keys of the object, or of
/// every object of the array (which must all have the same keys, as PostgREST requires).
fn body_columns<'t>(
    ctx: &Ctx<'_>,
    table: &'t Table,
    body: &Value,
) -> Result<Vec<&'t Column>, RestError> {
    let keys: BTreeSet<String> = match (&ctx.query.columns, body) {
        (Some(cols), _) => cols.iter().cloned().collect(),
        (None, Value::Object(_)) => object_keys(body).unwrap_or_default(),
        (None, Value::Array(items)) => {
            let first = items.first().and_then(object_keys);
            let uniform = items.iter().all(|i| object_keys(i) == first);
            match first {
                Some(keys) if uniform => keys,
                None if items.is_empty() => BTreeSet::new(),
                _ => return Err(RestError::invalid_body("All object keys must match")),
            }
        }
        (None, _) => BTreeSet::new(),
    };
    keys.iter()
        .map(|k| {
            table
                .column(k)
                .ok_or_else(|| RestError::column_not_found(&table.name, k))
        })
        .collect()
}

/// The rows of the body as a JSON array expression.
fn rows_expr(sql: &mut Sql, text: &str, body: &Value) -> String {
    match body {
        Value::Array(_) => format!("{}::json", sql.param(Some(text.to_owned()))),
        Value::Object(_) => format!(
            "json_build_array({}::json)",
            sql.param(Some(text.to_owned()))
        ),
        // PostgREST takes any other JSON as an empty array.
        _ => "'[]'::json".to_owned(),
    }
}

/// What the mutation returns to the outer statement, and the outer select over it, with
/// the embedded resources `select` asks for (which are checked even when nothing is
/// returned, as PostgREST plans them either way).
fn returning(
    ctx: &Ctx<'_>,
    schema: &SchemaCache,
    table: &Table,
    sql: &mut Sql,
) -> Result<(&'static str, String, String), RestError> {
    let forest = if crate::embed::requested(&ctx.query) {
        Some(crate::embed::forest(
            schema,
            &ctx.schema,
            &table.name,
            &ctx.query,
        )?)
    } else {
        None
    };
    if ctx.prefer.representation != Some(Representation::Full) {
        return Ok((
            "1",
            "SELECT * FROM pgrst_source".to_owned(),
            "NULL".to_owned(),
        ));
    }
    let target = Target::source(&table.name, &table.columns, Some(table));
    let inner = match &forest {
        // The root's filters are the mutation's; only the resources' own apply here.
        Some(forest) => {
            let p = embed::root(sql, &target, forest, &[], &[], &[])?;
            format!(
                "SELECT {} FROM pgrst_source{}{}",
                p.select, p.joins, p.group
            )
        }
        None => {
            let select = target.select_list(sql, &ctx.query.select)?;
            format!(
                "SELECT {} FROM pgrst_source{}",
                select.list(),
                select.group_by()
            )
        }
    };
    let body = body_sql(ctx.media, false, false, &inner);
    Ok(("*", inner, body))
}

/// PostgREST's count of the rows an upsert inserted rather than updated: each row of the
/// body adds one as it is offered, each conflict that updates takes one back.
fn counted_insert(add: bool) -> String {
    let (op, never) = if add { ("+", "0") } else { ("-", "-1") };
    format!(
        "set_config('pgrst.inserted', (coalesce(nullif(current_setting('pgrst.inserted', \
         true), '')::int, 0) {op} 1)::text, true) <> '{never}'"
    )
}

pub(crate) fn insert(
    ctx: &Ctx<'_>,
    schema: &SchemaCache,
    table: &Table,
) -> Result<Plan, RestError> {
    let (text, body) = json_body(ctx.req, "")?;
    let columns = body_columns(ctx, table, &body)?;
    let mut sql = Sql::default();
    let (ret, inner, body_expr) = returning(ctx, schema, table, &mut sql)?;
    let mut rows = rows_expr(&mut sql, &text, &body);
    let target = Target::of_table(table);
    let from = &target.sql_name;
    if ctx.prefer.missing_default == Some(true) {
        rows = with_defaults(&mut sql, &rows, &columns);
    }
    let names: Vec<String> = columns.iter().map(|c| ident(&c.name)).collect();
    let body_cols: Vec<String> = names.iter().map(|n| format!("pgrst_body.{n}")).collect();
    let conflict_cols = match &ctx.query.on_conflict {
        Some(cols) => cols.clone(),
        None => table.primary_key.clone(),
    };
    let mut on_conflict = String::new();
    let mut counts = String::new();
    let mut inserted = "";
    if let Some(resolution) = ctx.prefer.resolution
        && !conflict_cols.is_empty()
    {
        let mut keys = Vec::with_capacity(conflict_cols.len());
        for k in &conflict_cols {
            let c = table
                .column(k)
                .ok_or_else(|| RestError::undefined_column(&table.name, k))?;
            keys.push(ident(&c.name));
        }
        let merge = resolution == Resolution::Merge;
        let action = if merge && !names.is_empty() {
            let sets: Vec<String> = names
                .iter()
                .map(|n| format!("{n} = EXCLUDED.{n}"))
                .collect();
            format!(
                "DO UPDATE SET {} WHERE {}",
                sets.join(", "),
                counted_insert(false)
            )
        } else {
            "DO NOTHING".to_owned()
        };
        if merge {
            counts = format!(" WHERE {}", counted_insert(true));
            inserted = ", nullif(current_setting('pgrst.inserted', true), '')::bigint AS inserted";
        }
        on_conflict = format!(" ON CONFLICT ({}) {action}", keys.join(", "));
    }
    let target_cols = if names.is_empty() {
        String::new()
    } else {
        format!(" ({})", names.join(", "))
    };
    let source = format!(
        "pgrst_source AS (INSERT INTO {from}{target_cols} SELECT {} FROM \
         json_populate_recordset(NULL::{from}, {rows}) pgrst_body{counts}{on_conflict} \
         RETURNING {ret})",
        body_cols.join(", ")
    );
    Ok(Plan {
        sql: outer_with(&source, "NULL", &body_expr, inserted, &inner),
        params: sql.params,
        read_only: false,
        shape: ctx.shape(
            Kind::Insert,
            !table.primary_key.is_empty() || ctx.query.on_conflict.is_some(),
        ),
    })
}

/// `Prefer: missing=default`: each row's absent keys take the column's default (from the
/// catalog: its expression, an identity column's `nextval`, its domain's), evaluated per row
/// as PostgREST evaluates it. Columns without one (generated, `ALWAYS` identity) are left to
/// the body.
fn with_defaults(sql: &mut Sql, rows: &str, columns: &[&Column]) -> String {
    let Some(defaults) = defaults_object(sql, columns) else {
        return rows.to_owned();
    };
    format!(
        "(SELECT json_agg({defaults} || pgrst_elem) FROM \
         jsonb_array_elements(({rows})::jsonb) pgrst_elem)"
    )
}

/// `jsonb_build_object(name, default, …)` of the columns that have a default.
fn defaults_object(sql: &mut Sql, columns: &[&Column]) -> Option<String> {
    let mut pairs = Vec::new();
    for c in columns {
        if let Some(expr) = &c.default {
            pairs.push(format!("{}, {expr}", sql.param(Some(c.name.clone()))));
        }
    }
    (!pairs.is_empty()).then(|| format!("jsonb_build_object({})", pairs.join(", ")))
}

/// pg-safeupdate's refusal, which PostgREST answers 400: a mutation without filters would
/// change every row.
fn require_filters(ctx: &Ctx<'_>, verb: &str) -> Result<(), RestError> {
    if ctx.query.filters.is_empty() && ctx.query.logic.is_empty() {
        return Err(RestError::new(
            400,
            "21000",
            format!("{verb} requires a WHERE clause"),
        ));
    }
    if ctx.range != Range::ALL {
        return Err(RestError::not_implemented(
            "limit and offset on PATCH and DELETE are not supported yet",
        ));
    }
    Ok(())
}

pub(crate) fn update(
    ctx: &Ctx<'_>,
    schema: &SchemaCache,
    table: &Table,
) -> Result<Plan, RestError> {
    let (text, body) = json_body(ctx.req, "")?;
    if !body.is_object() {
        return Err(RestError::invalid_body("Empty or invalid json"));
    }
    let columns = body_columns(ctx, table, &body)?;
    require_filters(ctx, "UPDATE")?;
    let mut sql = Sql::default();
    let target = Target::of_table(table);
    let from = &target.sql_name;
    let where_ = target.where_clause(&mut sql, &ctx.query.filters, &ctx.query.logic)?;
    let (ret, inner, body_expr) = returning(ctx, schema, table, &mut sql)?;
    let source = if columns.is_empty() {
        // Nothing to set: no rows change, and none are returned (PostgREST's shape). The
        // filters stay, so that every value they bind is in the statement.
        format!("pgrst_source AS (SELECT {ret} FROM {from}{where_} AND false)")
    } else {
        let names: Vec<String> = columns.iter().map(|c| ident(&c.name)).collect();
        let body_cols: Vec<String> = names.iter().map(|n| format!("pgrst_body.{n}")).collect();
        let p = sql.param(Some(text.into_owned()));
        let mut row = format!("{p}::json");
        if ctx.prefer.missing_default == Some(true)
            && let Some(defaults) = defaults_object(&mut sql, &columns)
        {
            row = format!("({defaults} || {p}::jsonb)::json");
        }
        format!(
            "pgrst_source AS (UPDATE {from} SET ({}) = (SELECT {} FROM \
             json_populate_record(NULL::{from}, {row}) pgrst_body){where_} RETURNING {ret})",
            names.join(", "),
            body_cols.join(", ")
        )
    };
    Ok(Plan {
        sql: outer(&source, "NULL", &body_expr, &inner),
        params: sql.params,
        read_only: false,
        shape: ctx.shape(Kind::Update, false),
    })
}

pub(crate) fn delete(
    ctx: &Ctx<'_>,
    schema: &SchemaCache,
    table: &Table,
) -> Result<Plan, RestError> {
    require_filters(ctx, "DELETE")?;
    let mut sql = Sql::default();
    let target = Target::of_table(table);
    let from = &target.sql_name;
    let where_ = target.where_clause(&mut sql, &ctx.query.filters, &ctx.query.logic)?;
    let (ret, inner, body_expr) = returning(ctx, schema, table, &mut sql)?;
    let source = format!("pgrst_source AS (DELETE FROM {from}{where_} RETURNING {ret})");
    Ok(Plan {
        sql: outer(&source, "NULL", &body_expr, &inner),
        params: sql.params,
        read_only: false,
        shape: ctx.shape(Kind::Delete, false),
    })
}
