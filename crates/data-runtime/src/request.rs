//! One request, one transaction: the settings a request runs under (its role, timeout,
//! claims and `search_path`, as PostgREST sets them) and the plan's statement, sent as one
//! pipeline; its row (or an `EXPLAIN`'s lines) answered with the use case's `respond`, and
//! a write ended with `COMMIT` or `ROLLBACK` by that answer, or `ROLLBACK` whatever it is
//! for `tx=rollback`.

use quire_dataapi::{Plan, PlanRow, RestAnswer};
use quire_databases::{KeyRole, PgRefusal, Respond, RunError};
use quire_kernel::InfraError;

use crate::pool::Lent;
use crate::wire::{Row, Step, Wire, WireError};

/// The settings statement's text, so that a read's and a write's cannot drift apart.
macro_rules! settings {
    () => {
        "SELECT set_config('role', $1, true), \
        set_config('statement_timeout', coalesce($2, current_setting('statement_timeout')), true), \
        set_config('request.jwt.claims', $3, true), \
        set_config('search_path', $4, true)"
    };
}

/// A request's role, timeout, claims and `search_path` (its schema, then `public`), for
/// the rest of its transaction (what PostgREST sets, in one statement).
const SETUP: &str = settings!();

/// [`SETUP`] for a read, which also makes its transaction read-only (as `BEGIN READ
/// ONLY` would, a statement earlier).
pub const READ_SETUP: &str = concat!(
    settings!(),
    ", set_config('transaction_read_only', 'on', true)"
);

fn run_error(e: WireError) -> RunError {
    match e {
        WireError::Db(db) => RunError::Refused(PgRefusal {
            sqlstate: db.sqlstate,
            message: db.message,
            detail: db.detail,
            hint: db.hint,
        }),
        WireError::Broken(e) => RunError::Infra(InfraError::new(format!(
            "a data API connection failed: {e}"
        ))),
    }
}

/// Ends a transaction a refused statement left failed, so the connection may serve again.
async fn roll_back(conn: &mut Lent<'_, Wire>) {
    if let Ok(answer) = conn.pipeline(&[Step::ROLLBACK]).await
        && answer.status == b'I'
    {
        conn.clean();
    }
}

fn plan_row(plan: &Plan, rows: &[Row]) -> Result<PlanRow, RunError> {
    let bad = |what: &str| RunError::Infra(InfraError::new(format!("a plan's row: {what}")));
    if plan.explains() {
        // `EXPLAIN`'s lines, one a row (its JSON format is one row).
        let lines: Vec<&str> = rows
            .iter()
            .map(|r| r.first().and_then(Option::as_deref).unwrap_or(""))
            .collect();
        return Ok(PlanRow::explained(&lines));
    }
    let row = rows.first().ok_or_else(|| bad("none returned"))?;
    let number = |i: usize| -> Result<Option<i64>, RunError> {
        match row.get(i) {
            Some(Some(text)) => text.parse().map(Some).map_err(|_| bad("not a number")),
            Some(None) => Ok(None),
            None => Err(bad("a column is missing")),
        }
    };
    Ok(PlanRow {
        total: number(0)?,
        page_total: number(1)?.ok_or_else(|| bad("no page total"))?,
        body: row.get(2).cloned().ok_or_else(|| bad("no body"))?,
        // Only an upsert's statement has this fourth column.
        inserted: if row.len() > 3 { number(3)? } else { None },
    })
}

/// `row` answered by `respond`, its refusal a [`RunError::Answer`].
fn answered(plan: &Plan, row: PlanRow, respond: Respond) -> Result<RestAnswer, RunError> {
    respond(plan, row).map_err(RunError::Answer)
}

/// Runs `plan` as `role` on `conn`, in one transaction, and answers its row with
/// `respond`; the caller bounds it with its deadline (a future dropped mid-answer leaves
/// the connection to the pool to end).
pub(crate) async fn run(
    conn: &mut Lent<'_, Wire>,
    role: KeyRole,
    timeout: Option<&str>,
    claims: &str,
    plan: &Plan,
    respond: Respond,
) -> Result<RestAnswer, RunError> {
    let search_path = plan.search_path();
    let setup_params = [
        Some(role.as_str()),
        timeout,
        Some(claims),
        Some(search_path.as_str()),
    ];
    let params: Vec<Option<&str>> = plan.params.iter().map(Option::as_deref).collect();
    let statement = Step {
        sql: &plan.sql,
        params: &params,
    };
    if plan.read_only {
        // A read commits whatever its answer, so it needs no BEGIN or COMMIT: the
        // statements under one `Sync` are one transaction, which the server commits at
        // the `Sync`, or rolls back there when a statement is refused (the steps after
        // it are skipped). Either way the connection is idle again.
        let setup = Step {
            sql: READ_SETUP,
            params: &setup_params,
        };
        let answer = conn
            .pipeline(&[setup, statement])
            .await
            .map_err(run_error)?;
        if answer.status == b'I' {
            conn.clean();
        }
        if let Some(e) = answer.refused {
            return Err(run_error(WireError::Db(e)));
        }
        let row = plan_row(plan, answer.rows.get(1).map_or(&[][..], Vec::as_slice))?;
        return answered(plan, row, respond);
    }
    let setup = Step {
        sql: SETUP,
        params: &setup_params,
    };
    // A write commits only an answer PostgREST would give (a singular PATCH that
    // touched two rows is undone), so its end waits for the row. One rolled back whatever
    // its answer (`tx=rollback`) checks its deferred constraints first, as PostgREST does,
    // so that what would refuse its commit refuses it still.
    let mut steps = vec![Step::BEGIN, setup, statement];
    if plan.rolls_back() {
        steps.push(Step::bare("SET CONSTRAINTS ALL IMMEDIATE"));
    }
    let answer = conn.pipeline(&steps).await.map_err(run_error)?;
    if let Some(e) = answer.refused {
        roll_back(conn).await;
        return Err(run_error(WireError::Db(e)));
    }
    let rows = answer.rows.get(2).map_or(&[][..], Vec::as_slice);
    let response = plan_row(plan, rows).and_then(|row| answered(plan, row, respond));
    let keep = response.is_ok() && !plan.rolls_back();
    let ended = conn
        .pipeline(&[if keep { Step::COMMIT } else { Step::ROLLBACK }])
        .await
        .map_err(run_error)?;
    if ended.status == b'I' {
        conn.clean();
    }
    if let Some(e) = ended.refused {
        return Err(run_error(WireError::Db(e)));
    }
    response
}
