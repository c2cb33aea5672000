//! A JSON body with its long strings cut out, for [`crate::json::parse_sharing`]: serde
//! checks every byte of every string it parses (for the closing quote, escapes and control
//! characters, then UTF-8), which for a publish's 27 MiB of base64 took 5.7-6.6 ms on one core
//! while the other waited. Strings of at least [`LONG_STRING`] bytes with no escapes and only
//! printable ASCII are found with `memchr` and checked here instead, and each is left in the
//! skeleton as `""`, a hole that stands for its place in the body. serde then parses the
//! 60 KiB that remain: 3.2-4.0 ms in all.
//!
//! A hole's text is valid in any JSON string (printable ASCII holds no control character and
//! no invalid UTF-8), so cutting it out hides nothing serde would have refused. A string with
//! escapes or other bytes stays in the skeleton for serde to judge. The scan only finds where
//! strings begin and end (a quote outside a string opens one; inside, a backslash escapes the
//! next byte and a quote closes it), and a body whose last string never closes has no
//! skeleton: serde reads it whole and says what is wrong.

use std::ops::Range;

use quire_kernel::parallel::map_in_order;

/// Strings at least this long are cut out; shorter ones cost serde little.
const LONG_STRING: usize = 4096;

/// A skeleton is made only when it keeps at most this fraction of the body (1 in 8): a body
/// whose long strings mostly stay would be held twice, for no gain.
const KEPT_AT_MOST: usize = 8;

/// Below this much text in long strings, one thread checks it all.
const PARALLEL_CHECK_BYTES: usize = 1 << 20;

/// A body's JSON with its long strings left as holes (`""`).
#[derive(Debug)]
pub(crate) struct Skeleton {
    text: Vec<u8>,
    holes: Holes,
}

/// Where the skeleton's holes are, and what they stand for in the body.
#[derive(Debug, Default)]
pub(crate) struct Holes(Vec<Hole>);

#[derive(Debug, Clone)]
struct Hole {
    /// Where the hole's (empty) text lies in the skeleton: just after its opening quote.
    at: usize,
    /// The string's text in the body, quotes excluded.
    text: Range<usize>,
}

/// What a piece of the skeleton's text stands for in the body.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// The long string of this hole (its index), whose text is `body[range]`.
    Hole(usize, Range<usize>),
    /// The same text, at `body[range]`.
    Body(Range<usize>),
}

impl Skeleton {
    /// `body`'s skeleton, or `None` when it has no long string to cut out, when it would
    /// keep more than an eighth of the body, or when a string never closes (which serde
    /// reports).
    pub(crate) fn of(body: &[u8]) -> Option<Skeleton> {
        let long = long_strings(body)?;
        let bytes: usize = long.iter().map(ExactSizeIterator::len).sum();
        let printable = map_in_order(long.clone(), bytes >= PARALLEL_CHECK_BYTES, |text| {
            printable_ascii(&body[text])
        });
        let cut: Vec<Range<usize>> = long
            .into_iter()
            .zip(printable)
            .filter_map(|(string, fit)| fit.then_some(string))
            .collect();
        // Judged before anything is copied, so such a body is never held twice.
        let kept = body.len() - cut.iter().map(ExactSizeIterator::len).sum::<usize>();
        if cut.is_empty() || kept > body.len() / KEPT_AT_MOST {
            return None;
        }
        let mut text = Vec::with_capacity(kept);
        let mut holes = Vec::with_capacity(cut.len());
        let mut copied = 0;
        for string in cut {
            text.extend_from_slice(&body[copied..string.start]);
            copied = string.end;
            holes.push(Hole {
                at: text.len(),
                text: string,
            });
        }
        text.extend_from_slice(&body[copied..]);
        Some(Skeleton {
            text,
            holes: Holes(holes),
        })
    }

    /// The skeleton's text and its holes, to parse the one while the other is lent.
    pub(crate) fn into_parts(self) -> (Vec<u8>, Holes) {
        (self.text, self.holes)
    }
}

impl Holes {
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// What `text`, a range of the skeleton, stands for in the body: a hole when it is the
    /// empty text of one, otherwise the same bytes moved by the holes before them.
    pub(crate) fn place(&self, text: Range<usize>) -> Place {
        // The holes at or before the text's start; a hole's own text is empty.
        let before = self.0.partition_point(|h| h.at <= text.start);
        if let Some(last) = before.checked_sub(1) {
            let hole = &self.0[last];
            if text.is_empty() && hole.at == text.start {
                return Place::Hole(last, hole.text.clone());
            }
            // Everything after a hole lies in the body where the skeleton has it, moved
            // by the length of every string cut out before it.
            let moved = hole.text.end - hole.at;
            return Place::Body(text.start + moved..text.end + moved);
        }
        Place::Body(text)
    }
}

