//! Copying files and trees, with progress lines, and moving files aside.

use super::*;

pub(super) struct Tally {
    what: &'static str,
    pub(super) files: u64,
    pub(super) bytes: u64,
    pub(super) skipped: u64,
    last: Instant,
}

impl Tally {
    pub(super) fn new(what: &'static str) -> Self {
        Self {
            what,
            files: 0,
            bytes: 0,
            skipped: 0,
            last: Instant::now(),
        }
    }

    pub(super) fn add(&mut self, bytes: u64) {
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
pub(super) fn copy_file(from: &Path, to: &Path, mode: u32) -> std::io::Result<u64> {
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
pub(super) fn copy_tree(from: &Path, to: &Path, tally: &mut Tally) -> Result<(), ServerError> {
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

pub(super) fn copy_bundles(from: &Path, to: &Path, tally: &mut Tally) -> Result<(), ServerError> {
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

pub(super) fn tree_bytes(dir: &Path) -> u64 {
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
pub(super) fn move_aside(path: &Path, stamp: &str) -> Result<Option<PathBuf>, ServerError> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(None);
    }
    let mut aside = path.as_os_str().to_owned();
    aside.push(format!(".before-restore-{stamp}"));
    let aside = PathBuf::from(aside);
    std::fs::rename(path, &aside).map_err(|e| io_fail("cannot move aside", path, &e))?;
    Ok(Some(aside))
}

pub(super) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(suffix);
    PathBuf::from(p)
}

pub(super) fn make_parent(path: &Path) -> Result<(), ServerError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| io_fail("cannot make", parent, &e))?;
    }
    Ok(())
}
