//! The statement that loads the cache, and the reading of the JSON it builds.

use std::collections::HashMap;

use serde::Deserialize;

use super::load_functions::RawFunction;
use super::view_keys::{self, RawRelation};
use super::{Column, Computed, ComputedRelationship, ForeignKey, SchemaCache, Table};

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
    /// `$1` is [`Self::load_param`] of the exposed schemas. Run it in the tenant database, as
    /// the role the gateway connects with.
    pub const LOAD_SQL: &'static str = r#"WITH pgrst_exposed AS (
  SELECT n.oid, n.nspname
  FROM json_array_elements_text($1::text::json) AS s(name)
  JOIN pg_namespace n ON n.nspname = s.name
)
SELECT json_build_object(
  'schemas', $1::text::json,
  'tables', coalesce((
    SELECT json_agg(json_build_object(
      'schema', n.nspname,
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
          'default', CASE
            WHEN a.attgenerated <> '' THEN NULL
            WHEN a.attidentity = 'd' THEN (
              SELECT format('nextval(%L)', s.objid::regclass)
              FROM pg_depend s
              WHERE s.refclassid = 'pg_class'::regclass AND s.refobjid = c.oid
                AND s.refobjsubid = a.attnum AND s.classid = 'pg_class'::regclass
                AND s.deptype = 'i'
              LIMIT 1)
            WHEN d.adbin IS NOT NULL THEN pg_get_expr(d.adbin, d.adrelid)
            ELSE pg_get_expr(t.typdefaultbin, 0) END
        ) ORDER BY a.attnum), '[]')
        FROM pg_attribute a
        JOIN pg_type t ON t.oid = a.atttypid
        LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
      'primary_key', (
        SELECT coalesce(json_agg(a.attname ORDER BY k.ord), '[]')
        FROM pg_index i
        CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
        JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
        WHERE i.indrelid = c.oid AND i.indisprimary),
      'computed', (
        SELECT coalesce(json_agg(json_build_object(
          'name', p.proname, 'type', format_type(p.prorettype, NULL)
        ) ORDER BY p.proname), '[]')
        FROM pg_proc p
        JOIN pg_type r ON r.oid = p.prorettype
        WHERE p.pronamespace = c.relnamespace AND p.prokind = 'f' AND p.pronargs = 1
          AND p.proargtypes[0] = c.reltype AND NOT p.proretset AND r.typtype <> 'p')
    ) ORDER BY n.nspname, c.relname)
    FROM pg_class c
    JOIN pgrst_exposed n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'v', 'm', 'f', 'p')
  ), '[]'),
  'functions', coalesce((
    SELECT json_agg(json_build_object(
      'schema', pn.nspname,
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
      'return_table', (
        SELECT rc.relname FROM pg_class rc
        WHERE rc.oid = t.typrelid AND rc.relnamespace = p.pronamespace
          AND rc.relkind IN ('r', 'v', 'm', 'f', 'p')),
      'args', (
        SELECT coalesce(json_agg(json_build_object(
          'name', coalesce(x.name, ''), 'type', format_type(x.typ, NULL), 'mode', x.mode
        ) ORDER BY x.ord), '[]')
        FROM unnest(
          coalesce(p.proallargtypes, p.proargtypes::oid[]),
          coalesce(p.proargmodes, array_fill('i'::"char", ARRAY[p.pronargs::int])),
          p.proargnames
        ) WITH ORDINALITY AS x(typ, mode, name, ord)),
      'defaults', p.pronargdefaults
    ) ORDER BY pn.nspname, p.proname, p.oid)
    FROM pg_proc p
    JOIN pgrst_exposed pn ON pn.oid = p.pronamespace
    JOIN pg_type t ON t.oid = p.prorettype
    WHERE p.prokind = 'f'
  ), '[]'),
  'relations', coalesce((
    SELECT json_agg(json_build_object(
      'schema', n.nspname,
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
    ) ORDER BY n.nspname, c.relname)
    FROM pg_class c
    JOIN pgrst_exposed n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'v', 'm', 'f', 'p')
  ), '[]'),
  'foreign_keys', coalesce((
    SELECT json_agg(json_build_object(
      'schema', n.nspname,
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
    ) ORDER BY n.nspname, t.relname, k.conname)
    FROM pg_constraint k
    JOIN pg_class t ON t.oid = k.conrelid
    JOIN pg_class f ON f.oid = k.confrelid
    JOIN pgrst_exposed n ON n.oid = t.relnamespace
    WHERE k.contype = 'f' AND k.conparentid = 0 AND f.relnamespace = t.relnamespace
  ), '[]'),
  'computed_relationships', coalesce((
    SELECT json_agg(json_build_object(
      'schema', n.nspname,
      'function', p.proname,
      'table', a.relname,
      'foreign_table', r.relname,
      'single', NOT p.proretset OR p.prorows = 1
    ) ORDER BY n.nspname, p.proname, a.relname)
    FROM pg_proc p
    JOIN pgrst_exposed n ON n.oid = p.pronamespace
    JOIN pg_class a ON a.reltype = p.proargtypes[0] AND a.relnamespace = p.pronamespace
    JOIN pg_class r ON r.reltype = p.prorettype AND r.relnamespace = p.pronamespace
    WHERE p.prokind = 'f' AND p.pronargs = 1
      AND a.relkind IN ('r', 'v', 'm', 'f', 'p') AND r.relkind IN ('r', 'v', 'm', 'f', 'p')
  ), '[]')
)::text"#;

    /// [`Self::LOAD_SQL`]'s one parameter: the exposed schemas, the default first, as the
    /// JSON array of their names.
    #[must_use]
    pub fn load_param<S: AsRef<str>>(schemas: &[S]) -> String {
        let names: Vec<&str> = schemas.iter().map(AsRef::as_ref).collect();
        serde_json::to_string(&names).unwrap_or_else(|_| "[]".to_owned())
    }

    /// Reads the text [`Self::LOAD_SQL`] returned. Functions PostgREST cannot call either
    /// (returning `trigger`, a pseudo-type, or `SETOF record` without columns; an unnamed
    /// argument other than the only one, of a type a raw body can be) are left out.
    ///
    /// # Errors
    /// [`SchemaError`] when the text is not the JSON `LOAD_SQL` builds, or a type name is not
    /// a plain type expression (identifiers, dots, spaces, `[]`): type names are written into
    /// SQL as casts, so anything else is refused rather than trusted.
    pub fn from_json(text: &str) -> Result<SchemaCache, SchemaError> {
        let raw: RawCache = serde_json::from_str(text).map_err(|e| SchemaError(e.to_string()))?;
        let mut cache = SchemaCache::default().exposing(raw.schemas);
        for t in raw.tables {
            let columns = t
                .columns
                .into_iter()
                .map(RawColumn::into_column)
                .collect::<Result<_, _>>()?;
            let computed = t
                .computed
                .into_iter()
                .map(|c| {
                    Ok(Computed {
                        name: c.name,
                        type_name: checked_type(c.type_name)?,
                    })
                })
                .collect::<Result<_, SchemaError>>()?;
            cache.insert_table(Table {
                schema: t.schema,
                name: t.name,
                columns,
                primary_key: t.primary_key,
                insertable: t.insertable,
                updatable: t.updatable,
                deletable: t.deletable,
                computed,
            });
        }
        for f in raw.functions {
            if let Some(function) = f.into_function()? {
                cache.insert_function(function);
            }
        }
        // Relationships are a schema's own: both ends of a foreign key in it.
        let mut relations: HashMap<String, Vec<RawRelation>> = HashMap::new();
        for r in raw.relations {
            relations.entry(r.schema).or_default().push(r.relation);
        }
        let mut keys: HashMap<String, Vec<ForeignKey>> = HashMap::new();
        for k in raw.foreign_keys {
            keys.entry(k.schema).or_default().push(k.key);
        }
        let mut computed: HashMap<String, Vec<ComputedRelationship>> = HashMap::new();
        for c in raw.computed_relationships {
            computed.entry(c.schema).or_default().push(c.relationship);
        }
        for schema in cache.schemas.clone() {
            let (views, view_columns) =
                view_keys::traced(relations.get(&schema).map_or(&[], Vec::as_slice));
            let fks = keys.get(&schema).map_or(&[][..], Vec::as_slice);
            let functions = computed.get(&schema).map_or(&[][..], Vec::as_slice);
            cache.derive(&schema, &views, fks, &view_columns, functions);
        }
        Ok(cache)
    }
}

