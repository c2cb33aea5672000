//! Reading a site directory into the page API's `files` array: UTF-8 files as text, others
//! as base64; paths relative to the directory with `/` separators. Hidden entries (`.git`,
//! `.DS_Store`) and symbolic links are left out.

use std::path::{Path, PathBuf};

use base64::Engine;
use serde_json::{Value, json};

/// Every regular file under `root`, sorted, with its size.
pub fn list(root: &Path) -> Result<Vec<(String, PathBuf, u64)>, String> {
    let meta = std::fs::metadata(root).map_err(|e| format!("{}: {e}", root.display()))?;
    if !meta.is_dir() {
        return Err(format!("{} is not a directory", root.display()));
    }
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let kind = entry
                .file_type()
                .map_err(|e| format!("{}: {e}", entry.path().display()))?;
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() {
                let path = entry.path();
                let relative = path
                    .strip_prefix(root)
                    .map_err(|e| e.to_string())?
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
                out.push((relative, path, size));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    if out.is_empty() {
        return Err(format!("{} holds no files", root.display()));
    }
    Ok(out)
}

/// One file entry of the request body.
pub fn encode(relative: &str, path: &Path) -> Result<Value, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) => json!({ "path": relative, "content": text }),
        Err(e) => json!({
            "path": relative,
            "content": base64::engine::general_purpose::STANDARD.encode(e.into_bytes()),
            "encoding": "base64",
        }),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn lists_nested_files_and_skips_hidden_ones() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("css")).unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join("index.html"), "<h1>hi</h1>").unwrap();
        std::fs::write(dir.path().join("css/site.css"), "h1{}").unwrap();
        std::fs::write(dir.path().join(".git/HEAD"), "x").unwrap();
        std::fs::write(dir.path().join("logo.png"), [0x89, 0x50, 0xff, 0x00]).unwrap();
        let files = list(dir.path()).unwrap();
        let names: Vec<_> = files.iter().map(|f| f.0.as_str()).collect();
        assert_eq!(names, ["css/site.css", "index.html", "logo.png"]);
        assert_eq!(
            encode("index.html", &files[1].1).unwrap()["content"],
            "<h1>hi</h1>"
        );
        let png = encode("logo.png", &files[2].1).unwrap();
        assert_eq!(png["encoding"], "base64");
        assert_eq!(png["content"], "iVD/AA==");
    }

    #[test]
    fn refuses_files_and_empty_directories() {
        let dir = tempfile::tempdir().unwrap();
        assert!(list(dir.path()).unwrap_err().contains("holds no files"));
        let f = dir.path().join("a.txt");
        std::fs::write(&f, "x").unwrap();
        assert!(list(&f).unwrap_err().contains("not a directory"));
    }
}
