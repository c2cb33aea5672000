//! How long Quire waits for a data API request's statements. PostgreSQL's
//! `statement_timeout` is no bound of its own: a tenant's function may set it to 0 for
//! itself (`CREATE FUNCTION … SET statement_timeout = 0`) and catch every cancel. So each
//! request also has a deadline on Quire's side, its role's timeout and a margin, past which
//! its connection is let go of and its backend ended (`abandon.rs`).

use std::time::Duration;

use quire_databases::PgRefusal;

/// A request's deadline: the `statement_timeout` its role has in the database (as the
/// catalog says it, at most `longest`; `longest` when the catalog says none), and `margin`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Deadline {
    pub longest: Duration,
    pub margin: Duration,
}

impl Deadline {
    /// The deadline of a request whose role's `statement_timeout` setting is `setting`.
    pub fn of(&self, setting: Option<&str>) -> Duration {
        let timeout = setting
            .and_then(statement_timeout)
            .map_or(self.longest, |t| t.min(self.longest));
        timeout + self.margin
    }
}

/// A `statement_timeout` as PostgreSQL stores it (`3000ms`, `3s`, `1min`, or milliseconds
/// bare); `None` for 0 (no limit) and what does not read as one.
fn statement_timeout(text: &str) -> Option<Duration> {
    let text = text.trim().trim_matches('\'');
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let ms_per = match unit.trim() {
        "" | "ms" => 1.0,
        "us" => 0.001,
        "s" => 1_000.0,
        "min" => 60_000.0,
        "h" => 3_600_000.0,
        "d" => 86_400_000.0,
        _ => return None,
    };
    let ms = number * ms_per;
    (ms.is_finite() && ms > 0.0).then(|| Duration::from_secs_f64(ms / 1_000.0))
}

/// What a request past its deadline answers: PostgreSQL's own code for a cancelled
/// statement (PostgREST answers it 500, as for a statement timeout), and Quire's figure.
pub(crate) fn past(deadline: Duration) -> PgRefusal {
    PgRefusal {
        sqlstate: "57014".to_owned(),
        message: format!(
            "canceling statement: it ran longer than Quire allows ({} s)",
            deadline.as_secs_f64().ceil()
        ),
        detail: None,
        hint: Some(
            "A function may not lift the statement timeout of the data API: make the query \
             faster, or run it as the database's owner"
                .to_owned(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogs_timeouts_read_as_postgresql_writes_them() {
        let ms = |n| Some(Duration::from_millis(n));
        assert_eq!(statement_timeout("3000ms"), ms(3_000));
        assert_eq!(statement_timeout("3s"), ms(3_000));
        assert_eq!(statement_timeout("1.5s"), ms(1_500));
        assert_eq!(statement_timeout("2min"), ms(120_000));
        assert_eq!(statement_timeout("250"), ms(250));
        assert_eq!(statement_timeout("'8000ms'"), ms(8_000));
        for none in ["0", "0ms", "", "soon", "3 parsecs", "-1"] {
            assert_eq!(statement_timeout(none), None, "{none}");
        }
    }

    #[test]
    fn a_deadline_is_the_roles_timeout_at_most_the_longest_and_a_margin() {
        let deadline = Deadline {
            longest: Duration::from_secs(8),
            margin: Duration::from_secs(2),
        };
        assert_eq!(deadline.of(Some("3000ms")), Duration::from_secs(5));
        assert_eq!(deadline.of(Some("1h")), Duration::from_secs(10));
        assert_eq!(deadline.of(Some("0")), Duration::from_secs(10));
        assert_eq!(deadline.of(None), Duration::from_secs(10));
    }

    #[test]
    fn past_the_deadline_is_a_cancelled_statement_with_quires_figure() {
        let refusal = past(Duration::from_millis(4_500));
        assert_eq!(refusal.sqlstate, "57014");
        assert!(
            refusal.message.ends_with("Quire allows (5 s)"),
            "{}",
            refusal.message
        );
    }
}
