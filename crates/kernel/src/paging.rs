//! Keyset paging of lists: a [`Paging`] asks for at most `limit` items after a position, a
//! [`Paged`] answers with the items and, when more remain, the opaque cursor of the next
//! page.
//!
//! Every list has a stable order on a unique key (creation time then id, or a name), and a
//! page of it resumes strictly after the last key the previous page returned, so items added
//! or removed meanwhile never make another item show twice or go missing. A cursor is that
//! key, tagged with the list it belongs to and base64url encoded: opaque to clients, checked
//! when read back (a cursor of another list, or anything that does not decode, is
//! [`PagingError::InvalidCursor`]). It carries no secret and grants nothing: it only says
//! where to resume in a list the caller may read anyway.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use time::OffsetDateTime;
use uuid::Uuid;

/// Most items one page of a list may hold.
pub const MAX_LIMIT: u32 = 1000;

/// Items in a page when a cursor comes without a limit.
pub const DEFAULT_LIMIT: u32 = 100;

/// Longest cursor read (a file path of 1,024 bytes with its tag fits easily).
const MAX_CURSOR_LEN: usize = 2048;

/// Why a list request's `limit` or `cursor` was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PagingError {
    /// `limit` is not a whole number from 1 to [`MAX_LIMIT`].
    #[error("limit must be a whole number from 1 to {MAX_LIMIT}")]
    InvalidLimit,
    /// `cursor` is not a `nextCursor` this list gave.
    #[error("cursor is not a nextCursor of this list")]
    InvalidCursor,
}

/// The sort key of an item, as a cursor carries it.
pub trait CursorKey: Sized {
    /// The key as text (the cursor's payload).
    fn write(&self) -> String;
    /// The key back from [`CursorKey::write`]'s text; `None` when it is not one.
    fn read(text: &str) -> Option<Self>;
}

/// A position in a list ordered by a time (creation, sharing) and then an id, which breaks
/// ties. Times are kept to the microsecond, as both databases store them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimeKey {
    pub at: OffsetDateTime,
    pub id: Uuid,
}

impl CursorKey for TimeKey {
    fn write(&self) -> String {
        let micros = self.at.unix_timestamp_nanos() / 1000;
        format!("{micros}.{}", self.id.simple())
    }

    fn read(text: &str) -> Option<Self> {
        let (micros, id) = text.split_once('.')?;
        let micros: i128 = micros.parse().ok()?;
        let at = OffsetDateTime::from_unix_timestamp_nanos(micros.checked_mul(1000)?).ok()?;
        let id = Uuid::try_parse(id).ok()?;
        Some(Self { at, id })
    }
}

/// A position in a list ordered by a unique name (a page's files, by path).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NameKey(pub String);

impl CursorKey for NameKey {
    fn write(&self) -> String {
        self.0.clone()
    }

    fn read(text: &str) -> Option<Self> {
        Some(Self(text.to_owned()))
    }
}

/// One page of a list: at most `limit` items after `after` (from the start when `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paging<K> {
    /// From 1 to [`MAX_LIMIT`].
    pub limit: u32,
    pub after: Option<K>,
}

impl<K: CursorKey> Paging<K> {
    /// The first `limit` items (clamped to 1..=[`MAX_LIMIT`]).
    #[must_use]
    pub fn first(limit: u32) -> Self {
        Self {
            limit: limit.clamp(1, MAX_LIMIT),
            after: None,
        }
    }

    /// The paging a client asked for on the list `list`: `None` when it gave neither
    /// `limit` nor `cursor` (the whole list), else `limit` items ([`DEFAULT_LIMIT`] if it
    /// gave only a cursor) after the cursor's position.
    ///
    /// # Errors
    /// [`PagingError::InvalidLimit`] for a limit outside 1..=[`MAX_LIMIT`];
    /// [`PagingError::InvalidCursor`] for a cursor that is not one of `list`'s.
    pub fn requested(
        list: &str,
        limit: Option<u64>,
        cursor: Option<&str>,
    ) -> Result<Option<Self>, PagingError> {
        if limit.is_none() && cursor.is_none() {
            return Ok(None);
        }
        let limit = match limit {
            None => DEFAULT_LIMIT,
            Some(n) => u32::try_from(n)
                .ok()
                .filter(|n| (1..=MAX_LIMIT).contains(n))
                .ok_or(PagingError::InvalidLimit)?,
        };
        let after = cursor.map(|c| decode_cursor(list, c)).transpose()?;
        Ok(Some(Self { limit, after }))
    }

    /// As [`Paging::requested`], with the limit as the query string's text.
    ///
    /// # Errors
    /// As [`Paging::requested`]; a limit that is not a number is
    /// [`PagingError::InvalidLimit`].
    pub fn from_query(
        list: &str,
        limit: Option<&str>,
        cursor: Option<&str>,
    ) -> Result<Option<Self>, PagingError> {
        let limit = limit
            .map(|l| l.parse::<u64>().map_err(|_| PagingError::InvalidLimit))
            .transpose()?;
        Self::requested(list, limit, cursor)
    }

