//! The operator's invitation list: the phone numbers that may activate an account, kept in
//! E.164 so `+44 7400 123456` and `07400 123456` (read in `GB`) are one entry.

use std::sync::Arc;

use quire_kernel::{Clock, InfraError};

use crate::phone::{PhoneError, PhoneNumber, Region};
use crate::ports::{Invitation, InvitationStore};

/// The longest list file read by [`InvitationList::import`].
pub const MAX_IMPORT_LINES: usize = 100_000;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InviteError {
    #[error("{0}")]
    InvalidNumber(PhoneError),
    /// Every bad line of an import (1-based), and why; nothing was added.
    #[error("{} line(s) are not valid numbers, nothing was added: {}", .0.len(),
        .0.iter().take(5).map(|(n, e)| format!("line {n}: {e}")).collect::<Vec<_>>().join("; "))]
    BadLines(Vec<(usize, PhoneError)>),
    #[error("the file has more than {MAX_IMPORT_LINES} lines")]
    TooLong,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// Adds, removes, lists and imports invited numbers.
#[derive(Debug, Clone)]
pub struct InvitationList {
    store: Arc<dyn InvitationStore>,
    clock: Arc<dyn Clock>,
}

impl InvitationList {
    #[must_use]
    pub fn new(store: Arc<dyn InvitationStore>, clock: Arc<dyn Clock>) -> Self {
        Self { store, clock }
    }

    /// Invites one number; returns it normalised, and whether it was new.
    ///
    /// # Errors
    /// `InvalidNumber`, `Infra`.
    pub async fn add(
        &self,
        number: &str,
        region: Option<Region>,
    ) -> Result<(PhoneNumber, bool), InviteError> {
        let number = PhoneNumber::parse_in(number, region).map_err(InviteError::InvalidNumber)?;
        let added = self
            .store
            .add_invitations(std::slice::from_ref(&number), self.clock.now())
            .await?;
        Ok((number, added == 1))
    }

    /// Takes a number off the list; returns it normalised, and whether it was on it.
    ///
    /// # Errors
    /// `InvalidNumber`, `Infra`.
    pub async fn remove(
        &self,
        number: &str,
        region: Option<Region>,
    ) -> Result<(PhoneNumber, bool), InviteError> {
        let number = PhoneNumber::parse_in(number, region).map_err(InviteError::InvalidNumber)?;
        let removed = self.store.remove_invitation(&number).await?;
        Ok((number, removed))
    }

    /// Invites every number of a list, one per line (blank lines and `#` comments
    /// skipped), all or none. Returns how many numbers the file held and how many were new.
    ///
    /// # Errors
    /// `BadLines` naming every line that is not a valid number (nothing is added),
    /// `TooLong`, `Infra`.
    pub async fn import(
        &self,
        text: &str,
        region: Option<Region>,
    ) -> Result<(usize, u64), InviteError> {
        if text.lines().count() > MAX_IMPORT_LINES {
            return Err(InviteError::TooLong);
        }
        let mut numbers = Vec::new();
        let mut bad = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            match PhoneNumber::parse_in(line, region) {
                Ok(n) => numbers.push(n),
                Err(e) => bad.push((i + 1, e)),
            }
        }
        if !bad.is_empty() {
            return Err(InviteError::BadLines(bad));
        }
        numbers.sort();
        numbers.dedup();
        let added = self
            .store
            .add_invitations(&numbers, self.clock.now())
            .await?;
        Ok((numbers.len(), added))
    }

    /// The list, by number.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    pub async fn list(&self) -> Result<Vec<Invitation>, InfraError> {
        self.store.invitations().await
    }
}
