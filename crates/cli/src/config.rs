//! The stored login: `config.json` (server and key) in the user's config directory,
//! written owner-only (directory 0700, file 0600) because the key is a master key.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Stored {
    pub server: Option<String>,
    pub key: Option<String>,
}

/// `$QUIRE_CONFIG_DIR`, else `$XDG_CONFIG_HOME/quire`, else `$HOME/.config/quire`.
pub fn dir() -> Result<PathBuf, String> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = var("QUIRE_CONFIG_DIR") {
        return Ok(PathBuf::from(d));
    }
    if let Some(d) = var("XDG_CONFIG_HOME") {
        return Ok(PathBuf::from(d).join("quire"));
    }
    var("HOME")
        .map(|h| PathBuf::from(h).join(".config").join("quire"))
        .ok_or_else(|| "no config directory: set QUIRE_CONFIG_DIR or HOME".to_owned())
}

fn file() -> Result<PathBuf, String> {
    Ok(dir()?.join("config.json"))
}

pub fn load() -> Result<Stored, String> {
    let path = file()?;
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| format!("{} is not valid: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Stored::default()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Writes the whole file anew: to a temporary file created 0600, then renamed over the old
/// one, so a crash leaves the old login or the new one, never half of either.
pub fn save(stored: &Stored) -> Result<PathBuf, String> {
    let dir = dir()?;
    create_private_dir(&dir)?;
    let path = dir.join("config.json");
    let tmp = dir.join(".config.json.tmp");
    let body = serde_json::to_vec_pretty(stored).map_err(|e| e.to_string())?;
    write_private(&tmp, &body).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

#[cfg(unix)]
fn create_private_dir(dir: &std::path::Path) -> Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| format!("cannot restrict {}: {e}", dir.display()))
}

#[cfg(not(unix))]
fn create_private_dir(dir: &std::path::Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

#[cfg(unix)]
fn write_private(path: &std::path::Path, body: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::remove_file(path);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(body)?;
    f.sync_all()
}

#[cfg(not(unix))]
fn write_private(path: &std::path::Path, body: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, body)
}
