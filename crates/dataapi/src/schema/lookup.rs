//! Which relationship an embedding names, as PostgREST's `findRel` decides: the target is a
//! table or view (or, deprecated but kept, a foreign key's name or its one column), and the
//! hint a foreign key's name, one of its columns, or a many-to-many's junction table. None
//! is 400 PGRST200, more than one 300 PGRST201, with PostgREST's details and hint. A
//! computed relationship is named by its function.

use serde_json::{Value, json};

use super::SchemaCache;
use super::relationships::{Cardinality, Relationship};
use crate::error::RestError;
use crate::fuzzy;

/// The one column of a single-column foreign key: the origin's (`own`) or the target's.
fn single(rel: &Relationship, own: bool) -> Option<&str> {
    match (&rel.cardinality, rel.columns.as_slice()) {
        (Cardinality::ManyToMany(_), _) => None,
        (_, [(c, f)]) => Some(if own { c } else { f }),
        _ => None,
    }
}

fn named(rel: &Relationship, target: &str, hint: Option<&str>) -> bool {
    // A computed relationship answers to its function's name, whatever the hint.
    if let Cardinality::Computed { function, .. } = &rel.cardinality {
        return target == function;
    }
    let m2o = rel.cardinality == Cardinality::ManyToOne;
    let o2m = rel.cardinality == Cardinality::OneToMany;
    let constraint = !matches!(rel.cardinality, Cardinality::ManyToMany(_));
    if rel.is_self {
        // One foreign key gives two relationships: the table's name reaches the children,
        // the key's column the parent (`family?select=children:family(*),parent(*)`).
        return match hint {
            None => {
                (target == rel.foreign_table && o2m) || (single(rel, true) == Some(target) && m2o)
            }
            Some(h) => target == rel.foreign_table && o2m && single(rel, false) == Some(h),
        };
    }
    match hint {
        None => {
            target == rel.foreign_table
                || (constraint && rel.constraint == target && !rel.foreign_is_view)
                || (single(rel, true) == Some(target) && !rel.foreign_is_view)
        }
        Some(h) => {
            target == rel.foreign_table
                && ((constraint && rel.constraint == h)
                    || single(rel, true) == Some(h)
                    || single(rel, false) == Some(h)
                    || matches!(&rel.cardinality, Cardinality::ManyToMany(j) if j.table == h))
        }
    }
}

impl SchemaCache {
    /// [`Self::find_rel_in`] the default schema.
    #[cfg(test)]
    pub(crate) fn find_rel(
        &self,
        origin: &str,
        target: &str,
        hint: Option<&str>,
    ) -> Result<&Relationship, RestError> {
        self.find_rel_in(self.default_schema(), origin, target, hint)
    }

    /// The relationship `origin?select=target!hint(…)` names, in `schema`.
    ///
    /// # Errors
    /// 400 PGRST200 when none does, 300 PGRST201 when more than one does.
    pub(crate) fn find_rel_in(
        &self,
        schema: &str,
        origin: &str,
        target: &str,
        hint: Option<&str>,
    ) -> Result<&Relationship, RestError> {
        let candidates: Vec<&Relationship> = self
            .relationships_in(schema)
            .and_then(|r| r.get(origin))
            .map(|rels| rels.iter().filter(|r| named(r, target, hint)).collect())
            .unwrap_or_default();
        match candidates.as_slice() {
            [one] => Ok(one),
            [] => Err(self.no_relationship(schema, origin, target, hint)),
            many => Err(ambiguous(origin, target, many)),
        }
    }

    fn no_relationship(
        &self,
        schema: &str,
        origin: &str,
        target: &str,
        hint: Option<&str>,
    ) -> RestError {
        let using = hint
            .map(|h| format!("' using the hint '{h}"))
            .unwrap_or_default();
        let mut e = RestError::new(
            400,
            "PGRST200",
            format!("Could not find a relationship between '{origin}' and '{target}' in the schema cache"),
        )
        .with_details(format!(
            "Searched for a foreign key relationship between '{origin}' and '{target}{using}' in \
             the schema '{schema}', but no matches were found."
        ));
        let none = std::collections::HashMap::new();
        let relationships = self.relationships_in(schema).unwrap_or(&none);
        let suggestion = match relationships.get(origin) {
            Some(rels) => {
                let children: Vec<&str> = rels.iter().map(|r| r.foreign_table.as_str()).collect();
                fuzzy::matches(&children, target)
                    .into_iter()
                    .find(|(score, _)| *score < 1.0)
                    .map(|(_, c)| format!("Perhaps you meant '{c}' instead of '{target}'."))
            }
            None => {
                let mut parents: Vec<&str> = relationships.keys().map(String::as_str).collect();
                parents.sort_unstable();
                fuzzy::closest(&parents, origin)
                    .map(|p| format!("Perhaps you meant '{p}' instead of '{origin}'."))
            }
        };
        if let Some(s) = suggestion {
            e = e.with_hint(s);
        }
        e
    }
}

fn listed(cols: impl Iterator<Item = String>) -> String {
    format!("({})", cols.collect::<Vec<_>>().join(", "))
}

/// PostgREST's `compressedRel`: how the ambiguity's `details` describe one candidate.
fn described(rel: &Relationship) -> Value {
    let embedding = format!("{} with {}", rel.table, rel.foreign_table);
    let (cardinality, relationship) = match &rel.cardinality {
        // PostgREST describes one as `{}`: it holds that a function cannot be ambiguous,
        // yet its name may also be a foreign key's or a column's.
        Cardinality::Computed { .. } => return json!({}),
        Cardinality::ManyToMany(j) => (
            "many-to-many",
            format!(
                "{} using {}{} and {}{}",
                j.table,
                j.constraint1,
                listed(j.source.iter().map(|(_, c)| c.clone())),
                j.constraint2,
                listed(j.target.iter().map(|(_, c)| c.clone()))
            ),
        ),
        card => (
            match card {
                Cardinality::ManyToOne => "many-to-one",
                Cardinality::OneToMany => "one-to-many",
                _ => "one-to-one",
            },
            format!(
                "{} using {}{} and {}{}",
                rel.constraint,
                rel.table,
                listed(rel.columns.iter().map(|(c, _)| c.clone())),
                rel.foreign_table,
                listed(rel.columns.iter().map(|(_, f)| f.clone()))
            ),
        ),
    };
    json!({"cardinality": cardinality, "embedding": embedding, "relationship": relationship})
}

fn ambiguous(origin: &str, target: &str, rels: &[&Relationship]) -> RestError {
    let details: Vec<Value> = rels.iter().map(|r| described(r)).collect();
    let hints: Vec<String> = rels
        .iter()
        .map(|r| {
            let by = match &r.cardinality {
                Cardinality::ManyToMany(j) => &j.table,
                Cardinality::Computed { .. } => return String::new(),
                _ => &r.constraint,
            };
            format!("'{}!{by}'", r.foreign_table)
        })
        .collect();
    RestError::new(
        300,
        "PGRST201",
        format!(
            "Could not embed because more than one relationship was found for '{origin}' and \
             '{target}'"
        ),
    )
    .with_details(Value::Array(details).to_string())
    .with_hint(format!(
        "Try changing '{target}' to one of the following: {}. Find the desired relationship in \
         the 'details' key.",
        hints.join(", ")
    ))
}
