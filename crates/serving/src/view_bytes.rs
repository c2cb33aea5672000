//! What a budgeted object's view cookie still gives: one counted download is one file
//! length of bytes in all, however many ranges it takes and whoever the cookie is passed to.
//!
//! A signed cookie cannot carry a count that shrinks: any earlier copy of it still verifies.
//! So the bytes are counted here, per cookie (by the SHA-256 of its value, which holds a
//! random nonce), as they are handed to the connection: a range is free while the cookie
//! has at least its length left, and a body that would pass what is left ends there (the
//! connection closes, as for any body cut short), so concurrent ranges share one length.
//!
//! The count is this replica's. A cookie this replica has not seen (another replica issued
//! it, or this one restarted) starts a count of one file length here: behind a balancer
//! that does not pin clients, a cookie gives at most one length per replica. The table is
//! bounded, in all and per owner (so one owner's budgeted object, downloaded over and over,
//! cannot take every place from the others'); a download counted when there is no place
//! for its cookie is sent whole, and its cookie says it frees no range (it has no nonce), so
//! its later ranges are downloads of their own on every replica, even once places free up.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::Stream;
use quire_kernel::{AccountId, InfraError};
use quire_objects::ByteStream;
use sha2::{Digest, Sha256};

/// Most cookies counted at once: about 100 bytes each.
pub(crate) const MAX_COUNTED_COOKIES: usize = 100_000;

/// Most cookies of one owner's objects counted at once.
pub(crate) const MAX_COUNTED_COOKIES_PER_OWNER: usize = MAX_COUNTED_COOKIES / 10;

/// The bytes each live view cookie has left, on this replica.
#[derive(Debug)]
pub(crate) struct ViewBytes {
    table: Mutex<Table>,
    capacity: usize,
    per_owner: usize,
}

#[derive(Debug, Default)]
struct Table {
    cookies: HashMap<[u8; 16], Counted>,
    /// How many of the cookies are of each owner's objects.
    by_owner: HashMap<AccountId, usize>,
    /// When expired cookies were last swept out, unix seconds: at most once a second, as a
    /// sweep reads the whole table.
    swept: i64,
}

#[derive(Debug)]
struct Counted {
    left: Arc<AtomicU64>,
    /// The cookie's expiry, unix seconds: its count is of no use after it.
    expires: i64,
    owner: AccountId,
}

impl Table {
    fn full(&self, owner: AccountId, capacity: usize, per_owner: usize) -> bool {
        self.cookies.len() >= capacity || self.by_owner.get(&owner).is_some_and(|n| *n >= per_owner)
    }

    fn sweep(&mut self, now: i64) {
        let by_owner = &mut self.by_owner;
        self.cookies.retain(|_, c| {
            let live = c.expires > now;
            if !live && let Some(n) = by_owner.get_mut(&c.owner) {
                *n = n.saturating_sub(1);
            }
            live
        });
        by_owner.retain(|_, n| *n > 0);
        self.swept = now;
    }
}

/// What a cookie has left; shared by the answers sent under it.
#[derive(Debug, Clone)]
pub(crate) struct Allowance(Arc<AtomicU64>);

impl Allowance {
    /// Takes up to `n` bytes; answers how many it got.
    fn take(&self, n: u64) -> u64 {
        let mut got = 0;
        let _ = self
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |left| {
                got = left.min(n);
                Some(left - got)
            });
        got
    }

    #[cfg(test)]
    fn left(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
}

impl Default for ViewBytes {
    fn default() -> Self {
        Self::with_capacity(MAX_COUNTED_COOKIES, MAX_COUNTED_COOKIES_PER_OWNER)
    }
}

impl ViewBytes {
    /// At most `capacity` cookies counted at once, `per_owner` of them of one owner's
    /// objects.
    pub(crate) fn with_capacity(capacity: usize, per_owner: usize) -> Self {
        Self {
            table: Mutex::new(Table::default()),
            capacity,
            per_owner,
        }
    }

    fn key(token: &str) -> [u8; 16] {
        let digest = Sha256::digest(token.as_bytes());
        let mut key = [0u8; 16];
        key.copy_from_slice(&digest[..16]);
        key
    }

    /// The count of a cookie just issued for a counted download of `length` bytes of an
    /// object of `owner` (the download itself is sent under it). `None` when there is no
    /// place for it: the cookie is then to free no range.
    pub(crate) fn issued(
        &self,
        token: &str,
        owner: AccountId,
        length: u64,
        expires: i64,
        now: i64,
    ) -> Option<Allowance> {
        self.counted(token, owner, length, expires, now)
    }

    /// The count of a valid cookie (one that frees ranges) for a later range of `wanted`
    /// bytes: `None` when it has less than that left (or is new here and there is no place
    /// for it), and the range is then a download of its own.
    pub(crate) fn later_range(
        &self,
        token: &str,
        owner: AccountId,
        length: u64,
        expires: i64,
        now: i64,
        wanted: u64,
    ) -> Option<Allowance> {
        self.counted(token, owner, length, expires, now)
            .filter(|a| a.0.load(Ordering::Acquire) >= wanted)
    }

