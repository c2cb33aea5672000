//! PostgREST's query-parameter grammar (`select`, filters, `and`/`or` trees, `order`,
//! `columns`, `on_conflict`), after `PostgREST.ApiRequest.QueryParams`. It parses what
//! PostgREST parses, embeddings and JSON paths included, so that the planner can refuse what
//! it does not implement with a clear error rather than a confusing syntax error. Positions
//! are 1-based columns, as Parsec reports them in PGRST100 messages.

#[cfg(test)]
mod depth_tests;
mod embed;
mod filters;
mod lexer;
mod select;
#[cfg(test)]
mod tests;

use lexer::P;

/// How deep embedded resources, and `and`/`or` trees, may nest. PostgREST sets no limit;
/// each level is a recursion of the parser, the planner and the SQL builder (and of the
/// tree's drop), and a query string of 32 KiB could otherwise nest thousands deep and
/// overflow the gateway's stack, aborting every request the process serves.
pub(crate) const MAX_DEPTH: usize = 32;

/// A syntax error: where (1-based) and Parsec-like details ("unexpected … expecting …").
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParseError {
    pub column: usize,
    pub details: String,
}

/// What follows an arrow: a key, or an array index (`+0`, `-1`: signed, as PostgREST keeps
/// it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JsonOperand {
    Key(String),
    Index(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JsonOp {
    /// `->`: the JSON value.
    Arrow(JsonOperand),
    /// `->>`: its text.
    DoubleArrow(JsonOperand),
}

impl JsonOp {
    pub fn operand(&self) -> &JsonOperand {
        match self {
            JsonOp::Arrow(o) | JsonOp::DoubleArrow(o) => o,
        }
    }
}

/// A column reference, with the JSON path PostgREST allows after it (`data->a->>b`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Field {
    pub name: String,
    pub json_path: Vec<JsonOp>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SelectItem {
    Star,
    Column {
        alias: Option<String>,
        field: Field,
        cast: Option<String>,
    },
    /// `count()`, `col.sum()` and the like.
    Aggregate(Aggregate),
    /// `rel(*)`, `alias:rel!hint!inner(…)`, `...rel(…)`.
    Embed(Embed),
}

/// PostgREST's aggregate functions in `select`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AggFunc {
    Sum,
    Avg,
    Count,
    Max,
    Min,
}

impl AggFunc {
    /// As written after a field (`qty.sum()`); also the name PostgreSQL gives the column
    /// when no alias is given.
    pub fn name(self) -> &'static str {
        match self {
            AggFunc::Sum => "sum",
            AggFunc::Avg => "avg",
            AggFunc::Count => "count",
            AggFunc::Max => "max",
            AggFunc::Min => "min",
        }
    }
}

/// `[alias:]count()[::cast]` or `[alias:]field[::cast].agg()[::cast]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Aggregate {
    pub alias: Option<String>,
    pub func: AggFunc,
    /// The field aggregated and its own cast; `None` for `count()`, which counts rows.
    pub field: Option<(Field, Option<String>)>,
    /// The cast of the aggregate's value.
    pub cast: Option<String>,
}

