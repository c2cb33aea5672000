//! The building blocks of a request field's JSON Schema for the OpenAPI document, and the
//! rules of the fields several surfaces share (a project's slug, a status, the paging
//! parameters). Each surface states its own fields' rules with these (`schema.rs` in
//! `quire-api` and `quire-pages-api`): lengths from the domain's own constants, patterns that
//! say what its validators say, and the closed sets of values. A request the document calls
//! valid must be one the service takes, and one it calls invalid one the service refuses;
//! Schemathesis checks both directions in CI.
//!
//! Lengths count characters, as `maxLength` does. Values that hold no markup (names,
//! titles, tags) refuse control characters (C0, DEL, C1), and those that name something must
//! also hold one visible character.

use utoipa::openapi::schema::{Object, ObjectBuilder, SchemaType, Type};

/// Control characters, as a character-class body (`char::is_control`: C0, DEL and C1).
pub const CONTROL: &str = r"\x00-\x1F\x7F-\x9F";

/// One line of text: no control character.
#[must_use]
pub fn one_line() -> String {
    format!("^[^{CONTROL}]*$")
}

/// One line of text with at least one visible character.
#[must_use]
pub fn visible_line() -> String {
    format!("^[^{CONTROL}]*[^\\s{CONTROL}][^{CONTROL}]*$")
}

/// A schema that takes a description: a `schema_with` field does not take its doc comment,
/// so the function that makes its schema gives it one.
pub trait Described {
    #[must_use]
    fn described(self, text: &str) -> Self;
}

impl Described for Object {
    fn described(mut self, text: &str) -> Self {
        self.description = Some(text.to_owned());
        self
    }
}

impl Described for utoipa::openapi::schema::Array {
    fn described(mut self, text: &str) -> Self {
        self.description = Some(text.to_owned());
        self
    }
}

/// `schema` with `text` as its description.
#[must_use]
pub fn described<S: Described>(schema: S, text: &str) -> S {
    schema.described(text)
}

/// `of`, or `of` or `null` when `nullable`.
#[must_use]
pub fn kind(nullable: bool, of: Type) -> SchemaType {
    if nullable {
        SchemaType::from_iter([of, Type::Null])
    } else {
        SchemaType::new(of)
    }
}

/// A string of `min`-`max` characters matching `pattern`.
#[must_use]
pub fn text(min: usize, max: usize, pattern: String, nullable: bool) -> Object {
    ObjectBuilder::new()
        .schema_type(kind(nullable, Type::String))
        .min_length(Some(min))
        .max_length(Some(max))
        .pattern(Some(pattern))
        .build()
}

/// One of `values` (or `null` when `nullable`).
#[must_use]
pub fn one_of(values: impl IntoIterator<Item = &'static str>, nullable: bool) -> Object {
    let mut values: Vec<serde_json::Value> = values.into_iter().map(Into::into).collect();
    if nullable {
        values.push(serde_json::Value::Null);
    }
    ObjectBuilder::new()
        .schema_type(kind(nullable, Type::String))
        .enum_values(Some(values))
        .build()
}

/// The statuses of a page and of a project alike.
pub const STATUS: [&str; 2] = ["active", "archived"];

/// A project's slug, as `quire_projects` takes it.
#[must_use]
pub fn project_slug_pattern() -> String {
    "^[a-z0-9_]{3,30}$".into()
}

#[must_use]
pub fn project_slug() -> Object {
    described(
        text(3, 30, project_slug_pattern(), false),
        "The project's slug: 3-30 lowercase letters, digits or underscores, unique across the service.",
    )
}
#[must_use]
pub fn project_slug_optional() -> Object {
    described(
        text(3, 30, project_slug_pattern(), true),
        "A project's slug (3-30 lowercase letters, digits or underscores). Omitted: the default the operation states (the key's home project, or unchanged on update).",
    )
}
#[must_use]
pub fn limit() -> Object {
    described(
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .minimum(Some(1))
            .maximum(Some(quire_kernel::paging::MAX_LIMIT))
            .build(),
        "Most items in one answer, 1-1000. Given (or with `cursor`), the answer is one page of the list, with `nextCursor` when more remain. Neither given: the whole list, as before.",
    )
}
#[must_use]
pub fn cursor() -> Object {
    described(
        ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(1))
            .max_length(Some(2048))
            .pattern(Some("^[A-Za-z0-9_-]+$".to_owned()))
            .build(),
        "The `nextCursor` of the previous answer of this list, to read the page after it (100 items unless `limit` says otherwise). Anything else is 400 `invalid_cursor`.",
    )
}
#[must_use]
pub fn status() -> Object {
    described(one_of(STATUS, false), "`active` or `archived`.")
}
#[must_use]
pub fn status_optional() -> Object {
    described(
        one_of(STATUS, true),
        "`active` or `archived`. Omitted: unchanged.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statuses_are_the_domains() {
        for s in STATUS {
            assert!(quire_pages::PageStatus::parse(s).is_some(), "{s}");
            assert!(quire_projects::ProjectStatus::parse(s).is_some(), "{s}");
        }
    }
}
