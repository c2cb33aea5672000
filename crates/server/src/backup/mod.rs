//! `admin backup DIR` and `admin restore DIR` (`docs/decisions/backups.md`).
//!
//! A backup is a directory: `manifest.json` (written last, so a directory without it is no
//! backup), `quire.db` (SQLite, copied online with `VACUUM INTO`), `bundles/` (the local
//! bundle storage: pages' files and objects' bytes) and `secret.key` (the sealing key, mode
//! 0600). On PostgreSQL the command prints the `pg_dump` to run instead of copying the
//! database. Restoring stages every copy beside its target, then moves the current files
//! aside (`*.before-restore-<time>`) and renames the copies into place.
//!
//! `take.rs` makes a backup, `restore.rs` brings one back; `files.rs` copies trees with
//! progress, `sqlite.rs` copies and reads the SQLite database.

use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection as _;
use diesel::{Connection as _, QueryableByName, RunQueryDsl as _, SqliteConnection};
use serde_json::json;

use crate::config::Config;
use crate::error::ServerError;

/// What the manifest's `format` says.
const FORMAT: &str = "quire-backup";
/// The manifest's version; restore takes this one only.
const VERSION: u64 = 1;
const MANIFEST: &str = "manifest.json";
const DB_FILE: &str = "quire.db";
const BUNDLES_DIR: &str = "bundles";
const KEY_FILE: &str = "secret.key";
/// Where the printed `pg_dump` writes, inside the backup.
const PG_DUMP: &str = "database.pgdump";
/// Rounds of "copy the database, copy the files, check every named file is there" before
/// the backup gives up on a storage that keeps changing under it.
const ROUNDS: usize = 5;
/// What the backup never holds, as the manifest and the output say.
const NOT_INCLUDED: &[&str] = &[
    "tenant databases of the database service (QUIRE_DATABASES_URL or QUIRE_DATABASES=local): \
     dump them with pg_dump/pg_dumpall on that cluster",
    "the mail outbox (QUIRE_OUTBOX_DIR), where messages go when no relay is set",
    "the configuration (quire.toml, QUIRE_* variables, AWS_* credentials)",
];

#[allow(clippy::print_stdout)]
fn say(line: &str) {
    println!("{line}");
    let _ = std::io::stdout().flush();
}

fn fail(what: impl Into<String>) -> ServerError {
    ServerError::Backup(what.into())
}

fn io_fail(what: &str, path: &Path, e: &std::io::Error) -> ServerError {
    fail(format!("{what} {}: {e}", path.display()))
}

/// `1234567 bytes (1.2 MiB)`.
fn size(bytes: u64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let b = bytes as f64;
    let human = if bytes < 1024 {
        return format!("{bytes} bytes");
    } else if b < 1024.0 * 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else if b < 1024.0 * 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / 1024.0 / 1024.0)
    } else {
        format!("{:.2} GiB", b / 1024.0 / 1024.0 / 1024.0)
    };
    format!("{bytes} bytes ({human})")
}

fn sqlite_path(url: &str) -> Option<&str> {
    url.strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
}

/// The URL without its password (and without a `password=` parameter), to print.
fn redacted(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            let _ = u.set_password(None);
            let kept: Vec<(String, String)> = u
                .query_pairs()
                .filter(|(k, _)| k != "password")
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            if kept.is_empty() {
                u.set_query(None);
            } else {
                u.query_pairs_mut().clear().extend_pairs(kept);
            }
            u.to_string()
        }
        Err(_) => "<the QUIRE_DATABASE_URL>".into(),
    }
}

/// Shell quoting, for the printed commands.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

fn now() -> time::OffsetDateTime {
    time::OffsetDateTime::now_utc()
}

/// `20261201T093000Z`: the suffix of what a restore moves aside.
fn stamp(t: time::OffsetDateTime) -> String {
    format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// Files and bytes copied, with a progress line every few seconds.
fn is_empty_dir(dir: &Path, allowed: &[&str]) -> Result<bool, ServerError> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => Ok(entries.all(|e| {
            e.is_ok_and(|e| {
                allowed
                    .iter()
                    .any(|a| e.file_name() == std::ffi::OsStr::new(a))
            })
        })),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(io_fail("cannot read", dir, &e)),
    }
}

fn write_manifest(dir: &Path, manifest: &serde_json::Value) -> Result<(), ServerError> {
    let tmp = dir.join(format!("{MANIFEST}.tmp"));
    let text = serde_json::to_string_pretty(manifest)
        .map_err(|e| fail(format!("cannot write the manifest: {e}")))?;
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        std::fs::rename(&tmp, dir.join(MANIFEST))
    };
    write().map_err(|e| io_fail("cannot write", &dir.join(MANIFEST), &e))
}

mod files;
mod restore;
mod sqlite;
mod take;

pub(crate) use restore::restore;
pub(crate) use take::backup;

#[cfg(test)]
mod tests {
    use super::sqlite::{open_sqlite, sqlite_in_use};
    use super::*;

    #[test]
    fn passwords_are_left_out_of_printed_urls() {
        assert_eq!(
            redacted("postgres://quire:s3cret@db.example:5432/quire?sslmode=require&password=x"),
            "postgres://quire@db.example:5432/quire?sslmode=require"
        );
        assert_eq!(redacted("postgres://db/quire"), "postgres://db/quire");
        assert_eq!(quoted("it's"), r"'it'\''s'");
    }

    #[test]
    fn a_live_connection_is_seen_and_a_closed_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.db");
        let mut live = open_sqlite(&path).unwrap();
        live.batch_execute(
            "PRAGMA journal_mode = WAL; CREATE TABLE t (x); INSERT INTO t VALUES (1);",
        )
        .unwrap();
        assert!(sqlite_in_use(&path).unwrap());
        drop(live);
        assert!(!sqlite_in_use(&path).unwrap());
        assert!(!sqlite_in_use(&dir.path().join("none.db")).unwrap());
        assert!(!dir.path().join("none.db").exists());
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(size(10), "10 bytes");
        assert_eq!(size(2048), "2048 bytes (2.0 KiB)");
    }
}
