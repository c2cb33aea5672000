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
//! bounded; when it is full of live cookies a new one gets nothing free (its ranges are
//! downloads of their own), never a fresh count.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::Stream;
use quire_kernel::InfraError;
use quire_objects::ByteStream;
use sha2::{Digest, Sha256};

/// Most cookies counted at once: about 100 bytes each.
pub(crate) const MAX_COUNTED_COOKIES: usize = 100_000;

/// The bytes each live view cookie has left, on this replica.
#[derive(Debug)]
pub(crate) struct ViewBytes {
    cookies: Mutex<HashMap<[u8; 16], Counted>>,
    capacity: usize,
}

#[derive(Debug)]
struct Counted {
    left: Arc<AtomicU64>,
    /// The cookie's expiry, unix seconds: its count is of no use after it.
    expires: i64,
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
        Self::with_capacity(MAX_COUNTED_COOKIES)
    }
}

impl ViewBytes {
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self {
            cookies: Mutex::new(HashMap::new()),
            capacity,
        }
    }

    fn key(token: &str) -> [u8; 16] {
        let digest = Sha256::digest(token.as_bytes());
        let mut key = [0u8; 16];
        key.copy_from_slice(&digest[..16]);
        key
    }

    /// The count of a cookie just issued for a counted download of `length` bytes (the
    /// download itself is sent under it). `None` when the table is full.
    pub(crate) fn issued(
        &self,
        token: &str,
        length: u64,
        expires: i64,
        now: i64,
    ) -> Option<Allowance> {
        self.counted(token, length, expires, now)
    }

    /// The count of a valid cookie for a later range of `wanted` bytes: `None` when it has
    /// less than that left (or is new here and the table is full), and the range is then a
    /// download of its own.
    pub(crate) fn later_range(
        &self,
        token: &str,
        length: u64,
        expires: i64,
        now: i64,
        wanted: u64,
    ) -> Option<Allowance> {
        self.counted(token, length, expires, now)
            .filter(|a| a.0.load(Ordering::Acquire) >= wanted)
    }

    fn counted(&self, token: &str, length: u64, expires: i64, now: i64) -> Option<Allowance> {
        let key = Self::key(token);
        let mut cookies = self.cookies.lock().ok()?;
        if let Some(counted) = cookies.get(&key) {
            return Some(Allowance(counted.left.clone()));
        }
        if cookies.len() >= self.capacity {
            cookies.retain(|_, c| c.expires > now);
            if cookies.len() >= self.capacity {
                return None;
            }
        }
        let left = Arc::new(AtomicU64::new(length));
        cookies.insert(
            key,
            Counted {
                left: left.clone(),
                expires,
            },
        );
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

    #[tokio::test]
    async fn a_cookie_gives_one_length_in_all() {
        let bytes = ViewBytes::default();
        let first = bytes.issued("cookie", 100, 600, 0).unwrap();
        assert_eq!(sent(metered(pieces(&[1]), first)).await, 1);
        // The rest once, in any number of ranges.
        let later = bytes.later_range("cookie", 100, 600, 1, 60).unwrap();
        assert_eq!(sent(metered(pieces(&[30, 30]), later)).await, 60);
        assert!(bytes.later_range("cookie", 100, 600, 2, 39).is_some());
        assert!(
            bytes.later_range("cookie", 100, 600, 2, 40).is_none(),
            "more than is left: a download of its own"
        );
        // Ranges sent together share what is left: the one past it is cut short.
        let (a, b) = (
            bytes.later_range("cookie", 100, 600, 3, 39).unwrap(),
            bytes.later_range("cookie", 100, 600, 3, 39).unwrap(),
        );
        assert_eq!(sent(metered(pieces(&[20, 19]), a)).await, 39);
        assert_eq!(sent(metered(pieces(&[20, 19]), b.clone())).await, 0);
        assert_eq!(b.left(), 0);
        assert!(bytes.later_range("cookie", 100, 600, 4, 1).is_none());
        // Another cookie has its own count.
        assert!(bytes.later_range("other", 100, 600, 4, 100).is_some());
    }

    #[test]
    fn a_full_table_counts_no_new_cookie_until_old_ones_expire() {
        let bytes = ViewBytes::with_capacity(2);
        assert!(bytes.issued("a", 10, 100, 0).is_some());
        assert!(bytes.issued("b", 10, 200, 0).is_some());
        assert!(bytes.later_range("c", 10, 300, 50, 1).is_none());
        // Known cookies keep their count.
        assert!(bytes.later_range("a", 10, 100, 50, 10).is_some());
        // Once `a` has expired, its place is free.
        assert!(bytes.later_range("c", 10, 300, 150, 1).is_some());
    }
}
