//! `POST /rpc/fn` (arguments in a JSON object) and `GET /rpc/fn` (arguments in the query
//! string). The function is chosen among its overloads by the argument names, as
//! PostgREST's `findProc` chooses; a set- or table-returning function's result can then be
//! filtered, ordered, limited and `select`ed like a table.

use std::collections::BTreeSet;

use super::embed::{self, Parts};
use super::read::counted;
use super::{Sql, Target, ident, outer, qualified};
use crate::answer::{Kind, body_sql};
use crate::error::RestError;
use crate::schema::{Function, Returns, SchemaCache};
use crate::{Ctx, Plan, json_body, object_keys};

pub(crate) fn call(ctx: &Ctx<'_>, schema: &SchemaCache, name: &str) -> Result<Plan, RestError> {
    let post = ctx.req.method == "POST";
    let mut sql = Sql::default();
    let (keys, body_text) = if post {
        let (text, body) = json_body(ctx.req, "{}")?;
        let keys = match (&ctx.query.columns, object_keys(&body)) {
            (Some(cols), Some(_)) => cols.iter().cloned().collect(),
            (None, Some(keys)) => keys,
            _ => {
                return Err(RestError::not_implemented(
                    "calling a function with anything but a JSON object body",
                ));
            }
        };
        (keys, Some(text.into_owned()))
    } else {
        let keys = ctx.query.rpc_args.iter().map(|(k, _)| k.clone()).collect();
        (keys, None)
    };
    let f = find(schema, name, &keys, post)?;

    let fn_name = qualified(&f.name);
    let mut args = Vec::new();
    let mut from_args = String::new();
    if let Some(text) = &body_text {
        let given: Vec<_> = f.args.iter().filter(|a| keys.contains(&a.name)).collect();
        if !given.is_empty() {
            let defs: Vec<String> = given
                .iter()
                .map(|a| format!("{} {}", ident(&a.name), a.type_name))
                .collect();
            let p = sql.param(Some(text.clone()));
            from_args = format!(
                "json_to_record({p}::json) AS pgrst_args({}), LATERAL ",
                defs.join(", ")
            );
            for a in given {
                let variadic = if a.variadic { "VARIADIC " } else { "" };
                args.push(format!("{variadic}{0} := pgrst_args.{0}", ident(&a.name)));
            }
        }
    } else {
        for a in &f.args {
            if let Some((_, v)) = ctx.query.rpc_args.iter().find(|(k, _)| *k == a.name) {
                let variadic = if a.variadic { "VARIADIC " } else { "" };
                let value = sql.typed(v.clone(), &a.type_name);
                args.push(format!("{variadic}{} := {value}", ident(&a.name)));
            }
        }
    }
    let invocation = format!("{fn_name}({})", args.join(", "));

    let no_columns = Vec::new();
    let (columns, scalar) = match &f.returns {
        Returns::Composite(cols) => (cols, false),
        Returns::Scalar(_) | Returns::Void => (&no_columns, true),
    };
    let call_sql = if scalar {
        format!(
            "SELECT pgrst_call.pgrst_scalar FROM {from_args}(SELECT {invocation} AS pgrst_scalar) \
             pgrst_call"
        )
    } else {
        format!("SELECT pgrst_call.* FROM {from_args}{invocation} pgrst_call")
    };

    let target = Target {
        sql_name: "pgrst_source".to_owned(),
        label: &f.name,
        columns,
    };
    let q = &ctx.query;
    let p = if crate::embed::requested(q) {
        // A function returning a table's rows embeds from that table, as PostgREST's
        // `funcTableName`; any other has no relationships.
        let origin = f.returns_table.as_deref().unwrap_or(&f.name);
        let forest = crate::embed::forest(schema, origin, q)?;
        embed::root(&mut sql, &target, &forest, &q.filters, &q.logic, &q.order)?
    } else {
        let select = if scalar && is_star(ctx) {
            "pgrst_source.pgrst_scalar".to_owned()
        } else {
            target.select_list(&q.select)?
        };
        let where_ = target.where_clause(&mut sql, &q.filters, &q.logic)?;
        let order = target.order_by(&q.order)?;
        Parts::plain(&sql, select, where_, order)
    };
    let inner = format!(
        "SELECT {} FROM pgrst_source{}{}{}{}",
        p.select,
        p.joins,
        p.where_,
        p.order,
        ctx.range.sql()
    );
    let count_query = format!("SELECT 1 FROM pgrst_source{}", p.count_where);
    let (ctes, total) = counted(ctx, format!("pgrst_source AS ({call_sql})"), &count_query);
    p.settle(&mut sql, &ctes, &count_query);
    let void = f.returns == Returns::Void;
    let body = if ctx.head || void {
        "NULL".to_owned()
    } else {
        body_sql(ctx.media, scalar, !f.returns_set)
    };
    Ok(Plan {
        sql: outer(&ctes, &total, &body, &inner),
        params: sql.params,
        read_only: !post,
        shape: ctx.shape(Kind::Call { void }, false),
    })
}

