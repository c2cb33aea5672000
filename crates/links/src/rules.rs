//! The rules of a link's policy fields, shared by every kind of link (pages', objects' and
//! URL links): access, alias, password, expiry, view budget, allow list. Each refusal names its field,
//! so the HTTP layer can pass the message on unchanged.

use std::collections::{HashMap, HashSet};

use quire_kernel::text::quoted;
use quire_kernel::{Email, Handle, InfraError};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::policy::{Access, AllowEntry};
use crate::ports::AccountDirectory;

/// Longest link password, in characters: within the hasher's 1,024 bytes whatever the
/// characters, and a length the OpenAPI document can state.
pub const MAX_PAGE_PASSWORD_CHARS: usize = 256;
/// Shortest new link password, in characters: the unlock form allows ten guesses per link
/// and address per window, which a password of a few characters does not survive.
pub const MIN_PAGE_PASSWORD_CHARS: usize = 8;
/// Most entries of an allow list.
pub const MAX_ALLOW_ENTRIES: usize = 1_000;

/// A refused field: the message names it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

/// # Errors
/// A new password under [`MIN_PAGE_PASSWORD_CHARS`] or over [`MAX_PAGE_PASSWORD_CHARS`]
/// characters. (Passwords stored before the minimum keep working: only new ones are checked.)
pub fn page_password(password: &str) -> Result<(), Invalid> {
    let chars = password.chars().count();
    if chars < MIN_PAGE_PASSWORD_CHARS {
        return Err(Invalid(format!(
            "password must be at least {MIN_PAGE_PASSWORD_CHARS} characters"
        )));
    }
    if chars > MAX_PAGE_PASSWORD_CHARS {
        return Err(Invalid(format!(
            "password must be at most {MAX_PAGE_PASSWORD_CHARS} characters"
        )));
    }
    Ok(())
}

/// # Errors
/// When the value is none of `private`, `password`, `allow_list`, `public`.
pub fn access(raw: &str) -> Result<Access, Invalid> {
    Access::parse(raw)
        .ok_or_else(|| Invalid("access must be private, password, allow_list or public".into()))
}

/// # Errors
/// When the alias is not 3-64 of `A-Z a-z 0-9 _ -`.
pub fn alias(raw: &str) -> Result<String, Invalid> {
    if !is_code(raw) {
        return Err(Invalid(
            "alias must be 3-64 of A-Z, a-z, 0-9, _ and -".into(),
        ));
    }
    Ok(raw.to_owned())
}

/// Whether `raw` can be a code at `/s/{code}` (a public id or an alias).
#[must_use]
pub fn is_code(raw: &str) -> bool {
    (3..=64).contains(&raw.len())
        && raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// # Errors
/// When the value is not an RFC 3339 time, or not in the future.
pub fn expires_at(raw: &str, now: OffsetDateTime) -> Result<OffsetDateTime, Invalid> {
    let t = OffsetDateTime::parse(raw, &Rfc3339)
        .map_err(|_| Invalid("expiresAt must be an ISO 8601 (RFC 3339) time".into()))?;
    if t <= now {
        return Err(Invalid("expiresAt must be in the future".into()));
    }
    Ok(quire_kernel::clock::truncate_to_micros(t))
}

/// # Errors
/// When the value is not a positive integer.
pub fn max_views(raw: i128) -> Result<u64, Invalid> {
    u64::try_from(raw)
        .ok()
        .filter(|n| *n > 0 && *n <= i64::MAX as u64)
        .ok_or_else(|| Invalid("maxViews must be a positive integer".into()))
}

/// What a change does to a link's password: a patch's `password` field (`null` or `""`
/// clears it, a new one is checked by [`page_password`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PasswordChange {
    Keep,
    Set(String),
    Clear,
}

impl PasswordChange {
    /// The change a patch's `password` asks for.
    ///
    /// # Errors
    /// A new password [`page_password`] refuses.
    pub fn of_patch(sent: Option<Option<String>>) -> Result<Self, Invalid> {
        match sent {
            None => Ok(Self::Keep),
            Some(None) => Ok(Self::Clear),
            Some(Some(p)) if p.is_empty() => Ok(Self::Clear),
            Some(Some(p)) => {
                page_password(&p)?;
                Ok(Self::Set(p))
            }
        }
    }

    /// Whether the link has a password after the change, when it `has` one before.
    #[must_use]
    pub fn leaves_password(&self, has: bool) -> bool {
        match self {
            Self::Keep => has,
            Self::Set(_) => true,
            Self::Clear => false,
        }
    }
}

/// Why an allow list was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllowError {
    #[error("{0}")]
    Invalid(Invalid),
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// Parses an allow list (emails, and handles with or without `@`), then resolves its
/// handles in one lookup; duplicates are dropped (first one kept) in linear time.
///
/// # Errors
/// [`AllowError::Invalid`] naming the first entry refused (too many entries, neither an email
/// nor a handle, a handle no account has); [`AllowError::Infra`] when the lookup fails.
pub async fn resolve_allow(
    accounts: &dyn AccountDirectory,
    raw: &[String],
) -> Result<Vec<AllowEntry>, AllowError> {
    enum Parsed {
        Email(Email),
        Handle(Handle),
    }
    let invalid = |m: String| AllowError::Invalid(Invalid(m));
    if raw.len() > MAX_ALLOW_ENTRIES {
        return Err(invalid(format!(
            "allow has {} entries; at most {MAX_ALLOW_ENTRIES} are allowed",
            raw.len()
        )));
    }
    let mut parsed = Vec::with_capacity(raw.len());
    let mut handles = Vec::new();
    for entry in raw {
        if entry.contains('@') {
            parsed.push(Parsed::Email(Email::parse(entry).map_err(|_| {
                invalid(format!(
                    "allow entry {} is not a valid email",
                    quoted(entry)
                ))
            })?));
        } else {
            let handle = Handle::parse(entry.trim_start_matches('@')).map_err(|_| {
                invalid(format!(
                    "allow entry {} is neither an email nor a handle",
                    quoted(entry)
                ))
            })?;
            handles.push(handle.clone());
            parsed.push(Parsed::Handle(handle));
        }
    }
    let found = if handles.is_empty() {
        HashMap::new()
    } else {
        accounts.accounts_by_handles(&handles).await?
    };
    let mut seen = HashSet::with_capacity(parsed.len());
    let mut out = Vec::with_capacity(parsed.len());
    for entry in parsed {
        let resolved = match entry {
            Parsed::Email(e) => AllowEntry::Email(e),
            Parsed::Handle(h) => AllowEntry::Account(*found.get(&h).ok_or_else(|| {
                invalid(format!(
                    "allow entry \"{}\": no account has that handle",
                    h.as_str()
                ))
            })?),
        };
        if seen.insert(resolved.clone()) {
            out.push(resolved);
        }
    }
    Ok(out)
}
