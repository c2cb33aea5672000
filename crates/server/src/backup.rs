//! `admin backup DIR` and `admin restore DIR` (`docs/decisions/backups.md`).
//!
//! A backup is a directory: `manifest.json` (written last, so a directory without it is no
//! backup), `quire.db` (SQLite, copied online with `VACUUM INTO`), `bundles/` (the local
//! bundle storage: pages' files and objects' bytes) and `secret.key` (the sealing key, mode
//! 0600). On PostgreSQL the command prints the `pg_dump` to run instead of copying the
//! database. Restoring stages every copy beside its target, then moves the current files
//! aside (`*.before-restore-<time>`) and renames the copies into place.

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
struct Tally {
    what: &'static str,
    files: u64,
    bytes: u64,
    skipped: u64,
    last: Instant,
}

impl Tally {
    fn new(what: &'static str) -> Self {
        Self {
            what,
            files: 0,
            bytes: 0,
            skipped: 0,
            last: Instant::now(),
        }
    }

    fn add(&mut self, bytes: u64) {
        self.files += 1;
        self.bytes += bytes;
        if self.last.elapsed() >= Duration::from_secs(5) {
            self.last = Instant::now();
            say(&format!(
                "  {}: {} files, {} so far",
                self.what,
                self.files,
                size(self.bytes)
            ));
        }
    }
}

/// Copies `from` to `to` (made, or truncated), syncs it, and gives it `mode`.
fn copy_file(from: &Path, to: &Path, mode: u32) -> std::io::Result<u64> {
    let mut src = std::fs::File::open(from)?;
    let mut dst = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(to)?;
    let n = std::io::copy(&mut src, &mut dst)?;
    dst.set_permissions(std::fs::Permissions::from_mode(mode))?;
    dst.sync_all()?;
    Ok(n)
}

/// Copies the tree under `from` into `to`: regular files and folders, skipping the staging
/// files of writes under way (`{name}#N`) and files already in `to` at the same size (the
/// storage is content-addressed: a name never changes its bytes). A file that disappears
/// while the tree is walked (a page deleted meanwhile) is skipped.
fn copy_tree(from: &Path, to: &Path, tally: &mut Tally) -> Result<(), ServerError> {
    let mut folders = vec![PathBuf::new()];
    while let Some(rel) = folders.pop() {
        let dir = from.join(&rel);
        std::fs::create_dir_all(to.join(&rel))
            .map_err(|e| io_fail("cannot make", &to.join(&rel), &e))?;
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io_fail("cannot list", &dir, &e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| io_fail("cannot list", &dir, &e))?;
            let name = entry.file_name();
            if name.to_string_lossy().contains('#') {
                continue;
            }
            let kind = entry
                .file_type()
                .map_err(|e| io_fail("cannot read", &entry.path(), &e))?;
            let rel = rel.join(&name);
            if kind.is_dir() {
                folders.push(rel);
            } else if kind.is_file() {
                let (src, dst) = (from.join(&rel), to.join(&rel));
                let len = match entry.metadata() {
                    Ok(m) => m.len(),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(io_fail("cannot read", &src, &e)),
                };
                if std::fs::metadata(&dst).is_ok_and(|m| m.len() == len) {
                    tally.skipped += 1;
                    continue;
                }
                match copy_file(&src, &dst, 0o600) {
                    Ok(n) => tally.add(n),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        let _ = std::fs::remove_file(&dst);
                    }
                    Err(e) => return Err(io_fail("cannot copy", &src, &e)),
                }
            }
        }
    }
    Ok(())
}

fn open_sqlite(path: &Path) -> Result<SqliteConnection, ServerError> {
    let mut conn = SqliteConnection::establish(&path.to_string_lossy())
        .map_err(|e| fail(format!("cannot open {}: {e}", path.display())))?;
    conn.batch_execute("PRAGMA busy_timeout = 5000;")
        .map_err(|e| fail(format!("cannot open {}: {e}", path.display())))?;
    Ok(conn)
}

