//! The rules of request fields as JSON Schema, for the OpenAPI document: lengths from the
//! domain's own constants, patterns that say what its validators say, and the closed sets of
//! values. A request the document calls valid must be one the service takes, and one it calls
//! invalid one the service refuses; Schemathesis checks both directions in CI.
//!
//! Lengths count characters, as `maxLength` does. Values that hold no markup (names,
//! titles, tags) refuse control characters (C0, DEL, C1), and those that name something must
//! also hold one visible character.

use quire_kernel::{App, Color};
use utoipa::openapi::schema::{
    ArrayBuilder, KnownFormat, Object, ObjectBuilder, SchemaFormat, SchemaType, Type,
};

/// Control characters, as a character-class body (`char::is_control`: C0, DEL and C1).
const CONTROL: &str = r"\x00-\x1F\x7F-\x9F";

fn one_line() -> String {
    format!("^[^{CONTROL}]*$")
}

fn visible_line() -> String {
    format!("^[^{CONTROL}]*[^\\s{CONTROL}][^{CONTROL}]*$")
}

/// A safe relative path: `/`-separated segments, none empty, `.` or `..`, and no backslash
/// or control character (`quire_pages::validate::path`).
fn safe_path() -> String {
    let char = format!(r"[^/\\{CONTROL}]");
    let not_dot = format!(r"[^./\\{CONTROL}]");
    let segment = format!(r"(?:{not_dot}{char}*|\.{not_dot}{char}*|\.\.{char}+)");
    format!("^{segment}(?:/{segment})*$")
}

fn kind(nullable: bool, of: Type) -> SchemaType {
    if nullable {
        SchemaType::from_iter([of, Type::Null])
    } else {
        SchemaType::new(of)
    }
}

fn text(min: usize, max: usize, pattern: String, nullable: bool) -> Object {
    ObjectBuilder::new()
        .schema_type(kind(nullable, Type::String))
        .min_length(Some(min))
        .max_length(Some(max))
        .pattern(Some(pattern))
        .build()
}

fn one_of(values: impl IntoIterator<Item = &'static str>, nullable: bool) -> Object {
    let mut values: Vec<serde_json::Value> = values.into_iter().map(Into::into).collect();
    if nullable {
        values.push(serde_json::Value::Null);
    }
    ObjectBuilder::new()
        .schema_type(kind(nullable, Type::String))
        .enum_values(Some(values))
        .build()
}

pub const ACCESS: [&str; 4] = ["private", "password", "allow_list", "public"];
pub const STATUS: [&str; 2] = ["active", "archived"];
pub const ENCODING: [&str; 2] = ["utf8", "base64"];
pub const RESOURCE_TYPE: [&str; 5] = ["page", "object", "link", "database", "key"];
pub const GRANT_LEVEL: [&str; 2] = ["read", "full"];
pub const DEVICE_CODE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

fn project_slug_pattern() -> String {
    "^[a-z0-9_]{3,30}$".into()
}

pub fn project_name() -> Object {
    text(1, quire_projects::MAX_NAME_CHARS, visible_line(), false)
}
pub fn project_name_patch() -> Object {
    text(1, quire_projects::MAX_NAME_CHARS, visible_line(), true)
}
pub fn project_tag() -> Object {
    text(0, quire_projects::MAX_TAG_CHARS, one_line(), false)
}
pub fn project_tag_patch() -> Object {
    text(0, quire_projects::MAX_TAG_CHARS, one_line(), true)
}
pub fn color() -> Object {
    one_of(Color::ALL.map(Color::as_str), false)
}
pub fn color_patch() -> Object {
    one_of(Color::ALL.map(Color::as_str), true)
}
pub fn project_slug() -> Object {
    text(3, 30, project_slug_pattern(), false)
}
pub fn project_slug_optional() -> Object {
    text(3, 30, project_slug_pattern(), true)
}
pub fn oauth_client_id() -> Object {
    let max = quire_projects::MAX_CLIENT_ID_LEN;
    text(1, max, format!("^[A-Za-z0-9_.-]{{1,{max}}}$"), true)
}
pub fn status() -> Object {
    one_of(STATUS, false)
}
pub fn status_optional() -> Object {
    one_of(STATUS, true)
}
pub fn resource_type() -> Object {
    one_of(RESOURCE_TYPE, false)
}
pub fn grant_level() -> Object {
    one_of(GRANT_LEVEL, false)
}

