//! Relationships between the exposed schema's tables and views, derived from foreign keys as
//! PostgREST derives them (`PostgREST.SchemaCache`): each foreign key is a many-to-one, or a
//! one-to-one when its columns are a primary key or unique constraint of their table; views
//! whose columns trace back to a key's columns get the same relationship; a table with
//! foreign keys to two tables, whose columns lie within its primary key, is a junction for a
//! many-to-many between them; every many-to-one has its one-to-many inverse. A function
//! taking a table's or view's row and returning another's rows (PostgREST's computed
//! relationship) is one more, and replaces the foreign keys' relationships to a table of
//! its name.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use serde::Deserialize;

use super::Table;

/// A foreign key of the exposed schema, both ends in it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ForeignKey {
    /// The constraint's name (`messages_channel_id_fkey`).
    pub name: String,
    pub table: String,
    /// In key order, paired with `foreign_columns`.
    pub columns: Vec<String>,
    pub foreign_table: String,
    pub foreign_columns: Vec<String>,
    /// The columns are exactly a primary key or unique constraint of `table`.
    pub one_to_one: bool,
}

/// A view's column that is a plain reference to a table's column (followed through views).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewColumn {
    pub view: String,
    pub column: String,
    pub table: String,
    pub table_column: String,
}

/// A function of the exposed schema whose one argument is a table's or view's row type and
/// which returns the rows of a table or view of that schema (`RETURNS SETOF messages`, or
/// one `messages` row): PostgREST embeds it as `table?select=function(*)`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ComputedRelationship {
    pub function: String,
    /// The table or view whose row is its argument.
    pub table: String,
    /// The table or view whose rows it returns.
    pub foreign_table: String,
    /// It returns one row (not a set, or a set declared `ROWS 1`): a to-one embedding.
    pub single: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Junction {
    pub table: String,
    pub constraint1: String,
    pub constraint2: String,
    /// `(origin column, junction column)`.
    pub source: Vec<(String, String)>,
    /// `(target column, junction column)`.
    pub target: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cardinality {
    OneToMany,
    ManyToOne,
    /// `parent`: the origin is the referenced side.
    OneToOne {
        parent: bool,
    },
    ManyToMany(Junction),
    /// A function of the origin's row returns the rows: no columns join them.
    Computed {
        function: String,
        single: bool,
    },
}

impl Cardinality {
    fn rank(&self) -> u8 {
        match self {
            Cardinality::OneToMany => 0,
            Cardinality::ManyToOne => 1,
            Cardinality::OneToOne { .. } => 2,
            Cardinality::ManyToMany(_) => 3,
            Cardinality::Computed { .. } => 4,
        }
    }
}

/// A way to embed `foreign_table` in `table`'s rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Relationship {
    pub table: String,
    pub foreign_table: String,
    pub is_self: bool,
    pub cardinality: Cardinality,
    /// The foreign key's name; empty for many-to-many and computed relationships.
    pub constraint: String,
    /// `(column of table, column of foreign_table)`; empty for many-to-many and computed
    /// relationships.
    pub columns: Vec<(String, String)>,
    pub table_is_view: bool,
    pub foreign_is_view: bool,
}

impl Relationship {
    pub fn to_one(&self) -> bool {
        matches!(
            self.cardinality,
            Cardinality::ManyToOne
                | Cardinality::OneToOne { .. }
                | Cardinality::Computed { single: true, .. }
        )
    }

    /// PostgREST's order (the derived `Ord` of its `Relationship`), which is the order of the
    /// candidates an ambiguous embedding lists: its computed relationships, another
    /// constructor, come after the rest, by function.
    fn order(&self, other: &Self) -> Ordering {
        fn function(r: &Relationship) -> Option<&str> {
            match &r.cardinality {
                Cardinality::Computed { function, .. } => Some(function),
                _ => None,
            }
        }
        match (function(self), function(other)) {
            (Some(a), Some(b)) => return a.cmp(b),
            (Some(_), None) => return Ordering::Greater,
            (None, Some(_)) => return Ordering::Less,
            (None, None) => {}
        }
        let junction = |r: &Self| match &r.cardinality {
            Cardinality::ManyToMany(j) => Some((
                j.table.clone(),
                j.constraint1.clone(),
                j.constraint2.clone(),
                j.source.clone(),
                j.target.clone(),
            )),
            _ => None,
        };
        let parent = |r: &Self| matches!(r.cardinality, Cardinality::OneToOne { parent: true });
        (&self.foreign_table, self.is_self, self.cardinality.rank())
            .cmp(&(
                &other.foreign_table,
                other.is_self,
                other.cardinality.rank(),
            ))
            .then_with(|| junction(self).cmp(&junction(other)))
            .then_with(|| {
                (&self.constraint, &self.columns).cmp(&(&other.constraint, &other.columns))
            })
            .then_with(|| parent(self).cmp(&parent(other)))
            .then_with(|| {
                (self.table_is_view, self.foreign_is_view)
                    .cmp(&(other.table_is_view, other.foreign_is_view))
            })
    }
}

