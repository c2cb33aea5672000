//! The access policy a link carries: who may open its target, until when, how many times.

use quire_kernel::{AccountId, Email};
use time::OffsetDateTime;

/// Who may open what a link points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    Private,
    Password,
    AllowList,
    Public,
}

impl Access {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Access::Private => "private",
            Access::Password => "password",
            Access::AllowList => "allow_list",
            Access::Public => "public",
        }
    }

    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "private" => Some(Self::Private),
            "password" => Some(Self::Password),
            "allow_list" => Some(Self::AllowList),
            "public" => Some(Self::Public),
            _ => None,
        }
    }
}

/// Who an `allow_list` link is shared with.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AllowEntry {
    /// An account (given by handle).
    Account(AccountId),
    /// An email address, whether or not an account has it yet.
    Email(Email),
}

/// A link's policy. The password itself is not part of it: only its hash is kept, on the
/// [`crate::Link`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub access: Access,
    pub expires_at: Option<OffsetDateTime>,
    pub max_views: Option<u64>,
    pub allow: Vec<AllowEntry>,
}
