//! `GET` and `HEAD` on a table or view.

use super::embed::{self, Parts};
use super::{Sql, Target, outer};
use crate::answer::{Kind, body_sql};
use crate::error::RestError;
use crate::query::Range;
use crate::schema::{SchemaCache, Table};
use crate::{Ctx, Plan};

pub(crate) fn table(ctx: &Ctx<'_>, schema: &SchemaCache, table: &Table) -> Result<Plan, RestError> {
    let target = Target::of_table(table);
    let from = &target.sql_name;
    let mut sql = Sql::default();
    let q = &ctx.query;
    let p = if crate::embed::requested(q) {
        let forest = crate::embed::forest(schema, &ctx.schema, &table.name, q)?
            .capped(ctx.settings.max_rows);
        embed::root(&mut sql, &target, &forest, &q.filters, &q.logic, &q.order)?
    } else {
        let select = target.select_list(&mut sql, &q.select)?;
        let where_ = target.where_clause(&mut sql, &q.filters, &q.logic)?;
        let order = target.order_by(&mut sql, &q.order)?;
        Parts::plain(&sql, &select, where_, order)
    };
    let source = format!(
        "pgrst_source AS (SELECT {} FROM {from}{}{}{}{}{})",
        p.select,
        p.joins,
        p.where_,
        p.group,
        p.order,
        ctx.range.sql()
    );
    let count_query = format!("SELECT 1 FROM {from}{}", p.count_where);
    let (ctes, total) = counted(ctx, source, &count_query);
    p.settle(&mut sql, &ctes, &count_query);
    let inner = "SELECT * FROM pgrst_source";
    let body = if ctx.head {
        "NULL".to_owned()
    } else {
        body_sql(ctx.media, false, false, inner)
    };
    Ok(Plan {
        sql: outer(&ctes, &total, &body, inner),
        params: sql.params,
        read_only: true,
        shape: ctx.shape(Kind::Read, false),
    })
}

/// The CTEs and the `total` expression. With a count and a range, the count has a CTE of
/// its own, over the same filters without the range; without a range it is the page's.
pub(crate) fn counted(ctx: &Ctx<'_>, source: String, count_query: &str) -> (String, String) {
    match ctx.prefer.count {
        None => (source, "NULL".to_owned()),
        Some(_) if ctx.range == Range::ALL => (source, "pg_catalog.count(_postgrest_t)".to_owned()),
        Some(_) => (
            format!("{source}, pgrst_source_count AS ({count_query})"),
            "(SELECT pg_catalog.count(*) FROM pgrst_source_count)".to_owned(),
        ),
    }
}
