//! `COPY … FROM STDIN` and `COPY … TO STDOUT` in the owner's SQL, refused before anything
//! runs.
//!
//! Either one makes the server switch the connection to copy mode, which a simple query
//! cannot answer: copy data in, or copy data out that has nowhere to go. Only a top-level
//! statement can do it (PL/pgSQL and SQL functions refuse to copy to or from the client),
//! so a lexical look at each statement ([`crate::split`]) finds every one the server would
//! run. A `COPY` naming a file or a program needs privileges an owner does not have, and
//! the server refuses it in its own words. Should a copy slip past this all the same, the
//! run sees an unexpected message, answers with [`unexpected`] and lets the connection go
//! ([`crate::session`]).

use quire_databases::SqlRefusal;

use crate::split::statements;

/// Feature not supported: what the server itself says of what it cannot do here.
const SQLSTATE: &str = "0A000";

const HINT: &str = "Load rows with INSERT … VALUES (or INSERT … SELECT), and read them with \
                    SELECT.";

/// The refusal of the first statement that copies to or from the client, if any.
pub(crate) fn client_copy(sql: &str) -> Option<SqlRefusal> {
    statements(sql).into_iter().find_map(|statement| {
        let head = statement.first()?;
        let copies = head.is_word(sql, "copy")
            && statement[1..]
                .iter()
                .any(|t| t.is_word(sql, "stdin") || t.is_word(sql, "stdout"));
        copies.then(|| SqlRefusal {
            message: "COPY … FROM STDIN and COPY … TO STDOUT are not supported here: Quire \
                      runs SQL without copy data in or out"
                .into(),
            sqlstate: SQLSTATE.into(),
            detail: None,
            hint: Some(HINT.into()),
            position: u32::try_from(sql[..head.start].chars().count() + 1).ok(),
        })
    })
}

/// What the owner hears when the server answered in a way a simple query cannot take (a
/// copy the check above did not see).
pub(crate) fn unexpected() -> SqlRefusal {
    SqlRefusal {
        message: "the server answered with copy data or another message Quire's SQL does not \
                  take (COPY … FROM STDIN or TO STDOUT?); the statement was abandoned"
            .into(),
        sqlstate: SQLSTATE.into(),
        detail: None,
        hint: Some(HINT.into()),
        position: None,
    }
}

#[cfg(test)]
mod tests {
    use super::client_copy;

    fn position(sql: &str) -> Option<u32> {
        client_copy(sql).map(|r| r.position.unwrap_or(0))
    }

    #[test]
    fn copies_to_or_from_the_client_are_refused_where_they_stand() {
        assert_eq!(position("copy t from stdin"), Some(1));
        assert_eq!(
            position("create temp table t(x text); COPY t FROM STDIN"),
            Some(30)
        );
        assert_eq!(position("select 'é'; copy (select 1) to stdout"), Some(13));
        assert_eq!(position("copy t(a) from stdin with (format csv)"), Some(1));
        assert_eq!(position("copy/**/t from/**/stdin"), Some(1));
        assert_eq!(position("  Copy t To StdOut;"), Some(3));
        let refusal = client_copy("copy t from stdin").unwrap_or_else(|| unreachable!());
        assert_eq!(refusal.sqlstate, "0A000");
        assert!(refusal.message.contains("STDIN"), "{refusal:?}");
        assert!(refusal.hint.unwrap_or_default().contains("INSERT"));
    }

    #[test]
    fn what_is_no_client_copy_goes_to_the_server() {
        for sql in [
            "select 'copy t from stdin'",
            "select 1; -- copy t from stdin",
            "copy t from '/tmp/file'",
            "copy t to program 'cat'",
            r#"copy t from "stdin""#,
            "create table copy (stdin int); select stdin from copy",
            "do $$ begin copy t from stdin; end $$",
            "/* copy t from stdin; */ select 1",
            "",
        ] {
            assert_eq!(client_copy(sql), None, "{sql}");
        }
    }
}
