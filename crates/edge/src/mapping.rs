//! Anonymous mappings that hold long request bodies, with the last one kept for the next.
//!
//! The kernel hands out a fresh mapping's pages zeroed, on first touch: for a 27 MiB publish
//! that zeroing was 8.8% of the server's CPU (`docs/decisions/publish-body-memory.md`). A
//! mapping whose body has been dropped is therefore parked, one at most, and the next long
//! body that fits is read into it with no faults. Only the part a body filled is ever shown
//! (its slice), and the next body overwrites from the start, so what a parked mapping still
//! holds is never read. The janitor gives a mapping parked for a while back to the kernel
//! ([`release_idle`]).

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use actix_web::web::Bytes;
use memmap2::{Mmap, MmapMut};

/// New mappings are sized in whole huge pages, so a later body a little longer still fits.
const HUGE_PAGE: usize = 2 << 20;

/// The process's parking place: bodies are read on any worker thread.
static PARKED: Parking = Parking::new();

/// Where one mapping waits for the next long body, with the time it was parked.
#[derive(Debug)]
struct Parking(Mutex<Option<(MmapMut, Instant)>>);

impl Parking {
    const fn new() -> Self {
        Self(Mutex::new(None))
    }

    /// The parked mapping, if it holds `length` bytes. One too small is unmapped: kept while
    /// a new one fills, both would be resident.
    fn take(&self, length: usize) -> Option<MmapMut> {
        let parked = self.0.lock().unwrap_or_else(PoisonError::into_inner).take();
        parked.map(|(map, _)| map).filter(|map| map.len() >= length)
    }

    /// Keeps `map` for the next body unless a larger one is parked already; the other one
    /// is unmapped.
    fn park(&self, map: MmapMut) {
        let mut parked = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if parked
            .as_ref()
            .is_none_or(|(kept, _)| kept.len() <= map.len())
        {
            *parked = Some((map, Instant::now()));
        }
    }

    /// Unmaps the parked mapping if it has waited at least `idle_for`; returns its length.
    fn release_idle(&self, idle_for: Duration) -> usize {
        let mut parked = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match parked.take() {
            Some((map, since)) if since.elapsed() >= idle_for => map.len(),
            other => {
                *parked = other;
                0
            }
        }
    }
}

/// Room for one body of a known length.
#[derive(Debug)]
pub(crate) struct BodyMapping {
    /// Always `Some` until [`BodyMapping::freeze`] takes it; dropped, it is parked.
    map: Option<MmapMut>,
    parking: &'static Parking,
}

impl BodyMapping {
    /// The parked mapping if it holds `length` bytes, else a new one of `length` rounded up
    /// to whole huge pages.
    ///
    /// # Errors
    /// The system refused the mapping.
    pub(crate) fn for_length(length: usize) -> std::io::Result<Self> {
        Self::parked_at(&PARKED, length)
    }

    fn parked_at(parking: &'static Parking, length: usize) -> std::io::Result<Self> {
        let map = match parking.take(length) {
            Some(map) => map,
            None => {
                let map = MmapMut::map_anon(length.div_ceil(HUGE_PAGE).max(1) * HUGE_PAGE)?;
                in_huge_pages(&map);
                map
            }
        };
        Ok(Self {
            map: Some(map),
            parking,
        })
    }

    /// All of the mapping, which may be longer than the body it was asked for.
    pub(crate) fn room(&self) -> &[u8] {
        self.map.as_deref().unwrap_or_default()
    }

    /// All of the mapping, to write to.
    pub(crate) fn room_mut(&mut self) -> &mut [u8] {
        self.map.as_deref_mut().unwrap_or_default()
    }

    /// The first `length` bytes, read-only and shareable; the mapping is parked again when
    /// the last slice of them is dropped.
    ///
    /// # Errors
    /// The mapping could not be made read-only.
    pub(crate) fn freeze(mut self, length: usize) -> std::io::Result<Bytes> {
        let Some(map) = self.map.take() else {
            return Ok(Bytes::new());
        };
        let frozen = Frozen(Some(map.make_read_only()?), self.parking);
        Ok(Bytes::from_owner(frozen).slice(..length))
    }
}

impl Drop for BodyMapping {
    fn drop(&mut self) {
        if let Some(map) = self.map.take() {
            self.parking.park(map);
        }
    }
}

