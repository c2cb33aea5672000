//! The schema cache: what the tenant database exposes in `public`, loaded by one SQL
//! statement ([`SchemaCache::LOAD_SQL`]). Every identifier the planner writes into SQL comes
//! from here; a request naming anything else is refused. Relationships for resource
//! embedding are derived from its foreign keys and views (`relationships`).

mod lookup;
mod relationships;
mod view_keys;

use std::collections::{HashMap, HashSet};

use serde::Deserialize;

pub(crate) use relationships::{Cardinality, Relationship};
pub use relationships::{ForeignKey, ViewColumn};

/// Tables, views and functions of the exposed schema (`public`).
#[derive(Debug, Clone, Default)]
pub struct SchemaCache {
    tables: HashMap<String, Table>,
    functions: HashMap<String, Vec<Function>>,
    /// By origin table or view.
    relationships: HashMap<String, Vec<Relationship>>,
}

/// A table, view, materialized view or foreign table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub name: String,
    pub columns: Vec<Column>,
    /// In key order; empty for views and tables without a primary key.
    pub primary_key: Vec<String>,
    pub insertable: bool,
    pub updatable: bool,
    pub deletable: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    /// `format_type(atttypid, NULL)`: the base type without its modifier, so a value cast to
    /// it is never truncated (`character varying`, not `character varying(20)`).
    pub type_name: String,
    pub nullable: bool,
    pub has_default: bool,
    /// The default expression (`pg_get_expr`), for `Prefer: missing=default`; none for
    /// identity and generated columns.
    pub default: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Volatility {
    Immutable,
    Stable,
    Volatile,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Returns {
    Void,
    /// A base, domain, enum or array type.
    Scalar(String),
    /// A table's row type, a composite type, or `TABLE (…)`/`OUT` columns.
    Composite(Vec<Column>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Argument {
    /// Empty for an unnamed argument, which named notation cannot reach.
    pub name: String,
    pub type_name: String,
    /// False for the trailing arguments that have defaults.
    pub required: bool,
    pub variadic: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    /// Input arguments only, in order.
    pub args: Vec<Argument>,
    pub returns_set: bool,
    pub returns: Returns,
    /// The table or view whose rows the function returns (`RETURNS SETOF items`), which a
    /// call's `select` may embed from.
    pub returns_table: Option<String>,
    pub volatility: Volatility,
}

/// The cache's JSON could not be read, or named a type that is not a plain type expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError(pub String);

impl std::fmt::Display for SchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "schema cache: {}", self.0)
    }
}

impl std::error::Error for SchemaError {}

