//! Local disk, beyond what `object_store` does for it: writing a batch of files on every
//! core, and sweeping what interrupted writes left behind.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use quire_kernel::InfraError;
use quire_pages::{FileData, Readers};

/// Writes `files` into `folder` on as many blocking threads as there are cores, dealt out in
/// turn; once one write fails the others stop at their next file. With no readers yet, each
/// file is written under its own name, with no temporary file and rename.
pub(crate) async fn put_local(
    folder: PathBuf,
    files: Vec<FileData>,
    readers: Readers,
) -> Result<Vec<String>, (InfraError, Vec<String>)> {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let threads = cores.min(files.len()).max(1);
    let mut shares: Vec<Vec<FileData>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, file) in files.into_iter().enumerate() {
        shares[i % threads].push(file);
    }
    let failed = Arc::new(AtomicBool::new(false));
    let tasks: Vec<_> = shares
        .into_iter()
        .map(|share| {
            let (folder, failed) = (folder.clone(), failed.clone());
            tokio::task::spawn_blocking(move || write_share(&folder, share, readers, &failed))
        })
        .collect();
    let mut written = Vec::new();
    let mut first_error = None;
    for task in tasks {
        match task.await {
            Ok((hashes, error)) => {
                written.extend(hashes);
                if let Some(e) = error {
                    first_error.get_or_insert(e);
                }
            }
            Err(e) => {
                first_error.get_or_insert(InfraError::new(format!("bundle storage: write: {e}")));
            }
        }
    }
    match first_error {
        None => Ok(written),
        Some(e) => Err((e, written)),
    }
}

/// Writes each file of `share` in turn; returns the hashes written and the error
/// that stopped it, if one did.
fn write_share(
    folder: &Path,
    share: Vec<FileData>,
    readers: Readers,
    failed: &AtomicBool,
) -> (Vec<String>, Option<InfraError>) {
    let in_place = readers == Readers::NoneYet;
    let mut written = Vec::with_capacity(share.len());
    for file in share {
        if failed.load(Ordering::Relaxed) {
            break;
        }
        let target = folder.join(&file.entry.sha256);
        let stored = if in_place {
            write_in_place(&target, file.bytes())
        } else {
            write_object(&target, file.bytes())
        }
        .map_err(|e| InfraError::new(format!("bundle storage: write: {e}")));
        match stored {
            Ok(()) => written.push(file.entry.sha256),
            Err(e) => {
                failed.store(true, Ordering::Relaxed);
                return (written, Some(e));
            }
        }
    }
    (written, None)
}

/// Writes `bytes` to a temporary file beside `target`, named `{target}#N` as `object_store`
/// names its own (so listings hide it and the sweep knows it), and renames it into place.
fn write_object(target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let (mut file, staging) = staging_file(target)?;
    let done = file
        .write_all(bytes)
        .and_then(|()| std::fs::rename(&staging, target));
    if done.is_err() {
        let _ = std::fs::remove_file(&staging);
    }
    done
}

/// Writes `bytes` straight to `target`, for a page nobody reads yet; should `target` exist
/// (which a fresh page's folder never holds), as [`write_object`] does.
fn write_in_place(target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = match create_new(target) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return write_object(target, bytes);
        }
        Err(e) => return Err(e),
    };
    let done = file.write_all(bytes);
    if done.is_err() {
        let _ = std::fs::remove_file(target);
    }
    done
}

/// Times the folder is made for one file: the sweep removes a page folder it finds empty, so
/// one made for a write can go again before the write's file is in it.
const FOLDER_ATTEMPTS: u32 = 3;

