//! The rules of the page requests' fields as JSON Schema, for the OpenAPI document, built
//! with `quire-edge`'s blocks ([`quire_edge::schema`], which also holds the rules the page
//! routes share with others: a project's slug, a status, paging): lengths from the pages
//! domain's own constants, patterns that say what its validators say, and the closed sets of
//! values.

use quire_edge::schema::{
    CONTROL, described, kind, one_of, project_slug_pattern, text, visible_line,
};
use utoipa::openapi::schema::{
    ArrayBuilder, KnownFormat, Object, ObjectBuilder, SchemaFormat, Type,
};

pub use quire_edge::schema::{project_slug, project_slug_optional, status, status_optional};

pub const ACCESS: [&str; 4] = ["private", "password", "allow_list", "public"];
pub const ENCODING: [&str; 2] = ["utf8", "base64"];

/// A safe relative path: `/`-separated segments, none empty, `.` or `..`, and no backslash
/// or control character (`quire_pages::validate::path`).
fn safe_path() -> String {
    let char = format!(r"[^/\\{CONTROL}]");
    let not_dot = format!(r"[^./\\{CONTROL}]");
    let segment = format!(r"(?:{not_dot}{char}*|\.{not_dot}{char}*|\.\.{char}+)");
    format!("^{segment}(?:/{segment})*$")
}

pub fn page_database() -> Object {
    described(
        text(3, 30, project_slug_pattern(), true),
        "The slug of one of your databases in the page's project: the page's scripts then read its data API's URL and anon key at `/-/db.json` on the page's origin. Omitted: none (unchanged on update); `null` on update removes it.",
    )
}
pub fn page_title() -> Object {
    described(
        text(1, 200, visible_line(), false),
        "The page's title, shown in the dashboard and on its password form.",
    )
}
pub fn page_title_patch() -> Object {
    described(
        text(1, 200, visible_line(), true),
        "A new title. Omitted: unchanged.",
    )
}
pub fn page_slug() -> Object {
    let max = quire_pages::validate::MAX_SLUG_LEN;
    let inner = max - 2;
    described(
        text(
            1,
            max,
            format!("^[a-z0-9](?:[a-z0-9-]{{0,{inner}}}[a-z0-9])?$"),
            true,
        ),
        "The page's slug in its URL (lowercase letters, digits and inner hyphens), unique per owner. Omitted: derived from the title on publish, unchanged on update.",
    )
}
pub fn alias() -> Object {
    described(
        text(3, 64, "^[A-Za-z0-9_-]{3,64}$".into(), true),
        "A short link code of your choosing, unique service-wide. Omitted: a random code on publish, unchanged on update; `null` on update removes it.",
    )
}
pub fn path() -> Object {
    described(
        text(1, quire_pages::validate::MAX_PATH_CHARS, safe_path(), false),
        "A safe relative path in the bundle: `/`-separated segments, none empty, `.` or `..`.",
    )
}
pub fn entrypoint() -> Object {
    described(
        text(1, quire_pages::validate::MAX_PATH_CHARS, safe_path(), true),
        "The file served at the page's address. Default `index.html`.",
    )
}
pub fn access_optional() -> Object {
    described(
        one_of(ACCESS, true),
        "Who may open the page: `private` (the owner), `password`, `allow_list` or `public`. Default `private` on publish; omitted on update: unchanged.",
    )
}
pub fn encoding() -> Object {
    described(
        one_of(ENCODING, true),
        "How `content` is encoded: `utf8` or `base64`. Default `utf8`.",
    )
}
pub fn page_password() -> Object {
    let max = quire_pages::validate::MAX_PAGE_PASSWORD_CHARS;
    described(
        ObjectBuilder::new()
            .schema_type(kind(true, Type::String))
            .max_length(Some(max))
            .build(),
        "The password visitors type, required when access is `password`. Omitted: none (unchanged on update); `null` or empty on update removes it.",
    )
}
pub fn expires_at() -> Object {
    described(
        ObjectBuilder::new()
            .schema_type(kind(true, Type::String))
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
            .build(),
        "When the page stops being served (RFC 3339, in the future). Omitted: never (unchanged on update); `null` on update removes the expiry.",
    )
}
pub fn max_views() -> Object {
    described(
        ObjectBuilder::new()
            .schema_type(kind(true, Type::Integer))
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
            .minimum(Some(1))
            .maximum(Some(i64::MAX))
            .build(),
        "How many views the page may serve. Omitted: no limit (unchanged on update); `null` on update removes the budget.",
    )
}
pub fn allow() -> utoipa::openapi::schema::Array {
    described(
        ArrayBuilder::new()
            .schema_type(kind(true, Type::Array))
            .items(ObjectBuilder::new().schema_type(Type::String).build())
            .max_items(Some(quire_pages::validate::MAX_ALLOW_ENTRIES))
            .build(),
        "Emails or handles of existing accounts who may open an `allow_list` page. Omitted: none (unchanged on update); on update the list replaces the old one.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regex(object: &Object) -> regex::Regex {
        regex::Regex::new(object.pattern.as_deref().unwrap()).unwrap()
    }

    #[test]
    fn the_path_pattern_says_what_the_validator_says() {
        let pattern = regex(&path());
        for p in [
            "index.html",
            "a/b/c.css",
            ".well-known/x",
            "...",
            "..a/b",
            "é/ü.txt",
            "a b/c",
            "",
            "/abs",
            "a//b",
            "a/./b",
            "../x",
            "a/..",
            "back\\slash",
            "nul\0",
            "line\nbreak",
            "c1\u{85}",
            ".",
        ] {
            assert_eq!(
                pattern.is_match(p),
                quire_pages::validate::path(p).is_ok(),
                "{p:?}"
            );
        }
    }

    #[test]
    fn the_title_pattern_says_what_the_validator_says() {
        let title = regex(&page_title());
        for t in [
            "Hello",
            " padded ",
            "ünï — code",
            "",
            "   ",
            "\t",
            "tab\there",
            "nul\0",
            "\u{7f}",
            "\u{9f}x",
            "\u{a0}",
        ] {
            assert_eq!(
                title.is_match(t),
                quire_pages::validate::title(t).is_ok(),
                "{t:?}"
            );
        }
    }

    #[test]
    fn the_closed_sets_are_the_domains() {
        for a in ACCESS {
            assert!(quire_links::Access::parse(a).is_some(), "{a}");
        }
    }
}
