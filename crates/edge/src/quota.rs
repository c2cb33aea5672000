//! An account's use of a quota as the API shows it, in the lists whose resources count
//! against one: what it uses and the cap (`null`: none), both in the quota's unit.

use quire_kernel::Usage;
use serde::Serialize;
use utoipa::ToSchema;

/// What the account (all its projects) uses of a quota, and the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({ "used": 3, "limit": 10 }))]
pub struct UsageDto {
    /// What the account uses now.
    pub used: u64,
    /// The cap the operator set; `null` when there is none.
    pub limit: Option<u64>,
}

impl From<Usage> for UsageDto {
    fn from(u: Usage) -> Self {
        Self {
            used: u.used,
            limit: u.limit,
        }
    }
}