fn swap(cols: &[(String, String)]) -> Vec<(String, String)> {
    cols.iter().map(|(a, b)| (b.clone(), a.clone())).collect()
}

/// For each view, which of its columns trace to each `(table, column)`, in column order.
type Traces<'a> = HashMap<&'a str, HashMap<(&'a str, &'a str), Vec<&'a str>>>;

/// Every way to name `cols` of `table` through `view`'s columns (a column may appear twice
/// in a view): none when one of them is missing.
fn through_view(traces: &Traces<'_>, view: &str, table: &str, cols: &[&str]) -> Vec<Vec<String>> {
    let Some(t) = traces.get(view) else {
        return Vec::new();
    };
    let mut combos: Vec<Vec<String>> = vec![Vec::new()];
    for c in cols {
        let Some(names) = t.get(&(table, *c)) else {
            return Vec::new();
        };
        combos = combos
            .into_iter()
            .flat_map(|prefix| {
                names.iter().map(move |n| {
                    let mut next = prefix.clone();
                    next.push((*n).to_owned());
                    next
                })
            })
            .collect();
    }
    combos
}

/// All relationships, by origin table or view, each list in PostgREST's order.
pub(crate) fn derive(
    tables: &HashMap<String, Table>,
    views: &HashSet<String>,
    fks: &[ForeignKey],
    view_columns: &[ViewColumn],
) -> HashMap<String, Vec<Relationship>> {
    let mut traces: Traces<'_> = HashMap::new();
    for vc in view_columns {
        traces
            .entry(vc.view.as_str())
            .or_default()
            .entry((vc.table.as_str(), vc.table_column.as_str()))
            .or_default()
            .push(vc.column.as_str());
    }
    let mut view_names: Vec<&str> = traces.keys().copied().collect();
    view_names.sort_unstable();
    let is_view = |t: &str| views.contains(t);

    let mut rels = Vec::new();
    for fk in fks {
        if !tables.contains_key(&fk.table) || !tables.contains_key(&fk.foreign_table) {
            continue;
        }
        let cardinality = if fk.one_to_one {
            Cardinality::OneToOne { parent: false }
        } else {
            Cardinality::ManyToOne
        };
        let columns: Vec<(String, String)> = fk
            .columns
            .iter()
            .cloned()
            .zip(fk.foreign_columns.iter().cloned())
            .collect();
        let base = Relationship {
            table: fk.table.clone(),
            foreign_table: fk.foreign_table.clone(),
            is_self: fk.table == fk.foreign_table,
            cardinality,
            constraint: fk.name.clone(),
            columns,
            table_is_view: false,
            foreign_is_view: false,
        };
        let own: Vec<&str> = fk.columns.iter().map(String::as_str).collect();
        let referenced: Vec<&str> = fk.foreign_columns.iter().map(String::as_str).collect();
        let mut from_views = Vec::new();
        let mut to_views = Vec::new();
        for v in &view_names {
            for names in through_view(&traces, v, &fk.table, &own) {
                from_views.push(((*v).to_owned(), names));
            }
            for names in through_view(&traces, v, &fk.foreign_table, &referenced) {
                to_views.push(((*v).to_owned(), names));
            }
        }
        let with = |table: &str, cols: Vec<(String, String)>, ft: &str, self_: bool| Relationship {
            table: table.to_owned(),
            foreign_table: ft.to_owned(),
            is_self: self_,
            columns: cols,
            table_is_view: is_view(table),
            foreign_is_view: is_view(ft),
            ..base.clone()
        };
        let mut derived = Vec::new();
        for (v, names) in &from_views {
            let cols = names
                .iter()
                .cloned()
                .zip(fk.foreign_columns.iter().cloned());
            derived.push(with(v, cols.collect(), &fk.foreign_table, false));
        }
        for (w, names) in &to_views {
            let cols = fk.columns.iter().cloned().zip(names.iter().cloned());
            derived.push(with(&fk.table, cols.collect(), w, false));
        }
        for (v, vnames) in &from_views {
            for (w, wnames) in &to_views {
                let cols = vnames.iter().cloned().zip(wnames.iter().cloned());
                derived.push(with(v, cols.collect(), w, v == w));
            }
        }
        rels.push(base);
        rels.extend(derived);
    }

    let pk = |t: &str| -> HashSet<String> {
        if let Some(table) = tables.get(t)
            && !is_view(t)
        {
            return table.primary_key.iter().cloned().collect();
        }
        view_primary_key(tables, traces.get(t))
    };
    // Junction candidates: a table's many-to-ones, paired with each other.
    let mut by_table: HashMap<&str, Vec<&Relationship>> = HashMap::new();
    for r in rels
        .iter()
        .filter(|r| r.cardinality == Cardinality::ManyToOne)
    {
        by_table.entry(r.table.as_str()).or_default().push(r);
    }
    let mut m2m = Vec::new();
    let pairs = by_table.values().flat_map(|rs| {
        rs.iter()
            .flat_map(move |r1| rs.iter().map(move |r2| (*r1, *r2)))
    });
    for (r1, r2) in pairs {
        if r1.constraint == r2.constraint {
            continue;
        }
        let key = pk(&r1.table);
        let within = r1
            .columns
            .iter()
            .chain(&r2.columns)
            .all(|(c, _)| key.contains(c));
        if within {
            m2m.push(Relationship {
                table: r1.foreign_table.clone(),
                foreign_table: r2.foreign_table.clone(),
                is_self: r1.foreign_table == r2.foreign_table,
                cardinality: Cardinality::ManyToMany(Junction {
                    table: r1.table.clone(),
                    constraint1: r1.constraint.clone(),
                    constraint2: r2.constraint.clone(),
                    source: swap(&r1.columns),
                    target: swap(&r2.columns),
                }),
                constraint: String::new(),
                columns: Vec::new(),
                table_is_view: r1.foreign_is_view,
                foreign_is_view: r2.foreign_is_view,
            });
        }
    }

    let mut inverse = Vec::new();
    for r in &rels {
        let cardinality = match r.cardinality {
            Cardinality::ManyToOne => Cardinality::OneToMany,
            Cardinality::OneToOne { parent } => Cardinality::OneToOne { parent: !parent },
            _ => continue,
        };
        inverse.push(Relationship {
            table: r.foreign_table.clone(),
            foreign_table: r.table.clone(),
            is_self: r.is_self,
            cardinality,
            constraint: r.constraint.clone(),
            columns: swap(&r.columns),
            table_is_view: r.foreign_is_view,
            foreign_is_view: r.table_is_view,
        });
    }

    let mut by_origin: HashMap<String, Vec<Relationship>> = HashMap::new();
    for r in rels.into_iter().chain(m2m).chain(inverse) {
        by_origin.entry(r.table.clone()).or_default().push(r);
    }
    for list in by_origin.values_mut() {
        list.sort_by(Relationship::order);
        list.dedup();
    }
    by_origin
}