/// A consistent copy of the live database at `src` into `dst` (which must not exist), while
/// other connections read and write: `VACUUM INTO` reads one snapshot.
fn vacuum_into(src: &Path, dst: &Path) -> Result<(), ServerError> {
    let mut conn = open_sqlite(src)?;
    diesel::sql_query("VACUUM INTO ?")
        .bind::<diesel::sql_types::Text, _>(dst.to_string_lossy().into_owned())
        .execute(&mut conn)
        .map_err(|e| fail(format!("cannot copy the database {}: {e}", src.display())))?;
    // It holds password hashes and sealed secrets: for its owner only.
    std::fs::set_permissions(dst, std::fs::Permissions::from_mode(0o600))
        .and_then(|()| std::fs::File::open(dst))
        .and_then(|f| f.sync_all())
        .map_err(|e| io_fail("cannot sync", dst, &e))
}

#[derive(QueryableByName)]
struct Named {
    #[diesel(sql_type = diesel::sql_types::Text)]
    path: String,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

/// The storage paths the database copy names: the files of ready pages and the bytes of
/// ready objects.
fn named_files(db: &Path) -> Result<Vec<String>, ServerError> {
    let mut conn = open_sqlite(db)?;
    let rows: Vec<Named> = diesel::sql_query(
        "SELECT 'pages/' || f.page_id || '/' || f.sha256 AS path \
           FROM page_files f JOIN pages p ON p.id = f.page_id WHERE p.state = 'ready' \
         UNION SELECT 'objects/' || id || '/' || blob AS path FROM objects \
           WHERE state <> 'pending'",
    )
    .load(&mut conn)
    .map_err(|e| fail(format!("cannot read the copied database: {e}")))?;
    Ok(rows.into_iter().map(|r| r.path).collect())
}

/// Counts of what the copied database holds, for the manifest.
fn counts(db: &Path) -> Result<serde_json::Value, ServerError> {
    let mut conn = open_sqlite(db)?;
    let mut count = |sql: &str| -> Result<i64, ServerError> {
        let rows: Vec<Count> = diesel::sql_query(sql)
            .load(&mut conn)
            .map_err(|e| fail(format!("cannot read the copied database: {e}")))?;
        Ok(rows.first().map_or(0, |c| c.n))
    };
    Ok(json!({
        "accounts": count("SELECT count(*) AS n FROM accounts")?,
        "pages": count("SELECT count(*) AS n FROM pages WHERE state = 'ready'")?,
        "pageFiles": count(
            "SELECT count(*) AS n FROM page_files f JOIN pages p ON p.id = f.page_id \
             WHERE p.state = 'ready'"
        )?,
        "objects": count("SELECT count(*) AS n FROM objects WHERE state <> 'pending'")?,
    }))
}

/// Whether a server holds the SQLite database at `path` open: its connections (in WAL mode)
/// keep a shared lock on the file, so taking it in exclusive mode fails at once.
fn sqlite_in_use(path: &Path) -> Result<bool, ServerError> {
    if !path.exists() {
        return Ok(false);
    }
    let mut conn = SqliteConnection::establish(&path.to_string_lossy())
        .map_err(|e| fail(format!("cannot open {}: {e}", path.display())))?;
    let probe = conn.batch_execute(
        "PRAGMA busy_timeout = 0; PRAGMA locking_mode = EXCLUSIVE; \
         SELECT count(*) FROM sqlite_master;",
    );
    match probe {
        Ok(()) => Ok(false),
        Err(e) if e.to_string().contains("locked") || e.to_string().contains("busy") => Ok(true),
        Err(e) => Err(fail(format!("cannot open {}: {e}", path.display()))),
    }
}

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

/// `admin backup DIR`.
pub(crate) fn backup(config: &Config, dir: &Path) -> Result<(), ServerError> {
    let started = Instant::now();
    let at = now();
    let sqlite = sqlite_path(&config.database_url).map(PathBuf::from);
    let allowed: &[&str] = if sqlite.is_some() { &[] } else { &[PG_DUMP] };
    if !is_empty_dir(dir, allowed)? {
        return Err(fail(format!(
            "{} is not empty: back up into a new or empty directory",
            dir.display()
        )));
    }
    let key = PathBuf::from(&config.secret_key_file);
    if !key.is_file() {
        return Err(fail(format!(
            "there is no key file at {} (QUIRE_SECRET_KEY_FILE): without it the sealed \
             secrets of the database cannot be opened",
            key.display()
        )));
    }
    let storage_dir = config
        .storage_url
        .strip_prefix("file://")
        .map(PathBuf::from);
    if let Some(storage) = &storage_dir
        && let Ok(storage) = storage.canonicalize()
        && let Ok(parent) = std::path::absolute(dir)
        && parent
            .ancestors()
            .any(|a| a.canonicalize().is_ok_and(|a| a == storage))
    {
        return Err(fail(format!(
            "{} is inside the bundle storage {}: back up somewhere else",
            dir.display(),
            storage.display()
        )));
    }
    std::fs::create_dir_all(dir).map_err(|e| io_fail("cannot make", dir, &e))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| io_fail("cannot restrict", dir, &e))?;
    say(&format!("backing up into {}", dir.display()));

