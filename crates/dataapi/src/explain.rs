//! `Accept: application/vnd.pgrst.plan`: the request's statement under `EXPLAIN`, answered
//! as PostgREST answers it (its `db-plan-enabled`): the plan in text (the default) or JSON,
//! `for=` the media type whose statement is explained (JSON by default), with the options
//! `analyze`, `verbose`, `settings`, `buffers` and `wal`. `analyze` runs the statement, a
//! write included, which commits unless `Prefer: tx=rollback` says otherwise, as behind
//! PostgREST.

use crate::headers::Media;

/// The options PostgREST passes on, in its order: (name in the media type, in SQL).
const OPTIONS: [(&str, &str); 5] = [
    ("analyze", "ANALYZE"),
    ("verbose", "VERBOSE"),
    ("settings", "SETTINGS"),
    ("buffers", "BUFFERS"),
    ("wal", "WAL"),
];

/// A plan asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Explain {
    pub json: bool,
    /// The media type explained.
    pub of: Media,
    /// Which of [`OPTIONS`] were asked for.
    options: [bool; 5],
}

impl Explain {
    /// `subtype` is `vnd.pgrst.plan`, `+text` or `+json`; `of` the `for=` media type read;
    /// `options` the `options=` parameter (`analyze|verbose`), unknown names ignored.
    pub fn new(subtype: &str, of: Media, options: Option<&str>) -> Explain {
        let asked: Vec<&str> = options.unwrap_or("").split('|').map(str::trim).collect();
        let mut flags = [false; 5];
        for (i, (name, _)) in OPTIONS.iter().enumerate() {
            flags[i] = asked.iter().any(|a| a.eq_ignore_ascii_case(name));
        }
        Explain {
            json: subtype.ends_with("+json"),
            of,
            options: flags,
        }
    }

    /// `statement` under `EXPLAIN (FORMAT …, options)`.
    pub fn wrap(&self, statement: &str) -> String {
        let mut parts = vec![if self.json {
            "FORMAT JSON"
        } else {
            "FORMAT TEXT"
        }];
        parts.extend(
            OPTIONS
                .iter()
                .zip(self.options)
                .filter(|(_, on)| *on)
                .map(|((_, sql), _)| *sql),
        );
        format!("EXPLAIN ({}) {statement}", parts.join(", "))
    }

    /// The media type as PostgREST names it: in `Content-Type`, and in a 406's list.
    pub fn media_type(&self) -> String {
        let format = if self.json { "json" } else { "text" };
        let mut mt = format!(
            "application/vnd.pgrst.plan+{format}; for=\"{}\"",
            self.of.mime()
        );
        let named: Vec<&str> = OPTIONS
            .iter()
            .zip(self.options)
            .filter(|(_, on)| *on)
            .map(|((name, _), _)| *name)
            .collect();
        if !named.is_empty() {
            mt.push_str(&format!("; options={}", named.join("|")));
        }
        mt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statement_is_explained_with_the_options_asked_in_postgrests_order() {
        let e = Explain::new("vnd.pgrst.plan", Media::Json, None);
        assert_eq!(e.wrap("SELECT 1"), "EXPLAIN (FORMAT TEXT) SELECT 1");
        assert_eq!(
            e.media_type(),
            "application/vnd.pgrst.plan+text; for=\"application/json\""
        );
        let e = Explain::new(
            "vnd.pgrst.plan+json",
            Media::Singular { strip: false },
            Some("wal|Verbose|nonsense|analyze|"),
        );
        assert_eq!(
            e.wrap("SELECT 1"),
            "EXPLAIN (FORMAT JSON, ANALYZE, VERBOSE, WAL) SELECT 1"
        );
        assert_eq!(
            e.media_type(),
            "application/vnd.pgrst.plan+json; for=\"application/vnd.pgrst.object+json\"; \
             options=analyze|verbose|wal"
        );
    }
}