    /// How many items to read for this page: one more than `limit`, which says whether
    /// more remain.
    #[must_use]
    pub fn fetch(&self) -> u32 {
        self.limit + 1
    }
}

/// A page of a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paged<T> {
    pub items: Vec<T>,
    /// Where the next page starts, when more items remain; opaque to clients.
    pub next_cursor: Option<String>,
}

impl<T> Paged<T> {
    /// The page out of at most `paging.fetch()` items read in list order: an item beyond
    /// the limit is dropped and says that more remain, so the cursor names the last item
    /// kept.
    pub fn from_fetched<K: CursorKey>(
        list: &str,
        paging: &Paging<K>,
        mut items: Vec<T>,
        key: impl Fn(&T) -> K,
    ) -> Self {
        let limit = paging.limit as usize;
        let next_cursor = if items.len() > limit {
            items.truncate(limit);
            items.last().map(|last| encode_cursor(list, &key(last)))
        } else {
            None
        };
        Self { items, next_cursor }
    }

    /// The same page with each item converted.
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Paged<U> {
        Paged {
            items: self.items.into_iter().map(f).collect(),
            next_cursor: self.next_cursor,
        }
    }
}

/// The cursor of the position `key` in the list `list`.
#[must_use]
pub fn encode_cursor<K: CursorKey>(list: &str, key: &K) -> String {
    URL_SAFE_NO_PAD.encode(format!("{list}:{}", key.write()))
}

/// The position a cursor of the list `list` names.
///
/// # Errors
/// [`PagingError::InvalidCursor`] when `cursor` is not one of `list`'s cursors.
pub fn decode_cursor<K: CursorKey>(list: &str, cursor: &str) -> Result<K, PagingError> {
    if cursor.is_empty() || cursor.len() > MAX_CURSOR_LEN {
        return Err(PagingError::InvalidCursor);
    }
    let bytes = URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| PagingError::InvalidCursor)?;
    let text = String::from_utf8(bytes).map_err(|_| PagingError::InvalidCursor)?;
    let (tag, key) = text.split_once(':').ok_or(PagingError::InvalidCursor)?;
    if tag != list {
        return Err(PagingError::InvalidCursor);
    }
    K::read(key).ok_or(PagingError::InvalidCursor)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(micros: i64) -> TimeKey {
        TimeKey {
            at: OffsetDateTime::from_unix_timestamp_nanos(i128::from(micros) * 1000).unwrap(),
            id: Uuid::from_u128(0x1234),
        }
    }

    #[test]
    fn a_cursor_reads_back_as_its_key_on_its_own_list_only() {
        let k = key(1_700_000_000_123_456);
        let c = encode_cursor("pages", &k);
        assert_eq!(decode_cursor::<TimeKey>("pages", &c), Ok(k));
        assert_eq!(
            decode_cursor::<TimeKey>("keys", &c),
            Err(PagingError::InvalidCursor)
        );
        let n = encode_cursor("files", &NameKey("a:b/c.html".into()));
        assert_eq!(
            decode_cursor::<NameKey>("files", &n),
            Ok(NameKey("a:b/c.html".into()))
        );
    }

    #[test]
    fn garbage_and_tampered_cursors_are_refused() {
        for bad in [
            "",
            "!!!",
            "cGFnZXM6",
            "cGFnZXM6eA",
            &URL_SAFE_NO_PAD.encode("pages:12.nothex"),
            &"A".repeat(5000),
        ] {
            assert_eq!(
                decode_cursor::<TimeKey>("pages", bad),
                Err(PagingError::InvalidCursor),
                "{bad}"
            );
        }
    }

    #[test]
    fn limits_outside_the_range_are_refused_and_no_parameter_means_the_whole_list() {
        assert_eq!(Paging::<TimeKey>::from_query("pages", None, None), Ok(None));
        for bad in ["0", "1001", "-1", "ten", "1.5", ""] {
            assert_eq!(
                Paging::<TimeKey>::from_query("pages", Some(bad), None),
                Err(PagingError::InvalidLimit),
                "{bad}"
            );
        }
        let p = Paging::<TimeKey>::from_query("pages", Some("1000"), None)
            .unwrap()
            .unwrap();
        assert_eq!((p.limit, p.after), (1000, None));
        let c = encode_cursor("pages", &key(5));
        let p = Paging::<TimeKey>::from_query("pages", None, Some(&c))
            .unwrap()
            .unwrap();
        assert_eq!((p.limit, p.after), (DEFAULT_LIMIT, Some(key(5))));
    }

    #[test]
    fn the_item_past_the_limit_says_more_remain() {
        let paging = Paging::<TimeKey>::first(2);
        let full = Paged::from_fetched("pages", &paging, vec![1, 2, 3], |n| key(*n));
        assert_eq!(full.items, vec![1, 2]);
        assert_eq!(full.next_cursor, Some(encode_cursor("pages", &key(2))));
        let last = Paged::from_fetched("pages", &paging, vec![1, 2], |n| key(*n));
        assert_eq!((last.items, last.next_cursor), (vec![1, 2], None));
    }
}