    fn counted(
        &self,
        token: &str,
        owner: AccountId,
        length: u64,
        expires: i64,
        now: i64,
    ) -> Option<Allowance> {
        let key = Self::key(token);
        let mut table = self.table.lock().ok()?;
        if let Some(counted) = table.cookies.get(&key) {
            return Some(Allowance(counted.left.clone()));
        }
        if table.full(owner, self.capacity, self.per_owner) {
            if table.swept < now {
                table.sweep(now);
            }
            if table.full(owner, self.capacity, self.per_owner) {
                return None;
            }
        }
        let left = Arc::new(AtomicU64::new(length));
        table.cookies.insert(
            key,
            Counted {
                left: left.clone(),
                expires,
                owner,
            },
        );
        *table.by_owner.entry(owner).or_default() += 1;
        Some(Allowance(left))
    }
}

/// `bytes` as far as `allowance` goes: a piece past it is cut to what was left, and the
/// stream ends there.
pub(crate) fn metered(bytes: ByteStream, allowance: Allowance) -> ByteStream {
    Box::pin(Metered {
        inner: bytes,
        allowance,
        spent: false,
    })
}

struct Metered {
    inner: ByteStream,
    allowance: Allowance,
    spent: bool,
}

impl Stream for Metered {
    type Item = Result<Bytes, InfraError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.spent {
            return Poll::Ready(None);
        }
        match self.inner.as_mut().poll_next(cx) {
            Poll::Ready(Some(Ok(mut piece))) => {
                let wanted = piece.len() as u64;
                let got = self.allowance.take(wanted);
                if got < wanted {
                    self.spent = true;
                    // At most `wanted`, a piece's length.
                    piece.truncate(usize::try_from(got).unwrap_or(0));
                    if piece.is_empty() {
                        return Poll::Ready(None);
                    }
                }
                Poll::Ready(Some(Ok(piece)))
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use futures_util::StreamExt;

    use super::*;

    fn pieces(sizes: &[usize]) -> ByteStream {
        let items: Vec<Result<Bytes, InfraError>> = sizes
            .iter()
            .map(|n| Ok(Bytes::from(vec![1u8; *n])))
            .collect();
        Box::pin(futures_util::stream::iter(items))
    }

    async fn sent(stream: ByteStream) -> usize {
        stream
            .map(|p| p.unwrap().len())
            .collect::<Vec<_>>()
            .await
            .iter()
            .sum()
    }

    fn owner(n: u128) -> AccountId {
        AccountId(uuid::Uuid::from_u128(n))
    }

    #[tokio::test]
    async fn a_cookie_gives_one_length_in_all() {
        let bytes = ViewBytes::default();
        let ann = owner(1);
        let first = bytes.issued("cookie", ann, 100, 600, 0).unwrap();
        assert_eq!(sent(metered(pieces(&[1]), first)).await, 1);
        // The rest once, in any number of ranges.
        let later = bytes.later_range("cookie", ann, 100, 600, 1, 60).unwrap();
        assert_eq!(sent(metered(pieces(&[30, 30]), later)).await, 60);
        assert!(bytes.later_range("cookie", ann, 100, 600, 2, 39).is_some());
        assert!(
            bytes.later_range("cookie", ann, 100, 600, 2, 40).is_none(),
            "more than is left: a download of its own"
        );
        // Ranges sent together share what is left: the one past it is cut short.
        let (a, b) = (
            bytes.later_range("cookie", ann, 100, 600, 3, 39).unwrap(),
            bytes.later_range("cookie", ann, 100, 600, 3, 39).unwrap(),
        );
        assert_eq!(sent(metered(pieces(&[20, 19]), a)).await, 39);
        assert_eq!(sent(metered(pieces(&[20, 19]), b.clone())).await, 0);
        assert_eq!(b.left(), 0);
        assert!(bytes.later_range("cookie", ann, 100, 600, 4, 1).is_none());
        // Another cookie has its own count.
        assert!(bytes.later_range("other", ann, 100, 600, 4, 100).is_some());
    }

    #[test]
    fn a_full_table_counts_no_new_cookie_until_old_ones_expire() {
        let bytes = ViewBytes::with_capacity(2, 2);
        let (ann, bob) = (owner(1), owner(2));
        assert!(bytes.issued("a", ann, 10, 100, 0).is_some());
        assert!(bytes.issued("b", bob, 10, 200, 0).is_some());
        assert!(bytes.later_range("c", bob, 10, 300, 50, 1).is_none());
        // Known cookies keep their count.
        assert!(bytes.later_range("a", ann, 10, 100, 50, 10).is_some());
        // Once `a` has expired, its place is free.
        assert!(bytes.later_range("c", bob, 10, 300, 150, 1).is_some());
    }

    #[test]
    fn one_owner_takes_at_most_its_share_of_the_places() {
        let bytes = ViewBytes::with_capacity(5, 2);
        let (ann, bob) = (owner(1), owner(2));
        assert!(bytes.issued("a1", ann, 10, 100, 0).is_some());
        assert!(bytes.issued("a2", ann, 10, 200, 0).is_some());
        assert!(
            bytes.issued("a3", ann, 10, 300, 0).is_none(),
            "ann's share is full"
        );
        assert!(bytes.later_range("a3", ann, 10, 300, 1, 1).is_none());
        // The places ann could not take are the others'.
        for (n, cookie) in ["b1", "b2"].iter().enumerate() {
            assert!(bytes.issued(cookie, bob, 10, 300, 1).is_some(), "{n}");
        }
        assert!(bytes.issued("c1", owner(3), 10, 300, 1).is_some());
        assert!(
            bytes.issued("c2", owner(3), 10, 300, 1).is_none(),
            "the table is full"
        );
        // Ann's expired cookie gives its place back to ann.
        assert!(bytes.issued("a3", ann, 10, 300, 100).is_some());
        assert!(bytes.issued("a4", ann, 10, 300, 100).is_none());
    }
}
