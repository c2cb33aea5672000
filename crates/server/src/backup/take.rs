//! `admin backup DIR`.

use super::files::*;
use super::sqlite::*;
use super::*;

/// Backs the configured data up into `dir`: the database, the bundles, the key file.
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