    let mut tally = Tally::new("bundles");
    let database = if let Some(src) = &sqlite {
        if !src.is_file() {
            return Err(fail(format!("there is no database at {}", src.display())));
        }
        let dst = dir.join(DB_FILE);
        let mut round = 0;
        loop {
            round += 1;
            let t = Instant::now();
            let next = dir.join(format!("{DB_FILE}.next"));
            let _ = std::fs::remove_file(&next);
            vacuum_into(src, &next)?;
            std::fs::rename(&next, &dst).map_err(|e| io_fail("cannot rename", &next, &e))?;
            let bytes = std::fs::metadata(&dst).map(|m| m.len()).unwrap_or(0);
            say(&format!(
                "database: SQLite {} copied online (VACUUM INTO): {} in {} ms",
                src.display(),
                size(bytes),
                t.elapsed().as_millis()
            ));
            // Files go after the database: every file it names was stored before it was
            // read. A replace or delete may remove some before they are copied: then the
            // database is read again, and only the new files copied.
            let Some(storage) = &storage_dir else { break };
            copy_bundles(storage, &dir.join(BUNDLES_DIR), &mut tally)?;
            let missing: Vec<String> = named_files(&dst)?
                .into_iter()
                .filter(|p| !dir.join(BUNDLES_DIR).join(p).is_file())
                .collect();
            if missing.is_empty() {
                say("checked: every file the database copy names is in the backup");
                break;
            }
            if round == ROUNDS {
                return Err(fail(format!(
                    "{} file(s) the database names were removed from {} before they could \
                     be copied ({}…), {ROUNDS} times over: try again when fewer pages change",
                    missing.len(),
                    storage.display(),
                    missing[0]
                )));
            }
            say(&format!(
                "{} file(s) the database names were removed meanwhile (pages replaced or \
                 deleted): copying the database again",
                missing.len()
            ));
        }
        let bytes = std::fs::metadata(&dst).map(|m| m.len()).unwrap_or(0);
        json!({
            "backend": "sqlite",
            "copied": true,
            "file": DB_FILE,
            "bytes": bytes,
            "source": src.display().to_string(),
            "rounds": round,
            "counts": counts(&dst)?,
        })
    } else {
        let dump = dir.join(PG_DUMP);
        let command = format!(
            "pg_dump --format=custom --file={} {}",
            quoted(&dump.display().to_string()),
            quoted(&redacted(&config.database_url))
        );
        let present = std::fs::metadata(&dump).ok().map(|m| m.len());
        match present {
            Some(bytes) => say(&format!(
                "database: PostgreSQL, not copied by this command; {PG_DUMP} is already here \
                 ({}), taken before the files are copied",
                size(bytes)
            )),
            None => {
                say("database: PostgreSQL is not copied by this command. Dump it now with:");
                say(&format!("  {command}"));
                say(
                    "  (the password is left out of the URL: give it in PGPASSWORD or \
                     ~/.pgpass; run it with the same pg_dump major version as the server or newer)",
                );
            }
        }
        json!({
            "backend": "postgres",
            "copied": false,
            "dump": PG_DUMP,
            "dumpPresent": present.is_some(),
            "pgDump": command,
        })
    };

    let storage = if let Some(storage) = &storage_dir {
        if sqlite.is_none() {
            copy_bundles(storage, &dir.join(BUNDLES_DIR), &mut tally)?;
        }
        json!({
            "kind": "file",
            "copied": true,
            "dir": BUNDLES_DIR,
            "files": tally.files + tally.skipped,
            "bytes": tree_bytes(&dir.join(BUNDLES_DIR)),
            "source": storage.display().to_string(),
        })
    } else if config.storage_url.starts_with("s3://") {
        say(&format!(
            "bundles: {} is not copied: keep the bucket's own versioning or replication \
             (or copy it with the store's tools, e.g. rclone or aws s3 sync)",
            config.storage_url
        ));
        json!({"kind": "s3", "copied": false, "url": config.storage_url})
    } else {
        say("bundles: memory:// storage holds nothing to copy");
        json!({"kind": "memory", "copied": false})
    };

