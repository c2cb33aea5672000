//! A device grant and its state.

use quire_kernel::{AccountId, KeyId};
use time::OffsetDateTime;
use uuid::Uuid;

/// Where a grant stands. `Expired` is not stored: it is read off the clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrantState {
    Pending,
    Approved { account: AccountId },
    Denied,
    Claimed { key: KeyId },
}

/// One device authorization request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceGrant {
    pub id: Uuid,
    /// SHA-256 of the device code.
    pub device_code_hash: String,
    /// Normalised user code (8 letters).
    pub user_code: String,
    pub client_name: String,
    pub state: GrantState,
    pub created_at: OffsetDateTime,
    pub expires_at: OffsetDateTime,
    /// Seconds the agent must wait between polls.
    pub interval_secs: u32,
    pub last_polled_at: Option<OffsetDateTime>,
    pub decided_at: Option<OffsetDateTime>,
}