/// An embedded resource in `select`: `[alias:]name[!hint][!inner|!left](select)` or
/// `...name[!hint][!inner|!left](select)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Embed {
    pub name: String,
    pub alias: Option<String>,
    pub hint: Option<String>,
    /// `!inner`: only the rows this resource is found for.
    pub inner: bool,
    /// `...`: its columns go into the parent's row.
    pub spread: bool,
    pub select: Vec<SelectItem>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum QuantOp {
    Eq,
    Gte,
    Gt,
    Lte,
    Lt,
    Like,
    ILike,
    Match,
    IMatch,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SimpleOp {
    Neq,
    Cs,
    Cd,
    Ov,
    Sl,
    Sr,
    Nxr,
    Nxl,
    Adj,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quantifier {
    Any,
    All,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IsVal {
    Null,
    NotNull,
    True,
    False,
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FtsOp {
    Fts,
    Plain,
    Phrase,
    Websearch,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Operation {
    Quant(QuantOp, Option<Quantifier>, String),
    Simple(SimpleOp, String),
    In(Vec<String>),
    Is(IsVal),
    IsDistinct(String),
    Fts(FtsOp, Option<String>, String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OpExpr {
    pub negated: bool,
    pub op: Operation,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Filter {
    pub field: Field,
    pub expr: OpExpr,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LogicTree {
    Stmt(Filter),
    Expr {
        negated: bool,
        and: bool,
        children: Vec<LogicTree>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OrderTerm {
    Column {
        field: Field,
        desc: Option<bool>,
        nulls_first: Option<bool>,
    },
    /// `rel(col).desc`: ordering by a column of a to-one embedded resource.
    Embed {
        name: String,
        field: Field,
        desc: Option<bool>,
        nulls_first: Option<bool>,
    },
}

const QUANT_OPS: [(&str, QuantOp); 9] = [
    ("eq", QuantOp::Eq),
    ("gte", QuantOp::Gte),
    ("gt", QuantOp::Gt),
    ("lte", QuantOp::Lte),
    ("lt", QuantOp::Lt),
    ("like", QuantOp::Like),
    ("ilike", QuantOp::ILike),
    ("match", QuantOp::Match),
    ("imatch", QuantOp::IMatch),
];
const SIMPLE_OPS: [(&str, SimpleOp); 9] = [
    ("neq", SimpleOp::Neq),
    ("cs", SimpleOp::Cs),
    ("cd", SimpleOp::Cd),
    ("ov", SimpleOp::Ov),
    ("sl", SimpleOp::Sl),
    ("sr", SimpleOp::Sr),
    ("nxr", SimpleOp::Nxr),
    ("nxl", SimpleOp::Nxl),
    ("adj", SimpleOp::Adj),
];
const FTS_OPS: [(&str, FtsOp); 4] = [
    ("fts", FtsOp::Fts),
    ("plfts", FtsOp::Plain),
    ("phfts", FtsOp::Phrase),
    ("wfts", FtsOp::Websearch),
];
const OPERATOR: &str = "\"not\" or operator (eq, gt, ...)";

type R<T> = Result<T, ParseError>;

/// `select=`: the items, possibly none (PostgREST then selects `*`).
pub(crate) fn select(input: &str) -> R<Vec<SelectItem>> {
    let mut p = P::new(input);
    let items = p.forest()?;
    p.eof()?;
    Ok(items)
}

/// A filter's value, `[not.]op.value`, outside a logic tree: the value is the rest.
pub(crate) fn op_expr(input: &str) -> R<OpExpr> {
    let mut p = P::new(input);
    let e = p.op_expr(false)?;
    p.eof()?;
    Ok(e)
}

/// An `and`/`or` parameter: `op` is `and`, `or`, `not.and` or `not.or`, `value` its `(…)`.
/// PostgREST parses them glued together, and so counts columns.
pub(crate) fn logic_tree(op: &str, value: &str) -> R<LogicTree> {
    let glued = format!("{op}{value}");
    let mut p = P::new(&glued);
    let t = p.logic_tree()?;
    p.eof()?;
    Ok(t)
}

pub(crate) fn order(input: &str) -> R<Vec<OrderTerm>> {
    let mut p = P::new(input);
    let mut terms = vec![p.order_term()?];
    while p.eat(',') {
        terms.push(p.order_term()?);
    }
    p.eof()?;
    Ok(terms)
}

/// `columns=` and `on_conflict=`: field names separated by commas.
pub(crate) fn columns(input: &str) -> R<Vec<String>> {
    let mut p = P::new(input);
    let mut names = vec![p.field_name()?];
    loop {
        p.ws();
        if !p.eat(',') {
            break;
        }
        p.ws();
        names.push(p.field_name()?);
    }
    p.eof()?;
    Ok(names)
}

/// A filter's key: the embedding path (empty at the top level) and the field.
pub(crate) fn tree_path(input: &str) -> R<(Vec<String>, Field)> {
    let mut p = P::new(input);
    let mut names = vec![p.field_name()?];
    while p.eat('.') {
        names.push(p.field_name()?);
    }
    let json_path = p.json_path()?;
    p.eof()?;
    let name = names.pop().unwrap_or_default();
    Ok((names, Field { name, json_path }))
}