/// Creates a temporary file `{target}#N` of a number no other write holds, and the folder.
fn staging_file(target: &Path) -> std::io::Result<(std::fs::File, PathBuf)> {
    let mut number = 1_u32;
    loop {
        let mut name = target.as_os_str().to_owned();
        name.push(format!("#{number}"));
        let path = PathBuf::from(name);
        match create_new(&path) {
            Ok(file) => return Ok((file, path)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => number += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Creates the file `path`, which must not exist yet, and its folder when that is missing.
fn create_new(path: &Path) -> std::io::Result<std::fs::File> {
    let mut folder_made = 0;
    loop {
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
        {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && folder_made < FOLDER_ATTEMPTS => {
                folder_made += 1;
                if let Some(folder) = path.parent() {
                    std::fs::create_dir_all(folder)?;
                }
            }
            opened => return opened,
        }
    }
}

/// Removes temporary objects (`name#N`) not written to for `older_than`, then every page
/// folder left empty. `remove_dir` refuses a folder that is not empty, so a write that
/// starts meanwhile keeps its folder (and `object_store` recreates a missing one).
pub(crate) fn sweep_local(pages: &Path, older_than: Duration) -> Result<usize, InfraError> {
    let io = |e: std::io::Error| InfraError::new(format!("bundle storage: sweep: {e}"));
    let folders = match std::fs::read_dir(pages) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(io(e)),
    };
    let now = SystemTime::now();
    let mut removed = 0;
    for folder in folders {
        let folder = folder.map_err(io)?;
        if !folder.file_type().map_err(io)?.is_dir() {
            continue;
        }
        let mut empty = true;
        for entry in std::fs::read_dir(folder.path()).map_err(io)? {
            let entry = entry.map_err(io)?;
            let temporary = entry.file_name().to_string_lossy().contains('#');
            let idle = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| now.duration_since(t).ok())
                .is_some_and(|age| age >= older_than);
            if temporary && idle && std::fs::remove_file(entry.path()).is_ok() {
                removed += 1;
            } else {
                empty = false;
            }
        }
        if empty && std::fs::remove_dir(folder.path()).is_ok() {
            removed += 1;
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use quire_kernel::PageId;
    use quire_pages::{BundleStore, FileInput, Limits, validate};

    use super::*;
    use crate::ObjectBundleStore;

    /// A publish's batch: every object whole under its hash, readable
    /// through the store, on local disk (written by the store's own threads) and in memory
    /// alike, with no temporary file left; a page folder that cannot be made fails the batch.
    #[tokio::test]
    async fn a_batch_of_files_is_stored_whole_on_disk_and_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let local = ObjectBundleStore::open(&format!("file://{}", dir.path().display())).unwrap();
        let mut inputs: Vec<FileInput> = (0..40)
            .map(|i| FileInput {
                path: format!("f{i}.txt"),
                content: Ok(Bytes::from(format!("file number {i}\n").repeat(i + 1))),
            })
            .collect();
        inputs.push(FileInput {
            path: "hello.bin".into(),
            content: Ok(Bytes::from_static(b"hello world")),
        });
        let files = validate::files(inputs, &[], &Limits::default()).unwrap();
        let mut hashes: Vec<String> = files.iter().map(|f| f.entry.sha256.clone()).collect();
        hashes.sort();
        let memory = ObjectBundleStore::open("memory://").unwrap();
        for (store, readers) in [
            (&local, Readers::NoneYet),
            (&local, Readers::Possible),
            (&memory, Readers::NoneYet),
            (&memory, Readers::Possible),
        ] {
            let page = PageId::new();
            let mut written = store.put_files(page, files.clone(), readers).await.unwrap();
            written.sort();
            assert_eq!(written, hashes);
            for file in &files {
                let stored = store.get(page, &file.entry.sha256).await.unwrap().unwrap();
                assert_eq!(stored, file.bytes().as_ref());
            }
            let hello = files.iter().find(|f| f.entry.path == "hello.bin").unwrap();
            let stored = store.get(page, &hello.entry.sha256).await.unwrap().unwrap();
            assert_eq!(stored, b"hello world");
        }
        for folder in std::fs::read_dir(dir.path().join("pages")).unwrap() {
            for entry in std::fs::read_dir(folder.unwrap().path()).unwrap() {
                let name = entry.unwrap().file_name();
                assert!(
                    !name.to_string_lossy().contains('#'),
                    "{name:?} left behind"
                );
            }
        }

        let blocked = PageId::new();
        std::fs::write(
            dir.path().join("pages").join(blocked.to_string()),
            b"not a folder",
        )
        .unwrap();
        for readers in [Readers::NoneYet, Readers::Possible] {
            let (error, written) = local
                .put_files(blocked, files.clone(), readers)
                .await
                .unwrap_err();
            assert!(written.is_empty(), "{written:?}");
            assert!(
                error.to_string().contains("bundle storage: write"),
                "{error}"
            );
        }
    }

    /// Written in place, an object already under its name (which a pending page's folder
    /// never holds) is replaced whole rather than written over.
    #[tokio::test]
    async fn an_object_written_in_place_over_one_that_exists_is_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let local = ObjectBundleStore::open(&format!("file://{}", dir.path().display())).unwrap();
        let input = FileInput {
            path: "index.html".into(),
            content: Ok(Bytes::from_static(b"<p>whole</p>")),
        };
        let files = validate::files(vec![input], &[], &Limits::default()).unwrap();
        let (page, sha) = (PageId::new(), files[0].entry.sha256.clone());
        let target = dir.path().join("pages").join(page.to_string()).join(&sha);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(&target, b"a much longer object, cut short").unwrap();
        let held = std::fs::File::open(&target).unwrap();

        let written = local
            .put_files(page, files, Readers::NoneYet)
            .await
            .unwrap();

        assert_eq!(written, vec![sha.clone()]);
        assert_eq!(
            local.get(page, &sha).await.unwrap().unwrap(),
            b"<p>whole</p>"
        );
        let mut before = String::new();
        std::io::Read::read_to_string(&mut &held, &mut before).unwrap();
        assert_eq!(
            before, "a much longer object, cut short",
            "a reader's file is left as it was"
        );

        // What a write cut short leaves under its name goes with the page.
        std::fs::write(&target, b"cut sh").unwrap();
        local.delete_page(page).await.unwrap();
        assert!(local.get(page, &sha).await.unwrap().is_none());
        assert!(!local.pages().await.unwrap().contains(&page));
    }
}
