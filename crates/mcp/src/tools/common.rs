//! What every tool file shares, and the only part of this module a tool file depends on: the
//! call a handler runs in ([`Call`]), the refusal a model reads ([`ToolError`], [`refused`]),
//! and the pieces the page, link and object tools answer alike. Nothing here knows the
//! registry or any tool.

use std::sync::OnceLock;

use quire_edge::{ApiError, AppState};
use quire_kernel::Principal;
use quire_links::Link;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use time::format_description::well_known::Rfc3339;

use crate::transport::Caller;

/// One call of a tool: the state it runs on, who calls, and what it acted on.
#[derive(Debug)]
pub struct Call<'a> {
    pub state: &'a AppState,
    pub caller: &'a Caller,
    target: OnceLock<String>,
}

impl<'a> Call<'a> {
    pub(crate) fn new(state: &'a AppState, caller: &'a Caller) -> Self {
        Self {
            state,
            caller,
            target: OnceLock::new(),
        }
    }

    #[must_use]
    pub fn principal(&self) -> &'a Principal {
        &self.caller.principal
    }

    /// Names the thing the call acts on, for the audit line; set once a tool has found it,
    /// so a refusal after that (a wrong `confirm`) is logged against it too.
    pub fn acts_on(&self, id: uuid::Uuid) {
        // A tool names one thing; were a second named, the first would stay.
        let _ = self.target.set(id.to_string());
    }

    /// What [`Call::acts_on`] named, if anything.
    #[must_use]
    pub fn target(&self) -> Option<&str> {
        self.target.get().map(String::as_str)
    }
}

/// A refusal, as the model reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    pub code: String,
    pub message: String,
}

impl ToolError {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Self {
            code: code.to_owned(),
            message: message.into(),
        }
    }

    /// What the model should do next, by code.
    fn next_step(&self) -> String {
        match self.code.as_str() {
            "invalid_request" | "invalid_limit" | "invalid_cursor" | "invalid_body"
            | "invalid_slug" => "Fix the arguments and call again.".into(),
            "sql_error" => "Fix the SQL and call again.".into(),
            "database_service_unavailable" => {
                "Tell the user: the server's operator must turn the database service on.".into()
            }
            "not_found" if self.message.contains("database") => {
                "Check the database with list_databases.".into()
            }
            "not_found" if self.message.contains("object") => {
                "Check the object with list_objects.".into()
            }
            "not_found" => "Check the page with list_pages.".into(),
            "invalid_url" | "url_too_long" | "url_credentials" | "url_loop" | "url_denied" => {
                "Give another http(s) URL.".into()
            }
            "slug_conflict" | "slug_taken" => {
                "Choose another slug (or update the existing page).".into()
            }
            "alias_conflict" => "Choose another alias.".into(),
            "password_required" => "Pass a password, or choose another access.".into(),
            "payload_too_large" => {
                "Send fewer or smaller files: publish a few, then add the rest with add_files."
                    .into()
            }
            "insufficient_scope" if self.message.contains("`base`") => {
                "This credential cannot reach databases; ask the user for a key with the base app."
                    .into()
            }
            "insufficient_scope" => {
                "This credential cannot do this; ask the user for access with the page scope on that project.".into()
            }
            "rate_limited" => "Wait, then retry.".into(),
            _ => "Retry later; if it persists, tell the user.".into(),
        }
    }

    /// `"<code>: <message>. <next step>"`.
    #[must_use]
    pub fn text(&self) -> String {
        format!(
            "{}: {}. {}",
            self.code,
            self.message.trim_end_matches('.'),
            self.next_step()
        )
    }
}

impl From<ApiError> for ToolError {
    fn from(e: ApiError) -> Self {
        Self::new(e.code(), e.message())
    }
}

/// Maps a domain error the way the REST API does (the same code, the same message).
pub fn refused<E>(e: E) -> ToolError
where
    ApiError: From<E>,
{
    ToolError::from(ApiError::from(e))
}

/// A field that may be sent as `null` (clears) or left out (unchanged).
pub fn nullable<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
    de: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(de).map(Some)
}

/// The id in `name` when it reads as one (a UUID, spaces around allowed); otherwise a tool
/// looks `name` up among the other names it takes (aliases, slugs, public ids).
#[must_use]
pub fn id_in(name: &str) -> Option<uuid::Uuid> {
    uuid::Uuid::parse_str(name.trim()).ok()
}

/// The refusal when no `noun` of the credential's project answers to `name`.
#[must_use]
pub fn not_named(noun: &str, name: &str) -> ToolError {
    ToolError::new(
        "not_found",
        format!("no {noun} is named {name:?} in the credential's project"),
    )
}

/// Goes on only when a delete's `confirm` repeated what it names; otherwise the refusal
/// `unconfirmed` words says what to repeat, and nothing is deleted.
///
/// # Errors
/// `invalid_request` with that refusal.
pub fn confirmed(repeated: bool, unconfirmed: impl FnOnce() -> String) -> Result<(), ToolError> {
    if repeated {
        Ok(())
    } else {
        Err(ToolError::new("invalid_request", unconfirmed()))
    }
}

/// What a link shows of itself, as the link and object tools both answer it (flattened into
/// their answers): its alias, its policy and the views it counted.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Shown {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    pub access: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_views: Option<u64>,
    pub view_count: u64,
}

impl Shown {
    #[must_use]
    pub fn of(link: &Link) -> Self {
        Self {
            alias: link.alias.clone(),
            access: link.policy.access.as_str().to_owned(),
            expires_at: link.policy.expires_at.and_then(|t| t.format(&Rfc3339).ok()),
            max_views: link.policy.max_views,
            view_count: link.view_count,
        }
    }
}

/// A deleted link's or object's answer: its id.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DeletedIdOut {
    pub deleted: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_read_code_message_and_next_step() {
        let e = ToolError::new("slug_conflict", "slug \"a\" is taken.");
        assert_eq!(
            e.text(),
            "slug_conflict: slug \"a\" is taken. Choose another slug (or update the existing page)."
        );
    }
}