fn is_star(ctx: &Ctx<'_>) -> bool {
    use crate::grammar::SelectItem;
    ctx.query.select.is_empty() || ctx.query.select == [SelectItem::Star]
}

/// The overload whose arguments the keys name: all required ones, and optional ones only.
fn find<'s>(
    schema: &'s SchemaCache,
    name: &str,
    keys: &BTreeSet<String>,
    post: bool,
) -> Result<&'s Function, RestError> {
    let overloads = schema.functions(name);
    let matching: Vec<&Function> = overloads
        .iter()
        .filter(|f| {
            let required: BTreeSet<&String> = f
                .args
                .iter()
                .filter(|a| a.required)
                .map(|a| &a.name)
                .collect();
            let optional: BTreeSet<&String> = f
                .args
                .iter()
                .filter(|a| !a.required)
                .map(|a| &a.name)
                .collect();
            let rest: BTreeSet<&String> = keys.iter().filter(|k| !optional.contains(k)).collect();
            rest == required
        })
        .collect();
    match matching.as_slice() {
        [f] => Ok(f),
        [] => Err(no_function(name, keys, post, overloads)),
        many => {
            let described: Vec<String> = many
                .iter()
                .map(|f| {
                    let args: Vec<String> = f
                        .args
                        .iter()
                        .map(|a| format!("{} => {}", a.name, a.type_name))
                        .collect();
                    format!("public.{}({})", f.name, args.join(", "))
                })
                .collect();
            Err(RestError::new(
                300,
                "PGRST203",
                format!(
                    "Could not choose the best candidate function between: {}",
                    described.join(", ")
                ),
            )
            .with_hint(
                "Try renaming the parameters or the function itself in the database so \
                 function overloading can be resolved",
            ))
        }
    }
}

/// PostgREST's PGRST202, message, details and (when the name exists) hint.
fn no_function(
    name: &str,
    keys: &BTreeSet<String>,
    post: bool,
    overloads: &[Function],
) -> RestError {
    let list: Vec<&str> = keys.iter().map(String::as_str).collect();
    let joined = list.join(", ");
    let (in_message, in_details) = if list.is_empty() {
        (
            " without parameters".to_owned(),
            " without parameters".to_owned(),
        )
    } else {
        let plural = if list.len() > 1 { "s" } else { "" };
        (
            format!("({joined})"),
            format!(" with parameter{plural} {joined}"),
        )
    };
    let json_alternative = if post {
        " or with a single unnamed json/jsonb parameter"
    } else {
        ""
    };
    let mut e = RestError::new(
        404,
        "PGRST202",
        format!("Could not find the function public.{name}{in_message} in the schema cache"),
    )
    .with_details(format!(
        "Searched for the function public.{name}{in_details}{json_alternative}, but no \
         matches were found in the schema cache."
    ));
    if let Some(f) = overloads.first() {
        let mut names: Vec<&str> = f.args.iter().map(|a| a.name.as_str()).collect();
        names.sort_unstable();
        e = e.with_hint(format!(
            "Perhaps you meant to call the function public.{name}({})",
            names.join(", ")
        ));
    }
    e
}
