//! The page a folder was published as: `DIR/.quire/page.json` (the page's id and the server
//! it lives on; never a key), so that publishing the folder again replaces that page's files
//! rather than making another page. `.quire/` is hidden, so it is never uploaded.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Remembered {
    pub page_id: String,
    pub server: String,
}

pub(crate) fn file(dir: &Path) -> PathBuf {
    dir.join(".quire").join("page.json")
}

/// The folder's remembered page, if it has one.
///
/// # Errors
/// A file that exists but cannot be read or is not the expected JSON: better refused than
/// silently replaced by a new page.
pub(crate) fn load(dir: &Path) -> Result<Option<Remembered>, String> {
    let path = file(dir);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            format!(
                "{} is not valid ({e}); remove it, or publish with --new",
                path.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Remembers `page` for the folder, replacing what it remembered.
///
/// # Errors
/// When `.quire/` or the file cannot be written.
pub(crate) fn save(dir: &Path, page: &Remembered) -> Result<PathBuf, String> {
    let path = file(dir);
    let parent = dir.join(".quire");
    std::fs::create_dir_all(&parent)
        .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    let mut body = serde_json::to_vec_pretty(page).map_err(|e| e.to_string())?;
    body.push(b'\n');
    std::fs::write(&path, body).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_remembered_page_round_trips_and_a_broken_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(dir.path()).unwrap(), None);
        let page = Remembered {
            page_id: "0b9e".into(),
            server: "http://127.0.0.1:8080".into(),
        };
        save(dir.path(), &page).unwrap();
        assert_eq!(load(dir.path()).unwrap(), Some(page));
        let text = std::fs::read_to_string(file(dir.path())).unwrap();
        assert!(
            text.contains("\"pageId\"") && !text.contains("key"),
            "{text}"
        );
        std::fs::write(file(dir.path()), "{").unwrap();
        assert!(load(dir.path()).unwrap_err().contains("--new"));
    }
}
