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

/// A schema that takes a description: a `schema_with` field does not take its doc comment,
/// so the function that makes its schema gives it one.
trait Described {
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

fn described<S: Described>(schema: S, text: &str) -> S {
    schema.described(text)
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
    described(
        text(1, quire_projects::MAX_NAME_CHARS, visible_line(), false),
        "The project's name, shown in the dashboard; trimmed when stored.",
    )
}
pub fn project_name_patch() -> Object {
    described(
        text(1, quire_projects::MAX_NAME_CHARS, visible_line(), true),
        "A new name for the project; trimmed when stored. Omitted: unchanged.",
    )
}
pub fn project_tag() -> Object {
    described(
        text(0, quire_projects::MAX_TAG_CHARS, one_line(), false),
        "A short label shown beside the name; may be empty.",
    )
}
pub fn project_tag_patch() -> Object {
    described(
        text(0, quire_projects::MAX_TAG_CHARS, one_line(), true),
        "A new label; may be empty. Omitted: unchanged.",
    )
}
pub fn color() -> Object {
    described(
        one_of(Color::ALL.map(Color::as_str), false),
        "The project's colour, one of the dashboard's palette.",
    )
}
pub fn color_patch() -> Object {
    described(
        one_of(Color::ALL.map(Color::as_str), true),
        "A new colour from the palette. Omitted: unchanged.",
    )
}
pub fn project_slug() -> Object {
    described(
        text(3, 30, project_slug_pattern(), false),
        "The project's slug: 3-30 lowercase letters, digits or underscores, unique across the service.",
    )
}
pub fn project_slug_optional() -> Object {
    described(
        text(3, 30, project_slug_pattern(), true),
        "A project's slug (3-30 lowercase letters, digits or underscores). Omitted: the default the operation states (the key's home project, or unchanged on update).",
    )
}
pub fn page_database() -> Object {
    described(
        text(3, 30, project_slug_pattern(), true),
        "The slug of one of your databases in the page's project: the page's scripts then read its data API's URL and anon key at `/-/db.json` on the page's origin. Omitted: none (unchanged on update); `null` on update removes it.",
    )
}
pub fn oauth_client_id() -> Object {
    let max = quire_projects::MAX_CLIENT_ID_LEN;
    described(
        text(1, max, format!("^[A-Za-z0-9_.-]{{1,{max}}}$"), true),
        "The OAuth client this project belongs to. Omitted: none (unchanged on update); `null` on update removes it.",
    )
}
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
pub fn status() -> Object {
    described(one_of(STATUS, false), "`active` or `archived`.")
}
pub fn status_optional() -> Object {
    described(
        one_of(STATUS, true),
        "`active` or `archived`. Omitted: unchanged.",
    )
}
pub fn resource_type() -> Object {
    described(
        one_of(RESOURCE_TYPE, false),
        "What kind of resource `resource_id` names.",
    )
}
pub fn grant_level() -> Object {
    described(
        one_of(GRANT_LEVEL, false),
        "`read` (list and read) or `full` (also write and delete).",
    )
}

pub fn key_name() -> Object {
    described(
        text(1, quire_keys::MAX_KEY_NAME_CHARS, visible_line(), false),
        "A name to recognise the key by; trimmed when stored.",
    )
}
pub fn apps() -> utoipa::openapi::schema::Array {
    described(
        ArrayBuilder::new()
            .items(one_of(App::ALL.map(App::as_str), false))
            .min_items(Some(1))
            .unique_items(true)
            .build(),
        "The apps the key may use (at least one, no repeats).",
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

pub fn email_to() -> Object {
    described(
        text(
            3,
            quire_mail::MAX_TO_CHARS,
            "^[!-~]+@[!-~]+$".to_owned(),
            false,
        ),
        "The recipient: one plain ASCII address, at most 254 characters.",
    )
}
pub fn email_subject() -> Object {
    described(
        text(1, quire_mail::MAX_SUBJECT_CHARS, visible_line(), false),
        "The subject line.",
    )
}
pub fn email_text() -> Object {
    described(
        ObjectBuilder::new()
            .schema_type(kind(false, Type::String))
            .min_length(Some(1))
            .max_length(Some(quire_mail::MAX_TEXT_BYTES))
            .build(),
        "The plain-text body, at most 64 KiB; never stored or logged.",
    )
}
pub fn client_name() -> Object {
    described(
        text(
            1,
            quire_device_auth::MAX_CLIENT_NAME_CHARS,
            visible_line(),
            true,
        ),
        "The agent's name, shown on the consent screen. Default `agent`.",
    )
}
pub fn device_code_grant() -> Object {
    described(
        one_of([DEVICE_CODE_GRANT], false),
        "Always `urn:ietf:params:oauth:grant-type:device_code`.",
    )
}

pub fn oauth_client_name() -> Object {
    described(
        text(1, quire_oauth::MAX_NAME_CHARS, visible_line(), false),
        "The application's name, shown on the consent screen; trimmed when stored.",
    )
}
pub fn oauth_client_type() -> Object {
    described(
        one_of(["confidential", "public"], false),
        "`confidential` (has a secret) or `public` (PKCE only, no secret).",
    )
}
pub fn redirect_uris() -> utoipa::openapi::schema::Array {
    described(
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
            .build(),
        "Where the authorization answer may be sent: https; http on 127.0.0.1 or [::1] only; a reverse-DNS private scheme for public clients. No fragment, user name or wildcard.",
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