impl SchemaCache {
    /// The one statement that loads the cache: one row, one `text` column holding JSON.
    /// Run it in the tenant database, as the role the gateway connects with.
    pub const LOAD_SQL: &'static str = r#"SELECT json_build_object(
  'tables', coalesce((
    SELECT json_agg(json_build_object(
      'name', c.relname,
      'insertable', c.relkind IN ('r', 'p') OR (pg_relation_is_updatable(c.oid, true) & 8) = 8,
      'updatable', c.relkind IN ('r', 'p') OR (pg_relation_is_updatable(c.oid, true) & 4) = 4,
      'deletable', c.relkind IN ('r', 'p') OR (pg_relation_is_updatable(c.oid, true) & 16) = 16,
      'columns', (
        SELECT coalesce(json_agg(json_build_object(
          'name', a.attname,
          'type', format_type(a.atttypid, NULL),
          'nullable', NOT a.attnotnull,
          'has_default', a.atthasdef OR a.attidentity <> '' OR a.attgenerated <> '',
          'default', CASE WHEN a.attgenerated = '' THEN pg_get_expr(d.adbin, d.adrelid) END
        ) ORDER BY a.attnum), '[]')
        FROM pg_attribute a
        LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
      'primary_key', (
        SELECT coalesce(json_agg(a.attname ORDER BY k.ord), '[]')
        FROM pg_index i
        CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
        JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
        WHERE i.indrelid = c.oid AND i.indisprimary)
    ) ORDER BY c.relname)
    FROM pg_class c
    WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'v', 'm', 'f', 'p')
  ), '[]'),
  'functions', coalesce((
    SELECT json_agg(json_build_object(
      'name', p.proname,
      'volatility', p.provolatile,
      'returns_set', p.proretset,
      'return_type', format_type(p.prorettype, NULL),
      'return_kind', CASE
        WHEN p.prorettype = 'void'::regtype THEN 'void'
        WHEN t.typrelid <> 0 THEN 'composite'
        WHEN p.prorettype = 'record'::regtype THEN 'record'
        WHEN t.typtype = 'p' THEN 'pseudo'
        ELSE 'scalar' END,
      'return_columns', (
        SELECT json_agg(json_build_object('name', a.attname, 'type', format_type(a.atttypid, NULL))
          ORDER BY a.attnum)
        FROM pg_attribute a
        WHERE a.attrelid = t.typrelid AND t.typrelid <> 0 AND a.attnum > 0 AND NOT a.attisdropped),
      'args', (
        SELECT coalesce(json_agg(json_build_object(
          'name', coalesce(x.name, ''), 'type', format_type(x.typ, NULL), 'mode', x.mode
        ) ORDER BY x.ord), '[]')
        FROM unnest(
          coalesce(p.proallargtypes, p.proargtypes::oid[]),
          coalesce(p.proargmodes, array_fill('i'::"char", ARRAY[p.pronargs::int])),
          p.proargnames
        ) WITH ORDINALITY AS x(typ, mode, name, ord)),
      'defaults', p.pronargdefaults,
      'return_table', (
        SELECT r.relname FROM pg_class r
        WHERE r.oid = t.typrelid AND r.relnamespace = 'public'::regnamespace
          AND r.relkind IN ('r', 'v', 'm', 'f', 'p'))
    ) ORDER BY p.proname, p.oid)
    FROM pg_proc p
    JOIN pg_type t ON t.oid = p.prorettype
    WHERE p.pronamespace = 'public'::regnamespace AND p.prokind = 'f'
  ), '[]'),
  'relations', coalesce((
    SELECT json_agg(json_build_object(
      'oid', c.oid::int8,
      'name', c.relname,
      'view', c.relkind IN ('v', 'm'),
      'columns', (
        SELECT json_object_agg(a.attnum, a.attname)
        FROM pg_attribute a
        WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
      'definition', (
        SELECT r.ev_action::text FROM pg_rewrite r
        WHERE r.ev_class = c.oid AND r.rulename = '_RETURN' AND c.relkind IN ('v', 'm'))
    ) ORDER BY c.relname)
    FROM pg_class c
    WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'v', 'm', 'f', 'p')
  ), '[]'),
  'foreign_keys', coalesce((
    SELECT json_agg(json_build_object(
      'name', k.conname,
      'table', t.relname,
      'columns', (
        SELECT json_agg(a.attname ORDER BY x.ord)
        FROM unnest(k.conkey) WITH ORDINALITY AS x(attnum, ord)
        JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = x.attnum),
      'foreign_table', f.relname,
      'foreign_columns', (
        SELECT json_agg(a.attname ORDER BY x.ord)
        FROM unnest(k.confkey) WITH ORDINALITY AS x(attnum, ord)
        JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = x.attnum),
      'one_to_one', EXISTS (
        SELECT 1 FROM pg_constraint u
        WHERE u.conrelid = k.conrelid AND u.contype IN ('p', 'u')
          AND (SELECT array_agg(x ORDER BY x) FROM unnest(u.conkey) AS x)
            = (SELECT array_agg(x ORDER BY x) FROM unnest(k.conkey) AS x))
    ) ORDER BY t.relname, k.conname)
    FROM pg_constraint k
    JOIN pg_class t ON t.oid = k.conrelid
    JOIN pg_class f ON f.oid = k.confrelid
    WHERE k.contype = 'f' AND k.conparentid = 0
      AND t.relnamespace = 'public'::regnamespace AND f.relnamespace = 'public'::regnamespace
  ), '[]')
)::text"#;

    /// Reads the text [`Self::LOAD_SQL`] returned. Functions PostgREST cannot call either
    /// (returning `trigger`, a pseudo-type, or `SETOF record` without columns) are left out.
    ///
    /// # Errors
    /// [`SchemaError`] when the text is not the JSON `LOAD_SQL` builds, or a type name is not
    /// a plain type expression (identifiers, dots, spaces, `[]`): type names are written into
    /// SQL as casts, so anything else is refused rather than trusted.
    pub fn from_json(text: &str) -> Result<SchemaCache, SchemaError> {
        let raw: RawCache = serde_json::from_str(text).map_err(|e| SchemaError(e.to_string()))?;
        let mut cache = SchemaCache::default();
        for t in raw.tables {
            let columns = t
                .columns
                .into_iter()
                .map(RawColumn::into_column)
                .collect::<Result<_, _>>()?;
            cache.tables.insert(
                t.name.clone(),
                Table {
                    name: t.name,
                    columns,
                    primary_key: t.primary_key,
                    insertable: t.insertable,
                    updatable: t.updatable,
                    deletable: t.deletable,
                },
            );
        }
        for f in raw.functions {
            if let Some(function) = f.into_function()? {
                cache
                    .functions
                    .entry(function.name.clone())
                    .or_default()
                    .push(function);
            }
        }
        let (views, view_columns) = view_keys::traced(&raw.relations);
        cache.relationships =
            relationships::derive(&cache.tables, &views, &raw.foreign_keys, &view_columns);
        Ok(cache)
    }

    /// Builds a cache from parts (tests, or a gateway that loads the catalog its own way).
    #[must_use]
    pub fn from_parts(tables: Vec<Table>, functions: Vec<Function>) -> SchemaCache {
        let mut cache = SchemaCache::default();
        for t in tables {
            cache.tables.insert(t.name.clone(), t);
        }
        for f in functions {
            cache.functions.entry(f.name.clone()).or_default().push(f);
        }
        cache
    }

    /// The cache with the relationships `foreign_keys` and `view_columns` give, replacing
    /// any it had; a view with no traced column is not known to be a view.
    #[must_use]
    pub fn with_relationships(
        mut self,
        foreign_keys: &[ForeignKey],
        view_columns: &[ViewColumn],
    ) -> SchemaCache {
        let views: HashSet<String> = view_columns.iter().map(|v| v.view.clone()).collect();
        self.relationships =
            relationships::derive(&self.tables, &views, foreign_keys, view_columns);
        self
    }

    #[must_use]
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.get(name)
    }

    /// Every overload of the function `name`.
    #[must_use]
    pub fn functions(&self, name: &str) -> &[Function] {
        self.functions.get(name).map_or(&[], Vec::as_slice)
    }
}

