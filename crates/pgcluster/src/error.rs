//! PostgreSQL's failures as the port's errors: the SQLSTATE and PostgreSQL's message, never
//! the statement (provisioning statements hold role verifiers, user SQL is the user's).

use std::fmt;

use quire_databases::SqlRefusal;
use quire_kernel::{InfraError, InfraKind};
use tokio_postgres::error::{DbError, ErrorPosition};

/// What failed, for the message of an [`InfraError`].
#[derive(Debug)]
pub(crate) struct PgFailure {
    what: String,
    sqlstate: Option<String>,
    message: String,
}

impl fmt::Display for PgFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.sqlstate {
            Some(code) => write!(f, "{}: {} (SQLSTATE {code})", self.what, self.message),
            None => write!(f, "{}: {}", self.what, self.message),
        }
    }
}

impl std::error::Error for PgFailure {}

/// Whether a SQLSTATE says the cluster, not the statement, is the trouble: connection
/// exceptions, too many connections, a server shutting down or not yet up, system and
/// internal errors.
pub(crate) fn cluster_trouble(code: &str) -> bool {
    code.starts_with("08")
        || code == "53300"
        || code.starts_with("57P")
        || code.starts_with("58")
        || code.starts_with("XX")
}

/// `e` as an [`InfraError`] saying `what` failed. Errors that did not come from the server
/// (I/O, a closed connection, the connect timeout) and [`cluster_trouble`] are
/// `Unavailable`; the rest `Failed`.
pub(crate) fn infra(what: impl Into<String>, e: &tokio_postgres::Error) -> InfraError {
    let (kind, failure) = match e.as_db_error() {
        Some(db) => {
            let code = db.code().code();
            let kind = if cluster_trouble(code) {
                InfraKind::Unavailable
            } else {
                InfraKind::Failed
            };
            (
                kind,
                PgFailure {
                    what: what.into(),
                    sqlstate: Some(code.to_owned()),
                    message: db.message().to_owned(),
                },
            )
        }
        None => (
            InfraKind::Unavailable,
            PgFailure {
                what: what.into(),
                sqlstate: None,
                message: e.to_string(),
            },
        ),
    };
    InfraError::caused_by(kind, failure)
}

/// The SQLSTATE of a failure this module made from a server's error.
pub(crate) fn sqlstate_of(e: &InfraError) -> Option<&str> {
    std::error::Error::source(e)?
        .downcast_ref::<PgFailure>()?
        .sqlstate
        .as_deref()
}

/// A step that did not finish within its deadline.
pub(crate) fn timed_out(what: impl Into<String>, after: std::time::Duration) -> InfraError {
    InfraError::caused_by(
        InfraKind::Unavailable,
        PgFailure {
            what: what.into(),
            sqlstate: None,
            message: format!("no answer within {} ms", after.as_millis()),
        },
    )
}

/// PostgreSQL's refusal of a user's SQL, in its own words.
pub(crate) fn refusal(db: &DbError) -> SqlRefusal {
    SqlRefusal {
        message: db.message().to_owned(),
        sqlstate: db.code().code().to_owned(),
        detail: db.detail().map(str::to_owned),
        hint: db.hint().map(str::to_owned),
        // An internal position points into a query PostgreSQL made (a function body), not
        // into the user's SQL.
        position: match db.position() {
            Some(ErrorPosition::Original(p)) => Some(*p),
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::cluster_trouble;

    #[test]
    fn cluster_trouble_is_the_servers_not_the_statements() {
        for code in [
            "08006", "53300", "57P01", "57P03", "57P04", "58030", "XX000",
        ] {
            assert!(cluster_trouble(code), "{code}");
        }
        for code in ["42601", "42P01", "57014", "23505", "53200"] {
            assert!(!cluster_trouble(code), "{code}");
        }
    }
}