    let key_bytes = copy_file(&key, &dir.join(KEY_FILE), 0o600)
        .map_err(|e| io_fail("cannot copy", &key, &e))?;
    say(&format!(
        "key file: {} copied ({}, mode 0600)",
        key.display(),
        size(key_bytes)
    ));

    for line in NOT_INCLUDED {
        say(&format!("not included: {line}"));
    }
    let manifest = json!({
        "format": FORMAT,
        "version": VERSION,
        "createdAt": at
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default(),
        "quireVersion": env!("CARGO_PKG_VERSION"),
        "database": database,
        "storage": storage,
        "keyFile": {"file": KEY_FILE, "source": key.display().to_string()},
        "notIncluded": NOT_INCLUDED,
    });
    write_manifest(dir, &manifest)?;
    say(&format!(
        "backup complete in {} ms: {}",
        started.elapsed().as_millis(),
        dir.join(MANIFEST).display()
    ));
    Ok(())
}

fn copy_bundles(from: &Path, to: &Path, tally: &mut Tally) -> Result<(), ServerError> {
    let t = Instant::now();
    let (files, bytes) = (tally.files, tally.bytes);
    copy_tree(from, to, tally)?;
    say(&format!(
        "bundles: {} new files, {} copied from {} in {} ms ({} already copied)",
        tally.files - files,
        size(tally.bytes - bytes),
        from.display(),
        t.elapsed().as_millis(),
        tally.skipped
    ));
    Ok(())
}

fn tree_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    let mut folders = vec![dir.to_owned()];
    while let Some(d) = folders.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match entry.file_type() {
                Ok(t) if t.is_dir() => folders.push(entry.path()),
                Ok(t) if t.is_file() => total += entry.metadata().map(|m| m.len()).unwrap_or(0),
                _ => {}
            }
        }
    }
    total
}

/// Moves `path` aside to `{path}.before-restore-{stamp}` when it exists; returns where.
fn move_aside(path: &Path, stamp: &str) -> Result<Option<PathBuf>, ServerError> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(None);
    }
    let mut aside = path.as_os_str().to_owned();
    aside.push(format!(".before-restore-{stamp}"));
    let aside = PathBuf::from(aside);
    std::fs::rename(path, &aside).map_err(|e| io_fail("cannot move aside", path, &e))?;
    Ok(Some(aside))
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(suffix);
    PathBuf::from(p)
}

fn make_parent(path: &Path) -> Result<(), ServerError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| io_fail("cannot make", parent, &e))?;
    }
    Ok(())
}