impl Table {
    #[must_use]
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }
}

#[derive(Deserialize)]
struct RawCache {
    tables: Vec<RawTable>,
    functions: Vec<RawFunction>,
    #[serde(default)]
    relations: Vec<view_keys::RawRelation>,
    #[serde(default)]
    foreign_keys: Vec<ForeignKey>,
}

#[derive(Deserialize)]
struct RawTable {
    name: String,
    insertable: bool,
    updatable: bool,
    deletable: bool,
    columns: Vec<RawColumn>,
    primary_key: Vec<String>,
}

#[derive(Deserialize)]
struct RawColumn {
    name: String,
    #[serde(rename = "type")]
    type_name: String,
    #[serde(default = "yes")]
    nullable: bool,
    #[serde(default)]
    has_default: bool,
    #[serde(default)]
    default: Option<String>,
}

fn yes() -> bool {
    true
}

impl RawColumn {
    fn into_column(self) -> Result<Column, SchemaError> {
        Ok(Column {
            type_name: checked_type(self.type_name)?,
            name: self.name,
            nullable: self.nullable,
            has_default: self.has_default,
            default: self.default,
        })
    }
}

#[derive(Deserialize)]
struct RawArg {
    name: String,
    #[serde(rename = "type")]
    type_name: String,
    mode: String,
}

