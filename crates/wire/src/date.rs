//! The `Date` header, formatted once a second per worker thread rather than per answer.

use std::cell::RefCell;
use std::time::{SystemTime, UNIX_EPOCH};

thread_local! {
    static NOW: RefCell<(u64, String)> = const { RefCell::new((u64::MAX, String::new())) };
}

/// Appends today's `Date` value (an IMF-fixdate, 29 bytes) to `out`.
pub(super) fn append(out: &mut Vec<u8>) {
    let now = SystemTime::now();
    let secs = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    NOW.with_borrow_mut(|(at, text)| {
        if *at != secs {
            *at = secs;
            *text = httpdate::fmt_http_date(now);
        }
        out.extend_from_slice(text.as_bytes());
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_date_is_an_imf_fixdate_of_now() {
        let mut out = Vec::new();
        append(&mut out);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.len(), 29, "{text}");
        assert!(text.ends_with(" GMT"), "{text}");
        let parsed = httpdate::parse_http_date(&text).unwrap();
        let skew = SystemTime::now().duration_since(parsed).unwrap();
        assert!(skew.as_secs() <= 2, "{text}");
    }
}