/// `by_origin` with the computed relationships whose two ends are among `tables`, as
/// PostgREST's `getOverrideRelationshipsMap` adds them: one replaces every relationship of
/// its origin to a table named as its function (so a function can redefine what
/// `messages?select=users(*)` embeds), and the others stay.
pub(crate) fn with_computed(
    mut by_origin: HashMap<String, Vec<Relationship>>,
    tables: &HashMap<String, Table>,
    computed: &[ComputedRelationship],
) -> HashMap<String, Vec<Relationship>> {
    for c in computed {
        if !tables.contains_key(&c.table) || !tables.contains_key(&c.foreign_table) {
            continue;
        }
        let list = by_origin.entry(c.table.clone()).or_default();
        list.retain(|r| {
            matches!(r.cardinality, Cardinality::Computed { .. }) || r.foreign_table != c.function
        });
        list.push(Relationship {
            table: c.table.clone(),
            foreign_table: c.foreign_table.clone(),
            is_self: c.table == c.foreign_table,
            cardinality: Cardinality::Computed {
                function: c.function.clone(),
                single: c.single,
            },
            constraint: String::new(),
            columns: Vec::new(),
            table_is_view: false,
            foreign_is_view: false,
        });
        list.sort_by(Relationship::order);
    }
    by_origin
}

/// A view's primary key, as PostgREST gives views one: the view's columns that name every
/// column of a table's primary key (the first such column when the view repeats one).
fn view_primary_key(
    tables: &HashMap<String, Table>,
    traces: Option<&HashMap<(&str, &str), Vec<&str>>>,
) -> HashSet<String> {
    let Some(traces) = traces else {
        return HashSet::new();
    };
    let mut bases: Vec<&str> = traces.keys().map(|(t, _)| *t).collect();
    bases.sort_unstable();
    bases.dedup();
    let mut key = HashSet::new();
    for base in bases {
        let Some(table) = tables.get(base) else {
            continue;
        };
        let names: Option<Vec<&str>> = table
            .primary_key
            .iter()
            .map(|c| {
                traces
                    .get(&(base, c.as_str()))
                    .and_then(|n| n.first().copied())
            })
            .collect();
        if let Some(names) = names
            && !names.is_empty()
        {
            key.extend(names.into_iter().map(str::to_owned));
        }
    }
    key
}