#[derive(Deserialize)]
struct RawFunction {
    name: String,
    volatility: String,
    returns_set: bool,
    return_type: String,
    return_kind: String,
    return_columns: Option<Vec<RawColumn>>,
    args: Vec<RawArg>,
    defaults: usize,
    #[serde(default)]
    return_table: Option<String>,
}

impl RawFunction {
    fn into_function(self) -> Result<Option<Function>, SchemaError> {
        let (inputs, outputs): (Vec<RawArg>, Vec<RawArg>) = self
            .args
            .into_iter()
            .partition(|a| matches!(a.mode.as_str(), "i" | "b" | "v"));
        let outputs: Vec<_> = outputs
            .into_iter()
            .filter(|a| a.mode != "i" && a.mode != "v")
            .map(|a| RawColumn {
                name: a.name,
                type_name: a.type_name,
                nullable: true,
                has_default: false,
                default: None,
            })
            .collect();
        let returns = match self.return_kind.as_str() {
            "void" => Returns::Void,
            "scalar" => Returns::Scalar(checked_type(self.return_type)?),
            "composite" => Returns::Composite(columns(self.return_columns.unwrap_or_default())?),
            "record" if !outputs.is_empty() => {
                // INOUT arguments are both inputs and result columns.
                let mut cols = columns(outputs)?;
                for a in inputs.iter().filter(|a| a.mode == "b") {
                    cols.push(Column {
                        name: a.name.clone(),
                        type_name: checked_type(a.type_name.clone())?,
                        nullable: true,
                        has_default: false,
                        default: None,
                    });
                }
                Returns::Composite(cols)
            }
            _ => return Ok(None),
        };
        let first_optional = inputs.len().saturating_sub(self.defaults);
        let args = inputs
            .into_iter()
            .enumerate()
            .map(|(i, a)| {
                Ok(Argument {
                    required: i < first_optional,
                    variadic: a.mode == "v",
                    type_name: checked_type(a.type_name)?,
                    name: a.name,
                })
            })
            .collect::<Result<_, SchemaError>>()?;
        let volatility = match self.volatility.as_str() {
            "i" => Volatility::Immutable,
            "s" => Volatility::Stable,
            _ => Volatility::Volatile,
        };
        Ok(Some(Function {
            name: self.name,
            args,
            returns_set: self.returns_set,
            returns,
            returns_table: self.return_table,
            volatility,
        }))
    }
}

fn columns(raw: Vec<RawColumn>) -> Result<Vec<Column>, SchemaError> {
    raw.into_iter().map(RawColumn::into_column).collect()
}

/// `format_type` output is a plain type expression: quoted or bare identifiers, dots,
/// spaces and `[]`. Anything else (a `;`, a quote left open, a `$` that could open a
/// dollar-quoted string) is refused, since type names are written into SQL as casts.
fn checked_type(t: String) -> Result<String, SchemaError> {
    let mut chars = t.chars().peekable();
    let mut ok = !t.trim().is_empty();
    while let Some(c) = chars.next() {
        if c == '"' {
            loop {
                match chars.next() {
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                    }
                    Some('"') => break,
                    Some(_) => {}
                    None => {
                        ok = false;
                        break;
                    }
                }
            }
        } else if !(c.is_alphanumeric() || "_ .[]".contains(c)) {
            ok = false;
        }
    }
    if ok {
        Ok(t)
    } else {
        Err(SchemaError(format!("unexpected type name {t:?}")))
    }
}

#[cfg(test)]
mod tests;
