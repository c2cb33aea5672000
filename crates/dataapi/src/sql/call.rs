//! `POST /rpc/fn` (arguments in a JSON object, or the whole body as a function's one
//! unnamed argument) and `GET /rpc/fn` (arguments in the query string). The function is
//! chosen among its overloads as PostgREST's `findProc` chooses (`overloads.rs`); a set- or
//! table-returning function's result can then be filtered, ordered, limited and `select`ed
//! like a table, computed fields included when it returns a table's rows.

use std::collections::BTreeSet;

use serde_json::Value;

use super::embed::{self, Parts};
use super::overloads::Asked;
use super::read::counted;
use super::target::Selection;
use super::{Sql, Target, ident, outer, qualified};
use crate::answer::{Kind, body_sql};
use crate::body::{BodyType, body_type, json_body};
use crate::error::RestError;
use crate::schema::{Function, Returns, SchemaCache};
use crate::{Ctx, Plan, object_keys};

/// What a `POST` sent.
enum Sent {
    /// JSON (or CSV made JSON): its text, and its first object when it is an array.
    Json { text: String, first: bool },
    /// A raw body, for the one unnamed argument: bound as text (bytea as `\x` hex).
    Raw(String),
}

/// The body of a `POST`, its keys (PostgREST's: the object's, the first object's of an
/// array, or `columns=`), and its type.
fn sent(ctx: &Ctx<'_>) -> Result<(Sent, BTreeSet<String>, BodyType), RestError> {
    let kind = body_type(ctx.req.content_type)?;
    if kind.raw_only() {
        let raw = if kind == BodyType::Octet {
            let hex: String = ctx.req.body.iter().map(|b| format!("{b:02x}")).collect();
            format!("\\x{hex}")
        } else {
            std::str::from_utf8(ctx.req.body)
                .map_err(|_| RestError::invalid_body("The body is not valid UTF-8"))?
                .to_owned()
        };
        return Ok((Sent::Raw(raw), BTreeSet::new(), kind));
    }
    let (text, body) = json_body(ctx.req, "{}")?;
    let first = body.is_array();
    let keys = match (&ctx.query.columns, &body) {
        (Some(cols), _) => cols.iter().cloned().collect(),
        (None, Value::Array(items)) => {
            let keys = items.first().and_then(object_keys);
            if items.iter().any(|i| object_keys(i) != keys) {
                return Err(RestError::invalid_body("All object keys must match"));
            }
            keys.unwrap_or_default()
        }
        (None, v) => object_keys(v).unwrap_or_default(),
    };
    let text = text.into_owned();
    Ok((Sent::Json { text, first }, keys, kind))
}

pub(crate) fn call(ctx: &Ctx<'_>, schema: &SchemaCache, name: &str) -> Result<Plan, RestError> {
    let post = ctx.req.method == "POST";
    let mut sql = Sql::default();
    let (sent, keys, kind) = if post {
        let (sent, keys, kind) = sent(ctx)?;
        (Some(sent), keys, Some(kind))
    } else {
        let keys = ctx.query.rpc_args.iter().map(|(k, _)| k.clone()).collect();
        (None, keys, None)
    };
    let asked = Asked {
        schema: &ctx.schema,
        name,
        keys: &keys,
        post: kind,
    };
    let f = asked.find(schema)?;
    if ctx.prefer.strict == Some(true) && ctx.prefer.max_affected.is_some() && !f.returns_set {
        return Err(RestError::new(
            400,
            "PGRST128",
            "Function must return SETOF or TABLE when max-affected preference is used with \
             handling=strict",
        ));
    }

    let fn_name = qualified(&f.schema, &f.name);
    let mut from_args = String::new();
    let args = match (&sent, f.unnamed()) {
        // PostgREST passes the body whole, as it came, to a function's one unnamed argument.
        (Some(Sent::Json { text, .. } | Sent::Raw(text)), Some(arg)) => {
            vec![sql.typed(text.clone(), &arg.type_name)]
        }
        (Some(Sent::Json { text, first }), None) => {
            named_from_body(&mut sql, f, &keys, text, *first, &mut from_args)
        }
        _ => named_from_query(ctx, &mut sql, f),
    };
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

    let table = f
        .returns_table
        .as_deref()
        .and_then(|t| schema.table_in(&f.schema, t));
    let target = Target::source(&f.name, columns, table);
    let q = &ctx.query;
    let p = if crate::embed::requested(q) {
        // A function returning a table's rows embeds from that table, as PostgREST's
        // `funcTableName`; any other has no relationships.
        let origin = f.returns_table.as_deref().unwrap_or(&f.name);
        let forest =
            crate::embed::forest(schema, &f.schema, origin, q)?.capped(ctx.settings.max_rows);
        embed::root(&mut sql, &target, &forest, &q.filters, &q.logic, &q.order)?
    } else {
        let select = if scalar && is_star(ctx) {
            let mut scalar = Selection::default();
            scalar.push("pgrst_source.pgrst_scalar".to_owned(), false);
            scalar
        } else {
            target.select_list(&mut sql, &q.select)?
        };
        let where_ = target.where_clause(&mut sql, &q.filters, &q.logic)?;
        let order = target.order_by(&mut sql, &q.order)?;
        Parts::plain(&sql, &select, where_, order)
    };
    let inner = format!(
        "SELECT {} FROM pgrst_source{}{}{}{}{}",
        p.select,
        p.joins,
        p.where_,
        p.group,
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
        body_sql(ctx.media, scalar, !f.returns_set, &inner)
    };
    Ok(Plan {
        sql: outer(&ctes, &total, &body, &inner),
        params: sql.params,
        read_only: !post,
        shape: ctx.shape(Kind::Call { void }, false),
    })
}

/// `name := pgrst_args.name` for each argument the body names, read by `json_to_record`
/// (from the first object, when the body is an array, as PostgREST reads one row of it).
fn named_from_body(
    sql: &mut Sql,
    f: &Function,
    keys: &BTreeSet<String>,
    text: &str,
    first: bool,
    from_args: &mut String,
) -> Vec<String> {
    let given: Vec<_> = f.args.iter().filter(|a| keys.contains(&a.name)).collect();
    if given.is_empty() {
        return Vec::new();
    }
    let defs: Vec<String> = given
        .iter()
        .map(|a| format!("{} {}", ident(&a.name), a.type_name))
        .collect();
    let p = sql.param(Some(text.to_owned()));
    let record = if first {
        format!("({p}::json->0)")
    } else {
        format!("{p}::json")
    };
    *from_args = format!(
        "json_to_record({record}) AS pgrst_args({}), LATERAL ",
        defs.join(", ")
    );
    given
        .into_iter()
        .map(|a| {
            let variadic = if a.variadic { "VARIADIC " } else { "" };
            format!("{variadic}{0} := pgrst_args.{0}", ident(&a.name))
        })
        .collect()
}

/// `name := $n::text::type` for each argument the query string names.
fn named_from_query(ctx: &Ctx<'_>, sql: &mut Sql, f: &Function) -> Vec<String> {
    let mut args = Vec::new();
    for a in &f.args {
        if let Some((_, v)) = ctx.query.rpc_args.iter().find(|(k, _)| *k == a.name) {
            let variadic = if a.variadic { "VARIADIC " } else { "" };
            let value = sql.typed(v.clone(), &a.type_name);
            args.push(format!("{variadic}{} := {value}", ident(&a.name)));
        }
    }
    args
}

fn is_star(ctx: &Ctx<'_>) -> bool {
    use crate::grammar::SelectItem;
    ctx.query.select.is_empty() || ctx.query.select == [SelectItem::Star]
}