/// `admin restore DIR`.
pub(crate) fn restore(config: &Config, dir: &Path) -> Result<(), ServerError> {
    let refuse = |why: String| ServerError::Restore(why);
    let manifest_path = dir.join(MANIFEST);
    let manifest: serde_json::Value = std::fs::read(&manifest_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .filter(|m: &serde_json::Value| {
            m["format"] == FORMAT && m["version"] == VERSION
        })
        .ok_or_else(|| {
            refuse(format!(
                "{} holds no Quire backup: no valid {MANIFEST} (format {FORMAT}, version {VERSION})",
                dir.display()
            ))
        })?;
    let sqlite = sqlite_path(&config.database_url).map(PathBuf::from);
    let backend = manifest["database"]["backend"].as_str().unwrap_or_default();
    match (backend, &sqlite) {
        ("sqlite", Some(_)) | ("postgres", None) => {}
        _ => {
            return Err(refuse(format!(
                "the backup holds a {backend} database, the configuration (QUIRE_DATABASE_URL) \
                 names {}",
                if sqlite.is_some() {
                    "SQLite"
                } else {
                    "PostgreSQL"
                }
            )));
        }
    }
    let bundles_copied = manifest["storage"]["copied"] == true;
    let storage_dir = config
        .storage_url
        .strip_prefix("file://")
        .map(PathBuf::from);
    if bundles_copied && storage_dir.is_none() {
        return Err(refuse(format!(
            "the backup holds local bundles, the configuration (QUIRE_STORAGE_URL) names {}",
            config.storage_url
        )));
    }
    for (needed, file) in [
        (sqlite.is_some(), DB_FILE),
        (true, KEY_FILE),
        (bundles_copied, BUNDLES_DIR),
    ] {
        if needed && !dir.join(file).exists() {
            return Err(refuse(format!(
                "the backup in {} lacks {file}",
                dir.display()
            )));
        }
    }
    if let Some(db) = &sqlite
        && sqlite_in_use(db)?
    {
        return Err(refuse(format!(
            "a server has the database {} open: stop every server on it first",
            db.display()
        )));
    }
    say(&format!(
        "restoring the backup of {} from {}",
        manifest["createdAt"].as_str().unwrap_or("?"),
        dir.display()
    ));
    if sqlite.is_none() {
        say("(no server can be detected on PostgreSQL: every server must be stopped)");
    }

    // Stage every copy beside its target: a failure here changes nothing.
    let key = PathBuf::from(&config.secret_key_file);
    let mut staged: Vec<(PathBuf, PathBuf)> = Vec::new();
    let cleanup = |staged: &[(PathBuf, PathBuf)]| {
        for (tmp, _) in staged {
            let _ = std::fs::remove_dir_all(tmp);
            let _ = std::fs::remove_file(tmp);
        }
    };
    let stage = |staged: &mut Vec<(PathBuf, PathBuf)>| -> Result<(), ServerError> {
        if let Some(db) = &sqlite {
            make_parent(db)?;
            let tmp = with_suffix(db, ".restore-tmp");
            staged.push((tmp.clone(), db.clone()));
            let bytes = copy_file(&dir.join(DB_FILE), &tmp, 0o600)
                .map_err(|e| io_fail("cannot copy", &dir.join(DB_FILE), &e))?;
            say(&format!(
                "database: staged {}, {}",
                tmp.display(),
                size(bytes)
            ));
        }
        if bundles_copied && let Some(storage) = &storage_dir {
            make_parent(storage)?;
            let tmp = with_suffix(storage, ".restore-tmp");
            let _ = std::fs::remove_dir_all(&tmp);
            staged.push((tmp.clone(), storage.clone()));
            let mut tally = Tally::new("bundles");
            let t = Instant::now();
            copy_tree(&dir.join(BUNDLES_DIR), &tmp, &mut tally)?;
            say(&format!(
                "bundles: staged {} files, {} in {} ms",
                tally.files,
                size(tally.bytes),
                t.elapsed().as_millis()
            ));
        }
        make_parent(&key)?;
        let tmp = with_suffix(&key, ".restore-tmp");
        staged.push((tmp.clone(), key.clone()));
        copy_file(&dir.join(KEY_FILE), &tmp, 0o600)
            .map_err(|e| io_fail("cannot copy", &dir.join(KEY_FILE), &e))?;
        say("key file: staged");
        Ok(())
    };
    if let Err(e) = stage(&mut staged) {
        cleanup(&staged);
        return Err(e);
    }

    // Swap: the current files go aside, the copies into place (renames, quick).
    let stamp = stamp(now());
    let mut aside = Vec::new();
    if let Some(db) = &sqlite {
        // The write-ahead log and its index belong to the old file: they go with it.
        for suffix in ["-wal", "-shm", "-journal"] {
            aside.extend(move_aside(&with_suffix(db, suffix), &stamp)?);
        }
    }
    for (tmp, target) in &staged {
        aside.extend(move_aside(target, &stamp)?);
        std::fs::rename(tmp, target).map_err(|e| io_fail("cannot move into place", tmp, &e))?;
        say(&format!("restored {}", target.display()));
    }
    for moved in &aside {
        say(&format!("moved aside: {}", moved.display()));
    }
    if !aside.is_empty() {
        say("(delete what was moved aside once the restored server runs as it should)");
    }
    if sqlite.is_none() {
        let dump = dir.join(PG_DUMP);
        say("database: PostgreSQL is not restored by this command. Load the dump with:");
        say(&format!(
            "  pg_restore --clean --if-exists --no-owner --dbname={} {}",
            quoted(&redacted(&config.database_url)),
            quoted(&dump.display().to_string())
        ));
        if !dump.exists() {
            say(&format!(
                "  ({} is not in the backup: use the dump taken with it)",
                dump.display()
            ));
        }
    }
    if !bundles_copied {
        say(
            "bundles: not in the backup (they were not on local disk): restore the bucket with the store's own tools",
        );
    }
    say("restore complete: start the server (migrations bring an older backup forward)");
    Ok(())
}

#[cfg(test)]
mod tests {
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