/// A frozen body's mapping, owned by its [`Bytes`].
struct Frozen(Option<Mmap>, &'static Parking);

impl AsRef<[u8]> for Frozen {
    fn as_ref(&self) -> &[u8] {
        self.0.as_deref().unwrap_or_default()
    }
}

impl Drop for Frozen {
    fn drop(&mut self) {
        // Made writable again only once nothing can read it; one that cannot be is unmapped.
        if let Some(map) = self.0.take().and_then(|m| m.make_mut().ok()) {
            self.1.park(map);
        }
    }
}

/// Unmaps the parked mapping if it has waited at least `idle_for`; returns how many bytes
/// of address space went back (of which only what a body touched was resident).
pub fn release_idle(idle_for: Duration) -> usize {
    PARKED.release_idle(idle_for)
}

/// Asks for the mapping in huge pages: read into 4 KiB pages, a 27 MiB body takes 6,800
/// faults. All but the first and the last 2 MiB, so that what is resident follows the bytes
/// that arrived: the first byte written to a huge page makes it resident whole, and a client
/// that declares a long body and sends a kilobyte must hold a few small pages, not 2 MiB.
/// A huge page is entered only once the 2 MiB before it have arrived, so a body holds at most
/// twice what it was sent. The last: a body ends somewhere in it. Best effort: a kernel
/// without transparent huge pages refuses, and the body is read the same way; with them on
/// for every mapping (`always`), the small-page parts are asked for explicitly.
fn in_huge_pages(map: &MmapMut) {
    #[cfg(target_os = "linux")]
    {
        let _ = map.advise(memmap2::Advice::NoHugePage);
        if let Some(middle) = map.len().checked_sub(2 * HUGE_PAGE).filter(|&n| n > 0) {
            let _ = map.advise_range(memmap2::Advice::HugePage, HUGE_PAGE, middle);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = map;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A parking place of the test's own, so that tests reading bodies meanwhile do not
    /// take its mapping.
    fn parking() -> &'static Parking {
        Box::leak(Box::new(Parking::new()))
    }

    fn parked_len(parking: &Parking) -> Option<usize> {
        let parked = parking.0.lock().unwrap();
        parked.as_ref().map(|(map, _)| map.len())
    }

    #[test]
    fn a_served_body_leaves_its_mapping_to_the_next_which_sees_only_its_own_bytes() {
        let parking = parking();
        let mut first = BodyMapping::parked_at(parking, 3 << 20).unwrap();
        assert_eq!(first.room().len(), 4 << 20, "whole huge pages");
        first.room_mut()[..3 << 20].fill(b'a');
        let at = first.room().as_ptr();
        let body = first.freeze(3 << 20).unwrap();
        let slice = body.slice(10..20);
        drop(body);
        assert_eq!(parked_len(parking), None, "a slice still reads it");
        assert_eq!(slice, "aaaaaaaaaa");
        drop(slice);
        assert_eq!(parked_len(parking), Some(4 << 20));

        let mut second = BodyMapping::parked_at(parking, 1 << 20).unwrap();
        assert_eq!(second.room().as_ptr(), at, "the same mapping, no new pages");
        assert_eq!(parked_len(parking), None);
        second.room_mut()[..5].copy_from_slice(b"hello");
        let body = second.freeze(5).unwrap();
        assert_eq!(body, "hello", "nothing of the first body shows");
    }

    #[test]
    fn the_larger_mapping_is_kept_and_a_longer_body_gets_a_new_one_in_its_place() {
        let parking = parking();
        let large = BodyMapping::parked_at(parking, 6 << 20).unwrap();
        let small = BodyMapping::parked_at(parking, 1 << 20).unwrap();
        drop(large);
        drop(small);
        assert_eq!(parked_len(parking), Some(6 << 20));

        let longer = BodyMapping::parked_at(parking, 7 << 20).unwrap();
        assert_eq!(longer.room().len(), 8 << 20);
        assert_eq!(parked_len(parking), None, "too small to keep beside it");
        // Dropped unfrozen, as when a body is refused before it is parsed.
        drop(longer);
        assert_eq!(parked_len(parking), Some(8 << 20));
    }

    /// Resident bytes of the mappings within `[start, start + len)`, from `/proc/self/smaps`
    /// (the advice splits one mapping into several entries).
    #[cfg(target_os = "linux")]
    fn resident(start: usize, len: usize) -> usize {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut inside = false;
        let mut kib = 0;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ')
                && let Some((from, to)) = range.split_once('-')
                && let (Ok(from), Ok(to)) = (
                    usize::from_str_radix(from, 16),
                    usize::from_str_radix(to, 16),
                )
            {
                inside = from >= start && to <= start + len;
            } else if inside && let Some(rss) = line.strip_prefix("Rss:") {
                kib += rss
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<usize>()
                    .unwrap();
            }
        }
        kib * 1024
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_long_body_holds_about_the_bytes_that_arrived_not_its_declared_length() {
        let parking = parking();
        let declared = 69_000_000;
        let mut map = BodyMapping::parked_at(parking, declared).unwrap();
        let (start, len) = (map.room().as_ptr() as usize, map.room().len());
        map.room_mut()[..1024].fill(b'x');
        let held = resident(start, len);
        assert!(
            held <= 64 * 1024,
            "1 KiB sent of {declared} declared holds {held} bytes"
        );

        // Further on, huge pages: at most what arrived and the huge page being filled.
        let sent = 5 * HUGE_PAGE + 1000;
        map.room_mut()[..sent].fill(b'y');
        let held = resident(start, len);
        assert!(
            held <= sent + HUGE_PAGE,
            "{sent} bytes sent hold {held} bytes"
        );
    }

    #[test]
    fn a_mapping_parked_long_enough_goes_back() {
        let parking = parking();
        drop(BodyMapping::parked_at(parking, 1).unwrap());
        assert_eq!(parking.release_idle(Duration::from_secs(3600)), 0);
        assert_eq!(parked_len(parking), Some(2 << 20));
        assert_eq!(parking.release_idle(Duration::ZERO), 2 << 20);
        assert_eq!(parked_len(parking), None);
    }
}
