//! `admin restore DIR`.

use super::files::*;
use super::sqlite::*;
use super::*;

/// Brings the backup in `dir` back over the configured data.
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
