//! Typed identifiers. Each wraps a UUID so that an account id can never be passed where a
//! project id is expected.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

macro_rules! id_type {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub Uuid);

        impl $name {
            /// A fresh random (v4) identifier.
            #[must_use]
            pub fn new() -> Self {
                Self(Uuid::new_v4())
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.hyphenated().fmt(f)
            }
        }

        impl FromStr for $name {
            type Err = uuid::Error;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Uuid::parse_str(s).map(Self)
            }
        }
    };
}

id_type!(
    /// Identifies an account.
    AccountId
);
id_type!(
    /// Identifies a project.
    ProjectId
);
id_type!(
    /// Identifies an API key.
    KeyId
);
id_type!(
    /// Identifies a page.
    PageId
);
id_type!(
    /// Identifies a short link.
    LinkId
);
id_type!(
    /// Identifies an object: one file published on its own.
    ObjectId
);
id_type!(
    /// Identifies a tenant database of the database service.
    DatabaseId
);
id_type!(
    /// Identifies one lease on a link's views: a replica's block holder for that link.
    LeaseId
);
