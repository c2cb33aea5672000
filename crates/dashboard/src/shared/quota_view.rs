//! An account's use of a quota as the dashboard words it: "3 of 10", "24.1 MiB of 1.0 GiB",
//! and whether it is near (80 % or more), which the Databases page and the admin's account
//! list both show.

use quire_kernel::Usage;

use crate::pages::row::human_bytes;

/// One quota's figures, worded.
pub(crate) struct QuotaFigure {
    pub text: String,
    /// At 80 % of the cap or more.
    pub near: bool,
}

/// A count beside its cap: `3 of 10`, or `3` with no cap.
pub(crate) fn count(u: Usage) -> QuotaFigure {
    worded(u, |n| n.to_string())
}

/// Bytes beside their cap: `24.1 MiB of 1.0 GiB`.
pub(crate) fn bytes(u: Usage) -> QuotaFigure {
    worded(u, human_bytes)
}

fn worded(u: Usage, show: impl Fn(u64) -> String) -> QuotaFigure {
    QuotaFigure {
        text: match u.limit {
            Some(limit) => format!("{} of {}", show(u.used), show(limit)),
            None => show(u.used),
        },
        near: u.near(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_read_as_use_of_cap() {
        let c = count(Usage::of(8, 10));
        assert_eq!((c.text.as_str(), c.near), ("8 of 10", true));
        let b = bytes(Usage::of(1_536, 1 << 30));
        assert_eq!((b.text.as_str(), b.near), ("1.5 KiB of 1.0 GiB", false));
        assert_eq!(count(Usage::of(3, 0)).text, "3");
    }
}