pub fn key_name() -> Object {
    text(1, quire_keys::MAX_KEY_NAME_CHARS, visible_line(), false)
}
pub fn apps() -> utoipa::openapi::schema::Array {
    ArrayBuilder::new()
        .items(one_of(App::ALL.map(App::as_str), false))
        .min_items(Some(1))
        .unique_items(true)
        .build()
}

pub fn page_title() -> Object {
    text(1, 200, visible_line(), false)
}
pub fn page_title_patch() -> Object {
    text(1, 200, visible_line(), true)
}
pub fn page_slug() -> Object {
    let max = quire_pages::validate::MAX_SLUG_LEN;
    let inner = max - 2;
    text(
        1,
        max,
        format!("^[a-z0-9](?:[a-z0-9-]{{0,{inner}}}[a-z0-9])?$"),
        true,
    )
}
pub fn alias() -> Object {
    text(3, 64, "^[A-Za-z0-9_-]{3,64}$".into(), true)
}
pub fn path() -> Object {
    text(1, quire_pages::validate::MAX_PATH_CHARS, safe_path(), false)
}
pub fn entrypoint() -> Object {
    text(1, quire_pages::validate::MAX_PATH_CHARS, safe_path(), true)
}
pub fn access_optional() -> Object {
    one_of(ACCESS, true)
}
pub fn encoding() -> Object {
    one_of(ENCODING, true)
}
pub fn page_password() -> Object {
    let max = quire_pages::validate::MAX_PAGE_PASSWORD_CHARS;
    ObjectBuilder::new()
        .schema_type(kind(true, Type::String))
        .max_length(Some(max))
        .build()
}
pub fn expires_at() -> Object {
    ObjectBuilder::new()
        .schema_type(kind(true, Type::String))
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
        .build()
}
pub fn max_views() -> Object {
    ObjectBuilder::new()
        .schema_type(kind(true, Type::Integer))
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
        .minimum(Some(1))
        .maximum(Some(i64::MAX))
        .build()
}
pub fn allow() -> utoipa::openapi::schema::Array {
    ArrayBuilder::new()
        .schema_type(kind(true, Type::Array))
        .items(ObjectBuilder::new().schema_type(Type::String).build())
        .max_items(Some(quire_pages::validate::MAX_ALLOW_ENTRIES))
        .build()
}

pub fn email_to() -> Object {
    text(
        3,
        quire_mail::MAX_TO_CHARS,
        "^[!-~]+@[!-~]+$".to_owned(),
        false,
    )
}
pub fn email_subject() -> Object {
    text(1, quire_mail::MAX_SUBJECT_CHARS, visible_line(), false)
}
pub fn email_text() -> Object {
    ObjectBuilder::new()
        .schema_type(kind(false, Type::String))
        .min_length(Some(1))
        .max_length(Some(quire_mail::MAX_TEXT_BYTES))
        .build()
}
pub fn client_name() -> Object {
    text(
        1,
        quire_device_auth::MAX_CLIENT_NAME_CHARS,
        visible_line(),
        true,
    )
}
pub fn device_code_grant() -> Object {
    one_of([DEVICE_CODE_GRANT], false)
}

pub fn oauth_client_name() -> Object {
    text(1, quire_oauth::MAX_NAME_CHARS, visible_line(), false)
}
pub fn oauth_client_type() -> Object {
    one_of(["confidential", "public"], false)
}
pub fn redirect_uris() -> utoipa::openapi::schema::Array {
    ArrayBuilder::new()
        .items(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(1))
                .max_length(Some(quire_oauth::redirect::MAX_REDIRECT_URI_LEN))
                .pattern(Some(r"^[^\s#*]+$"))
                .build(),
        )
        .min_items(Some(1))
        .max_items(Some(quire_oauth::MAX_REDIRECT_URIS))
        .unique_items(true)
        .build()
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
    fn the_line_patterns_say_what_the_validators_say() {
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
        let tag = regex(&project_tag());
        assert!(tag.is_match("") && tag.is_match(" x ") && !tag.is_match("a\nb"));
    }

    #[test]
    fn the_closed_sets_are_the_domains() {
        for a in ACCESS {
            assert!(quire_links::Access::parse(a).is_some(), "{a}");
        }
        for s in STATUS {
            assert!(quire_pages::PageStatus::parse(s).is_some(), "{s}");
            assert!(quire_projects::ProjectStatus::parse(s).is_some(), "{s}");
        }
        for r in RESOURCE_TYPE {
            assert!(quire_projects::ResourceType::parse(r).is_some(), "{r}");
        }
        for l in GRANT_LEVEL {
            assert!(quire_projects::GrantLevel::parse(l).is_some(), "{l}");
        }
    }
}
