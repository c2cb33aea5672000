//! A request's files as one batch: checked whole before anything is stored (hashed, on every
//! core when there is enough to do, and then off the async workers: see
//! `PageService::check_batch`), then stored one by one.

use std::collections::HashSet;

use bytes::Bytes;
use quire_kernel::parallel::map_in_order;

use crate::model::{FileData, FileEntry, FileInput, Limits, Unreadable};
use crate::validate::{FilesError, Invalid, LimitKind, content_type, path, quoted, sha256_hex};

/// Validates a whole batch before anything is stored: every path safe, no path
/// twice, every file's bytes readable from the request (a known encoding, base64 that
/// decoded), and the limits, counting the page's
/// `existing` files that the batch does not replace.
///
/// # Errors
/// The first problem found; nothing is partially accepted.
pub fn files(
    inputs: Vec<FileInput>,
    existing: &[FileEntry],
    limits: &Limits,
) -> Result<Vec<FileData>, FilesError> {
    if inputs.is_empty() {
        return Err(FilesError::Invalid(Invalid(
            "files must be a non-empty array".into(),
        )));
    }
    let mut seen = HashSet::new();
    for f in &inputs {
        path(&f.path).map_err(FilesError::Invalid)?;
        if !seen.insert(f.path.clone()) {
            return Err(FilesError::Invalid(Invalid(format!(
                "file path {} appears twice",
                quoted(&f.path)
            ))));
        }
    }
    let kept: Vec<&FileEntry> = existing
        .iter()
        .filter(|e| !seen.contains(&e.path))
        .collect();
    let count = kept.len() + inputs.len();
    if count > limits.max_files {
        return Err(too_many_files(limits, count as u64));
    }
    let mut total: u64 = kept.iter().map(|e| e.size_bytes).sum();
    let mut out = Vec::with_capacity(inputs.len());
    // Checked on every core; then judged in request order, so the first problem reported is
    // the same as one file at a time would find.
    for checked in check_all(inputs) {
        let Checked {
            path,
            content,
            sha256,
        } = checked?;
        let size = content.len() as u64;
        if size > limits.max_file_bytes {
            return Err(FilesError::TooLarge {
                limit: LimitKind::FileSize,
                message: format!(
                    "{} is {size} bytes; a file may be at most {} bytes",
                    quoted(&path),
                    limits.max_file_bytes
                ),
            });
        }
        total += size;
        if total > limits.max_page_bytes {
            return Err(page_too_large(limits));
        }
        let entry = FileEntry {
            content_type: content_type(&path),
            sha256,
            size_bytes: size,
            path,
        };
        out.push(FileData::new(entry, content));
    }
    Ok(out)
}

/// The refusal of a page that would hold `count` files.
pub(crate) fn too_many_files(limits: &Limits, count: u64) -> FilesError {
    FilesError::TooLarge {
        limit: LimitKind::Files,
        message: format!(
            "a page may hold at most {} files; this would make {count}",
            limits.max_files
        ),
    }
}

/// The refusal of a page whose files would pass its size limit.
pub(crate) fn page_too_large(limits: &Limits) -> FilesError {
    FilesError::TooLarge {
        limit: LimitKind::PageSize,
        message: format!(
            "the page's files would exceed {} bytes",
            limits.max_page_bytes
        ),
    }
}

/// A file whose bytes were read from the request, with their SHA-256.
struct Checked {
    path: String,
    content: Bytes,
    sha256: String,
}

/// Below this much content, one thread hashes everything: starting others costs more.
const PARALLEL_CHECK_BYTES: usize = 1 << 20;

/// Whether checking `inputs` is long work: as much content as is worth hashing on every core
/// holds an async worker for milliseconds, so it is worth handing to another thread; less
/// costs less than the hand-over.
pub(crate) fn is_long_work(inputs: &[FileInput]) -> bool {
    let content: usize = inputs
        .iter()
        .map(|f| f.content.as_ref().map_or(0, Bytes::len))
        .sum();
    content >= PARALLEL_CHECK_BYTES
}

/// Checks every file, in order, splitting the hashing across the cores when there is enough
/// of it.
fn check_all(inputs: Vec<FileInput>) -> Vec<Result<Checked, FilesError>> {
    let split = is_long_work(&inputs);
    map_in_order(inputs, split, check)
}

