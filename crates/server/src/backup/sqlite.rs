//! The SQLite database: an online copy, the files it names, its counts, whether a server
//! has it open.

use super::*;

pub(super) fn open_sqlite(path: &Path) -> Result<SqliteConnection, ServerError> {
    let mut conn = SqliteConnection::establish(&path.to_string_lossy())
        .map_err(|e| fail(format!("cannot open {}: {e}", path.display())))?;
    conn.batch_execute("PRAGMA busy_timeout = 5000;")
        .map_err(|e| fail(format!("cannot open {}: {e}", path.display())))?;
    Ok(conn)
}

/// A consistent copy of the live database at `src` into `dst` (which must not exist), while
/// other connections read and write: `VACUUM INTO` reads one snapshot.
pub(super) fn vacuum_into(src: &Path, dst: &Path) -> Result<(), ServerError> {
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
pub(super) struct Named {
    #[diesel(sql_type = diesel::sql_types::Text)]
    path: String,
}

#[derive(QueryableByName)]
pub(super) struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

/// The storage paths the database copy names: the files of ready pages and the bytes of
/// ready objects.
pub(super) fn named_files(db: &Path) -> Result<Vec<String>, ServerError> {
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
pub(super) fn counts(db: &Path) -> Result<serde_json::Value, ServerError> {
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
pub(super) fn sqlite_in_use(path: &Path) -> Result<bool, ServerError> {
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
