//! Times as people read them: "in 6 days" or "3 hours ago" against the server's clock, with
//! the exact UTC minute on hover and in `datetime` (no script: it is computed here). And the
//! expiry field's `datetime-local` value, stated and read in UTC.

use std::fmt;

use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{OffsetDateTime, PrimitiveDateTime, UtcOffset};

/// A `<time>` element: relative text, exact title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct When {
    datetime: String,
    exact: String,
    relative: String,
}

impl When {
    pub(crate) fn new(t: OffsetDateTime, now: OffsetDateTime) -> When {
        let t = t.to_offset(UtcOffset::UTC);
        When {
            datetime: t.format(&Rfc3339).unwrap_or_default(),
            exact: minute(t),
            relative: relative((t - now).whole_seconds()),
        }
    }
}

/// The element itself; every part is made here of digits and words, so it is safe as HTML.
impl fmt::Display for When {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "<time datetime=\"{}\" title=\"{}\">{}</time>",
            self.datetime, self.exact, self.relative
        )
    }
}

/// `YYYY-MM-DD HH:MM UTC`.
pub(crate) fn minute(t: OffsetDateTime) -> String {
    let t = t.to_offset(UtcOffset::UTC);
    format!("{} {:02}:{:02} UTC", t.date(), t.hour(), t.minute())
}

fn relative(secs: i64) -> String {
    let span = secs.unsigned_abs();
    let (n, unit) = match span {
        0..60 => return "just now".into(),
        60..3_600 => (span / 60, "minute"),
        3_600..172_800 => (span / 3_600, "hour"),
        172_800..5_184_000 => (span / 86_400, "day"),
        5_184_000..63_072_000 => (span / 2_592_000, "month"),
        _ => (span / 31_536_000, "year"),
    };
    let plural = if n == 1 { "" } else { "s" };
    if secs > 0 {
        format!("in {n} {unit}{plural}")
    } else {
        format!("{n} {unit}{plural} ago")
    }
}

/// The value of an `<input type="datetime-local">` showing `t` in UTC.
pub(crate) fn local_input(t: OffsetDateTime) -> String {
    let t = t.to_offset(UtcOffset::UTC);
    format!("{}T{:02}:{:02}", t.date(), t.hour(), t.minute())
}

/// An expiry as posted: a `datetime-local` value (`2026-12-01T00:00`, seconds optional) read
/// as UTC, or RFC 3339 as the API takes it; returned as RFC 3339 for the page service, which
/// judges it. `None` when it is neither (the service then says why).
pub(crate) fn expiry_field(raw: &str) -> Option<String> {
    let raw = raw.trim();
    if OffsetDateTime::parse(raw, &Rfc3339).is_ok() {
        return Some(raw.to_owned());
    }
    let minutes = format_description!("[year]-[month]-[day]T[hour]:[minute]");
    let seconds = format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]");
    PrimitiveDateTime::parse(raw, &minutes)
        .or_else(|_| PrimitiveDateTime::parse(raw, &seconds))
        .ok()
        .and_then(|t| t.assume_utc().format(&Rfc3339).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn relative_times_read_as_words_with_the_exact_minute_on_hover() {
        let now = datetime!(2026-11-25 00:00 UTC);
        let w = When::new(datetime!(2026-12-01 00:00 UTC), now);
        assert_eq!(
            w.to_string(),
            "<time datetime=\"2026-12-01T00:00:00Z\" title=\"2026-12-01 00:00 UTC\">in 6 days</time>"
        );
        let cases = [
            (datetime!(2026-11-25 00:00:30 UTC), "just now"),
            (datetime!(2026-11-24 23:59 UTC), "1 minute ago"),
            (datetime!(2026-11-25 05:10 UTC), "in 5 hours"),
            (datetime!(2026-11-23 00:00 UTC), "2 days ago"),
            (datetime!(2027-03-01 00:00 UTC), "in 3 months"),
            (datetime!(2024-11-01 00:00 UTC), "2 years ago"),
        ];
        for (t, text) in cases {
            assert_eq!(relative((t - now).whole_seconds()), text, "{t}");
        }
    }

    #[test]
    fn the_expiry_field_is_read_in_utc_and_still_takes_rfc_3339() {
        assert_eq!(
            expiry_field("2026-12-01T09:30").as_deref(),
            Some("2026-12-01T09:30:00Z")
        );
        assert_eq!(
            expiry_field("2026-12-01T09:30:15").as_deref(),
            Some("2026-12-01T09:30:15Z")
        );
        assert_eq!(
            expiry_field(" 2026-12-01T09:30:00+02:00 ").as_deref(),
            Some("2026-12-01T09:30:00+02:00")
        );
        assert_eq!(expiry_field("next tuesday"), None);
        assert_eq!(expiry_field("2026-13-01T00:00"), None);
        assert_eq!(
            local_input(datetime!(2026-12-01 11:30 +02:00)),
            "2026-12-01T09:30"
        );
    }
}