/// The text (quotes excluded) of every string in `body` of at least [`LONG_STRING`] bytes
/// with no escapes, in order; `None` when a string never closes.
fn long_strings(body: &[u8]) -> Option<Vec<Range<usize>>> {
    let mut long = Vec::new();
    let mut at = 0;
    while let Some(quote) = memchr::memchr(b'"', &body[at..]) {
        let start = at + quote + 1;
        let mut scan = start;
        let mut escaped = false;
        let end = loop {
            let next = scan + memchr::memchr2(b'"', b'\\', body.get(scan..)?)?;
            if body[next] == b'"' {
                break next;
            }
            // A backslash and the byte it escapes; neither can close the string.
            escaped = true;
            scan = next + 2;
        };
        if !escaped && end - start >= LONG_STRING {
            long.push(start..end);
        }
        at = end + 1;
    }
    Some(long)
}

/// Whether every byte is printable ASCII (space to `~`, and DEL): text that needs no check
/// inside a JSON string. In blocks, without an early exit, so that it is vectorised.
fn printable_ascii(text: &[u8]) -> bool {
    text.chunks(64).all(|block| {
        block
            .iter()
            .fold(true, |fit, &b| fit & (b.wrapping_sub(0x20) < 0x60))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn long(c: char) -> String {
        c.to_string().repeat(LONG_STRING)
    }

    #[test]
    fn long_plain_strings_become_holes_that_map_back_to_the_body() {
        let (a, b) = (long('a'), long('b'));
        let body = format!(r#"{{"t":"short","x":["{a}","{b}"],"u":"after"}}"#);
        let skeleton = Skeleton::of(body.as_bytes()).unwrap();
        let (text, holes) = skeleton.into_parts();
        assert_eq!(
            String::from_utf8(text.clone()).unwrap(),
            r#"{"t":"short","x":["",""],"u":"after"}"#
        );
        assert_eq!(holes.len(), 2);
        let first = body.find('a').unwrap();
        let second = body.find('b').unwrap();
        // Each hole's empty text lies between the two quotes of a `""`.
        let hole_at: Vec<usize> = text
            .windows(2)
            .enumerate()
            .filter(|(_, pair)| pair == b"\"\"")
            .map(|(i, _)| i + 1)
            .collect();
        assert_eq!(
            holes.place(hole_at[0]..hole_at[0]),
            Place::Hole(0, first..first + LONG_STRING)
        );
        assert_eq!(
            holes.place(hole_at[1]..hole_at[1]),
            Place::Hole(1, second..second + LONG_STRING)
        );
        // Text before, between and after the holes maps to the same bytes in the body.
        for word in ["short", "after", "u"] {
            let in_text = find(&text, word);
            let Place::Body(range) = holes.place(in_text.clone()) else {
                panic!("{word} is not a hole");
            };
            assert_eq!(&body.as_bytes()[range], word.as_bytes());
        }
    }

    fn find(text: &[u8], word: &str) -> Range<usize> {
        let at = text
            .windows(word.len())
            .position(|w| w == word.as_bytes())
            .unwrap();
        at..at + word.len()
    }

    #[test]
    fn strings_serde_must_judge_stay_in_the_skeleton() {
        let plain = long('p').repeat(32);
        // Escapes, a control character, non-ASCII text and a short string all stay.
        let escaped = format!("{}\\\"{}", long('e'), long('e'));
        let control = format!("{}\u{1}", long('c'));
        let accented = format!("{}é", long('n'));
        let body = format!(
            r#"{{"a":"{plain}","b":"{escaped}","c":"{control}","d":"{accented}","e":"tiny"}}"#
        );
        let (text, holes) = Skeleton::of(body.as_bytes()).unwrap().into_parts();
        assert_eq!(holes.len(), 1);
        let kept = String::from_utf8(text).unwrap();
        assert_eq!(kept.len(), body.len() - plain.len());
        for stays in [&escaped, &control, &accented] {
            assert!(kept.contains(stays.as_str()));
        }
        assert!(!kept.contains(&plain));
    }

    #[test]
    fn no_skeleton_without_long_strings_or_when_a_string_never_closes() {
        assert!(Skeleton::of(br#"{"a":"short","b":["x","y"]}"#).is_none());
        // One long string cut out of a body that is mostly other text: it would be held
        // nearly twice.
        let mostly_kept = format!(r#"{{"a":"{}","b":"{}é"}}"#, long('p'), long('q'));
        assert!(Skeleton::of(mostly_kept.as_bytes()).is_none());
        let open = format!(r#"{{"a":"{}"#, long('o'));
        assert!(Skeleton::of(open.as_bytes()).is_none());
        let dangling = format!(r#"{{"a":"{}","b":"x\"#, long('o'));
        assert!(Skeleton::of(dangling.as_bytes()).is_none());
    }

    #[test]
    fn printable_ascii_takes_space_to_del_only() {
        let all: Vec<u8> = (0x20..=0x7f).collect();
        assert!(printable_ascii(&all.repeat(3)));
        for bad in [0x00, 0x1f, 0x80, 0xc3, 0xff] {
            let mut text = all.repeat(3);
            text[100] = bad;
            assert!(!printable_ascii(&text), "{bad:#x}");
        }
    }
}