pub(super) fn public() -> String {
    "public".to_owned()
}

#[derive(Deserialize)]
struct RawCache {
    #[serde(default)]
    schemas: Vec<String>,
    tables: Vec<RawTable>,
    functions: Vec<RawFunction>,
    #[serde(default)]
    relations: Vec<InSchema>,
    #[serde(default)]
    foreign_keys: Vec<InSchemaKey>,
    #[serde(default)]
    computed_relationships: Vec<InSchemaComputed>,
}

/// A computed relationship as `LOAD_SQL` lists it: the function, its argument's relation
/// and the relation it returns are all of this schema.
#[derive(Deserialize)]
struct InSchemaComputed {
    schema: String,
    #[serde(flatten)]
    relationship: ComputedRelationship,
}

/// A relation as `LOAD_SQL` lists it, with its schema.
#[derive(Deserialize)]
struct InSchema {
    #[serde(default = "public")]
    schema: String,
    #[serde(flatten)]
    relation: RawRelation,
}

/// A foreign key as `LOAD_SQL` lists it, with the schema of both its ends.
#[derive(Deserialize)]
struct InSchemaKey {
    #[serde(default = "public")]
    schema: String,
    #[serde(flatten)]
    key: ForeignKey,
}

#[derive(Deserialize)]
struct RawTable {
    #[serde(default = "public")]
    schema: String,
    name: String,
    insertable: bool,
    updatable: bool,
    deletable: bool,
    columns: Vec<RawColumn>,
    primary_key: Vec<String>,
    #[serde(default)]
    computed: Vec<RawComputed>,
}

#[derive(Deserialize)]
struct RawComputed {
    name: String,
    #[serde(rename = "type")]
    type_name: String,
}

#[derive(Deserialize)]
pub(super) struct RawColumn {
    pub name: String,
    #[serde(rename = "type")]
    pub type_name: String,
    #[serde(default = "yes")]
    pub nullable: bool,
    #[serde(default)]
    pub has_default: bool,
    #[serde(default)]
    pub default: Option<String>,
}

fn yes() -> bool {
    true
}

impl RawColumn {
    pub(super) fn into_column(self) -> Result<Column, SchemaError> {
        Ok(Column {
            type_name: checked_type(self.type_name)?,
            name: self.name,
            nullable: self.nullable,
            has_default: self.has_default,
            default: self.default,
        })
    }
}

/// `format_type` output is a plain type expression: quoted or bare identifiers, dots,
/// spaces and `[]`. Anything else (a `;`, a quote left open, a `$` that could open a
/// dollar-quoted string) is refused, since type names are written into SQL as casts.
pub(super) fn checked_type(t: String) -> Result<String, SchemaError> {
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
