//! A bound on the bytes of long request bodies being received at once, over the server and
//! per credential. A body is held in memory until its request is answered, so without one a
//! key could declare the largest body on many connections and have the server hold them all.
//! A body is counted by its declared length from its headers on, before a byte is read, and
//! until it is dropped; one streamed to storage as it arrives (an object upload) is counted
//! as [`crate::streamed`] says.

use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;

use quire_kernel::per_key::{Counted, PerKeyCounts};

/// Seconds a refused client is asked to wait: bodies in flight end within their deadline,
/// most within seconds.
pub const RETRY_AFTER_SECS: u64 = 5;

/// The bytes of long bodies in flight, and their bounds.
#[derive(Debug)]
pub struct BodiesInFlight {
    total: u64,
    per_key: u64,
    /// Credentials are told apart by a keyed hash of the `Authorization` header: the table
    /// holds no credential, and a client cannot aim at another's entry.
    hasher: RandomState,
    held: Arc<PerKeyCounts<u64>>,
}

/// Why a body was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Busy {
    /// The credential holds its share already.
    Key,
    /// The server holds all it takes.
    Server,
}

/// A body's place in the bound; given back when dropped.
#[derive(Debug)]
pub struct BodyBytes {
    held: Counted<u64>,
    total: u64,
    per_key: u64,
}

impl BodiesInFlight {
    /// At most `total` bytes in flight, and `per_key` for one credential.
    #[must_use]
    pub fn new(total: u64, per_key: u64) -> Self {
        Self {
            total,
            per_key: per_key.min(total),
            hasher: RandomState::new(),
            held: Arc::default(),
        }
    }

    /// Counts `bytes` for the credential `authorization` (the header as sent; none for a
    /// request without one). A body larger than a share on its own is admitted when its
    /// credential, or the server, holds nothing else: the size limits of the route decide
    /// what is too large.
    ///
    /// # Errors
    /// [`Busy`] when the credential's share or the server's bound would be passed.
    pub fn admit(
        self: &Arc<Self>,
        authorization: Option<&[u8]>,
        bytes: u64,
    ) -> Result<BodyBytes, Busy> {
        let mut place = self.place(authorization);
        place.grow(bytes)?;
        Ok(place)
    }

    /// A place for a body of the credential `authorization` that holds nothing yet: it
    /// counts what [`BodyBytes::grow`] adds.
    #[must_use]
    pub fn place(self: &Arc<Self>, authorization: Option<&[u8]>) -> BodyBytes {
        let key = self.hasher.hash_one(authorization.unwrap_or_default());
        BodyBytes {
            held: self.held.guard(key),
            total: self.total,
            per_key: self.per_key,
        }
    }

    /// The most one credential may hold (a body larger than this alone aside).
    #[must_use]
    pub fn share(&self) -> u64 {
        self.per_key
    }

    /// Bytes in flight now.
    #[must_use]
    pub fn held(&self) -> u64 {
        self.held.total()
    }
}

impl BodyBytes {
    /// Counts `more` bytes for this body, as [`BodiesInFlight::admit`] would count a body of
    /// its new size that its credential and the server held beside what they hold now: past
    /// a share or the bound only when nothing else is held. A body of unknown length grows
    /// this way as it arrives.
    ///
    /// # Errors
    /// [`Busy`] when the credential's share or the server's bound would be passed; the
    /// place keeps what it held.
    pub fn grow(&mut self, more: u64) -> Result<(), Busy> {
        let (total, per_key) = (self.total, self.per_key);
        self.held.grow(more, |held| {
            if held.of_key > held.mine && held.of_key.saturating_add(more) > per_key {
                return Err(Busy::Key);
            }
            if held.total > held.mine && held.total.saturating_add(more) > total {
                return Err(Busy::Server);
            }
            Ok(())
        })
    }

    /// Bytes this body holds.
    #[must_use]
    pub fn bytes(&self) -> u64 {
        self.held.amount()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_credential_has_its_share_within_the_servers_bound_and_gets_it_back() {
        let bound = Arc::new(BodiesInFlight::new(100, 40));
        let a = Some(&b"Bearer a"[..]);
        let b = Some(&b"Bearer b"[..]);
        let a1 = bound.admit(a, 30).unwrap();
        assert_eq!(bound.admit(a, 20).unwrap_err(), Busy::Key);
        let a2 = bound.admit(a, 10).unwrap();
        let b1 = bound.admit(b, 40).unwrap();
        let c1 = bound.admit(None, 15).unwrap();
        assert_eq!(bound.held(), 95);
        assert_eq!(
            bound.admit(Some(b"Bearer d"), 10).unwrap_err(),
            Busy::Server
        );
        drop((a1, a2));
        assert_eq!(bound.held(), 55);
        let a3 = bound.admit(a, 40).unwrap();
        drop((a3, b1, c1));
        assert_eq!(bound.held(), 0);
        // One body over a share is the route's limit to judge, when nothing else is held.
        let large = bound.admit(a, 500).unwrap();
        assert_eq!(bound.admit(b, 1).unwrap_err(), Busy::Server);
        drop(large);
        assert_eq!(bound.held(), 0);
    }

    #[test]
    fn a_body_grows_within_its_share_and_the_bound_as_admit_would_count_it() {
        let bound = Arc::new(BodiesInFlight::new(100, 40));
        let a = Some(&b"Bearer a"[..]);
        let mut growing = bound.admit(a, 10).unwrap();
        let other = bound.admit(a, 10).unwrap();
        growing.grow(20).unwrap();
        assert_eq!(growing.bytes(), 30);
        assert_eq!(growing.grow(1).unwrap_err(), Busy::Key);
        assert_eq!(bound.held(), 40, "a refused growth holds nothing more");
        drop(other);
        // Alone, it may pass its share, as one large body may.
        growing.grow(50).unwrap();
        let b = bound.admit(Some(b"Bearer b"), 20).unwrap();
        assert_eq!(growing.grow(30).unwrap_err(), Busy::Server);
        drop(b);
        growing.grow(200).unwrap();
        drop(growing);
        assert_eq!(bound.held(), 0);
    }
}