fn check(f: FileInput) -> Result<Checked, FilesError> {
    let content = f.content.map_err(|why| {
        FilesError::Invalid(Invalid(match why {
            Unreadable::UnknownEncoding(other) => format!(
                "encoding of {} must be utf8 or base64, not {}",
                quoted(&f.path),
                quoted(&other)
            ),
            Unreadable::BadBase64 => {
                format!("content of {} is not valid base64", quoted(&f.path))
            }
        }))
    })?;
    Ok(Checked {
        sha256: sha256_hex(&content),
        path: f.path,
        content,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(path: &str, content: &str) -> FileInput {
        FileInput {
            path: path.into(),
            content: Ok(Bytes::copy_from_slice(content.as_bytes())),
        }
    }

    fn unreadable(path: &str, why: Unreadable) -> FileInput {
        FileInput {
            path: path.into(),
            content: Err(why),
        }
    }

    fn message(result: Result<Vec<FileData>, FilesError>) -> String {
        match result {
            Err(FilesError::Invalid(Invalid(m))) => m,
            other => panic!("expected an invalid batch, got {other:?}"),
        }
    }

    #[test]
    fn batches_are_checked_whole() {
        let limits = Limits {
            max_files: 3,
            max_file_bytes: 10,
            max_page_bytes: 15,
        };
        let ok = files(
            vec![
                input("index.html", "<p>hi</p>"),
                FileInput {
                    path: "a.bin".into(),
                    content: Ok(Bytes::from_static(&[0, 1, 2])),
                },
            ],
            &[],
            &limits,
        )
        .unwrap();
        assert_eq!(ok[1].bytes().as_ref(), [0, 1, 2]);
        assert_eq!(ok[0].bytes(), "<p>hi</p>");
        assert_eq!(ok[0].entry.content_type, "text/html; charset=utf-8");
        assert_eq!(ok[0].entry.size_bytes, 9);
        assert_eq!(ok[1].entry.sha256, sha256_hex(&[0, 1, 2]));

        let dup = files(vec![input("a", "1"), input("a", "2")], &[], &limits);
        assert!(matches!(dup, Err(FilesError::Invalid(_))));
        let b64 = files(
            vec![input("ok", "1"), unreadable("a", Unreadable::BadBase64)],
            &[],
            &limits,
        );
        assert_eq!(message(b64), "content of \"a\" is not valid base64");
        let enc = files(
            vec![unreadable("a", Unreadable::UnknownEncoding("hex".into()))],
            &[],
            &limits,
        );
        assert_eq!(
            message(enc),
            "encoding of \"a\" must be utf8 or base64, not \"hex\""
        );
        assert!(matches!(
            files(vec![], &[], &limits),
            Err(FilesError::Invalid(_))
        ));
        let unsafe_path = files(vec![input("ok", "1"), input("../etc", "2")], &[], &limits);
        assert!(matches!(unsafe_path, Err(FilesError::Invalid(_))));

        let big = files(vec![input("a", &"x".repeat(11))], &[], &limits);
        assert!(matches!(
            big,
            Err(FilesError::TooLarge {
                limit: LimitKind::FileSize,
                ..
            })
        ));
        let many = files(
            (0..4).map(|i| input(&format!("f{i}"), "x")).collect(),
            &[],
            &limits,
        );
        assert!(matches!(
            many,
            Err(FilesError::TooLarge {
                limit: LimitKind::Files,
                ..
            })
        ));
        let total = files(
            vec![input("a", &"x".repeat(8)), input("b", &"x".repeat(8))],
            &[],
            &limits,
        );
        assert!(matches!(
            total,
            Err(FilesError::TooLarge {
                limit: LimitKind::PageSize,
                ..
            })
        ));
    }

    #[test]
    fn limits_count_existing_files_that_are_not_replaced() {
        let limits = Limits {
            max_files: 2,
            max_file_bytes: 10,
            max_page_bytes: 12,
        };
        let existing = vec![FileEntry {
            path: "index.html".into(),
            size_bytes: 10,
            content_type: "text/html".into(),
            sha256: "x".into(),
        }];
        // Replacing index.html does not count its old size.
        assert!(files(vec![input("index.html", "0123456789")], &existing, &limits).is_ok());
        // Adding next to it does.
        let over = files(vec![input("b", "abc")], &existing, &limits);
        assert!(matches!(
            over,
            Err(FilesError::TooLarge {
                limit: LimitKind::PageSize,
                ..
            })
        ));
        let count = files(vec![input("b", "a"), input("c", "b")], &existing, &limits);
        assert!(matches!(
            count,
            Err(FilesError::TooLarge {
                limit: LimitKind::Files,
                ..
            })
        ));
    }

    #[test]
    fn a_large_batch_is_checked_in_order_and_its_first_problem_found() {
        // 64 files of 32 KiB: 2 MiB, past the threshold for several threads.
        let inputs: Vec<FileInput> = (0..64u8)
            .map(|n| FileInput {
                path: format!("f{n}"),
                content: Ok(Bytes::from(vec![n; 32 * 1024])),
            })
            .collect();
        let checked: Vec<Checked> = check_all(inputs.clone())
            .into_iter()
            .map(|d| d.unwrap_or_else(|_| panic!("readable files")))
            .collect();
        assert_eq!(checked.len(), 64);
        for (n, c) in (0..64u8).zip(&checked) {
            assert_eq!(c.path, format!("f{n}"));
            assert_eq!(c.content.len(), 32 * 1024);
            assert_eq!(c.sha256, sha256_hex(&[n; 32 * 1024]));
        }

        let mut broken = inputs;
        broken[40].content = Err(Unreadable::BadBase64);
        broken[50].content = Err(Unreadable::UnknownEncoding("rot13".into()));
        let results = check_all(broken);
        let first = results.into_iter().find_map(Result::err);
        assert!(
            matches!(&first, Some(FilesError::Invalid(Invalid(m))) if m.contains("f40")),
            "{first:?}"
        );
    }
}
