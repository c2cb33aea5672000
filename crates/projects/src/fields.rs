//! The rules of a project's fields as a client sends them: name, tag, color, slug and the
//! OAuth client it is named after.

use quire_kernel::{Color, ProjectSlug};

use crate::errors::WriteProjectError;

/// Longest project name, in characters.
pub const MAX_NAME_CHARS: usize = 100;
/// Longest project tag, in characters.
pub const MAX_TAG_CHARS: usize = 50;
/// Longest `oauth_client_id`, in bytes.
pub const MAX_CLIENT_ID_LEN: usize = 100;

/// Lengths count what the client sent (as the OpenAPI document's `maxLength` does); what is
/// kept is trimmed, and must not be blank.
pub(crate) fn check_name(name: &str) -> Result<String, WriteProjectError> {
    let n = name.chars().count();
    let name = name.trim();
    if name.is_empty() || n > MAX_NAME_CHARS {
        return Err(WriteProjectError::InvalidProject(format!(
            "name must be 1-{MAX_NAME_CHARS} characters"
        )));
    }
    if quire_kernel::text::has_control(name) {
        return Err(WriteProjectError::InvalidProject(
            "name must not contain control characters".into(),
        ));
    }
    Ok(name.to_owned())
}

pub(crate) fn check_tag(tag: &str) -> Result<String, WriteProjectError> {
    if tag.chars().count() > MAX_TAG_CHARS {
        return Err(WriteProjectError::InvalidProject(format!(
            "tag must be at most {MAX_TAG_CHARS} characters"
        )));
    }
    if quire_kernel::text::has_control(tag) {
        return Err(WriteProjectError::InvalidProject(
            "tag must not contain control characters".into(),
        ));
    }
    Ok(tag.trim().to_owned())
}

pub(crate) fn check_color(color: &str) -> Result<Color, WriteProjectError> {
    Color::parse(color).map_err(|e| WriteProjectError::InvalidProject(e.0))
}

pub(crate) fn check_slug(slug: &str) -> Result<ProjectSlug, WriteProjectError> {
    ProjectSlug::parse(slug).map_err(|e| WriteProjectError::InvalidSlug(e.0))
}

/// OAuth client ids are opaque tokens: 1-100 of `A-Za-z0-9 _ - .`.
pub(crate) fn check_client_id(id: Option<String>) -> Result<Option<String>, WriteProjectError> {
    match id {
        None => Ok(None),
        Some(id)
            if !id.is_empty()
                && id.len() <= MAX_CLIENT_ID_LEN
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')) =>
        {
            Ok(Some(id))
        }
        Some(_) => Err(WriteProjectError::InvalidProject(format!(
            "oauth_client_id must be 1-{MAX_CLIENT_ID_LEN} of A-Z a-z 0-9 _ - ."
        ))),
    }
}
