//! The rules of this crate's request fields as JSON Schema, for the OpenAPI document, built
//! with `quire-edge`'s blocks ([`quire_edge::schema`], which also holds the rules these
//! routes share with other surfaces: a project's slug, a status): lengths from the domain's
//! own constants, patterns that say what its validators say, and the closed sets of values.
//! A request the document calls valid must be one the service takes, and one it calls
//! invalid one the service refuses; Schemathesis checks both directions in CI.

use quire_edge::schema::{described, kind, one_line, one_of, text, visible_line};
use quire_kernel::{App, Color};
use utoipa::openapi::schema::{ArrayBuilder, Object, ObjectBuilder, Type};

pub use quire_edge::schema::{project_slug, project_slug_optional, status_optional};

pub const RESOURCE_TYPE: [&str; 5] = ["page", "object", "link", "database", "key"];
pub const GRANT_LEVEL: [&str; 2] = ["read", "full"];
pub const DEVICE_CODE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

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
pub fn oauth_client_id() -> Object {
    let max = quire_projects::MAX_CLIENT_ID_LEN;
    described(
        text(1, max, format!("^[A-Za-z0-9_.-]{{1,{max}}}$"), true),
        "The OAuth client this project belongs to. Omitted: none (unchanged on update); `null` on update removes it.",
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
    fn the_tag_pattern_takes_one_line() {
        let tag = regex(&project_tag());
        assert!(tag.is_match("") && tag.is_match(" x ") && !tag.is_match("a\nb"));
    }

    #[test]
    fn the_closed_sets_are_the_domains() {
        for r in RESOURCE_TYPE {
            assert!(quire_projects::ResourceType::parse(r).is_some(), "{r}");
        }
        for l in GRANT_LEVEL {
            assert!(quire_projects::GrantLevel::parse(l).is_some(), "{l}");
        }
    }
}
