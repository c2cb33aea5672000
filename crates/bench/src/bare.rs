//! Bare HTTP/1.1 endpoints on threads of this process, the floors a publish is measured
//! against. `/receive` only reads each body whole, as a server would hold it. `/publish`
//! also does the least work the page API requires of a publish, with nothing else around it
//! (no framework, no database, no manifest, no validation): it finds each file's base64 in
//! the JSON (with `memchr`, knowing how the bench writes it), decodes it, takes its SHA-256
//! and writes it under that name, each file in one pass, on every core once the body is
//! whole. `/publish-streamed` does the same work while the body arrives: each file is handed
//! to the workers as soon as its base64 is in. All three answer 204.

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use sha2::{Digest, Sha256};

/// Starts the bare endpoints, writing what `/publish` is sent under `folder` (a new folder
/// per request, kept, as the server keeps its pages); returns their origin.
#[must_use]
pub fn start(folder: &Path) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let folder = folder.to_owned();
    std::thread::spawn(move || {
        let published = std::sync::Arc::new(AtomicUsize::new(0));
        for conn in listener.incoming().flatten() {
            let (folder, published) = (folder.clone(), published.clone());
            std::thread::spawn(move || serve(conn, &folder, &published));
        }
    });
    url
}

/// Serves requests on `conn` until the client closes it (or sends what this cannot read).
fn serve(mut conn: TcpStream, folder: &Path, published: &AtomicUsize) {
    let mut head = Vec::with_capacity(4096);
    let mut chunk = vec![0u8; 64 * 1024];
    let mut body = Vec::new();
    loop {
        let end = loop {
            if let Some(at) = head.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            match conn.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => head.extend_from_slice(&chunk[..n]),
            }
        };
        let text = String::from_utf8_lossy(&head[..end]).into_owned();
        let length = text
            .lines()
            .find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse::<usize>().ok())?
            })
            .unwrap_or(0);
        // Into the room the last body left, as the server reads into the mapping its last
        // long body left: no fresh pages to fault in and zero.
        let early = (head.len() - end).min(length);
        body.clear();
        body.extend_from_slice(&head[end..end + early]);
        head.drain(..end + early);
        let next_folder =
            || folder.join(format!("bare{}", published.fetch_add(1, Ordering::Relaxed)));
        let read = if text.starts_with("POST /publish-streamed ") {
            store_streamed(&mut conn, &mut body, length, &next_folder())
        } else {
            let rest = (length - body.len()) as u64;
            let whole = Read::by_ref(&mut conn)
                .take(rest)
                .read_to_end(&mut body)
                .is_ok()
                && body.len() == length;
            if whole && text.starts_with("POST /publish ") {
                store(&body, &next_folder());
            }
            whole
        };
        if !read {
            return;
        }
        if conn
            .write_all(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n")
            .is_err()
        {
            return;
        }
    }
}

/// The key before each file's base64, as the bench writes it (`"content":"…"`, with no
/// escapes in the base64).
const CONTENT: &[u8] = b"\"content\":\"";

/// Where the first file's base64 whose closing quote is in `body[from..]` lies, if one is.
fn next_content(body: &[u8], from: usize) -> Option<(usize, usize)> {
    let start = from + memchr::memmem::find(&body[from..], CONTENT)? + CONTENT.len();
    let len = memchr::memchr(b'"', &body[start..])?;
    Some((start, start + len))
}

/// Decodes, hashes and writes every file of the publish `body` into `folder`, on as many
/// threads as there are cores, the files dealt out in turn as the server deals its writes.
fn store(body: &[u8], folder: &Path) {
    let mut contents = Vec::new();
    let mut from = 0;
    while let Some((start, end)) = next_content(body, from) {
        contents.push(&body[start..end]);
        from = end;
    }
    std::fs::create_dir_all(folder).unwrap();
    let threads = cores();
    std::thread::scope(|s| {
        for first in 0..threads {
            let contents = &contents;
            s.spawn(move || {
                let mut decoded = Vec::new();
                for content in contents.iter().skip(first).step_by(threads) {
                    store_one(content, folder, &mut decoded);
                }
            });
        }
    });
}

/// Reads the rest of a publish's `body` (`length` bytes in all) from `conn`, handing each
/// file's base64 to workers on every core as soon as it is in, who decode, hash and write it
/// into `folder`. The base64 is copied for them, since `body` grows meanwhile. Returns
/// whether the body came whole.
fn store_streamed(conn: &mut TcpStream, body: &mut Vec<u8>, length: usize, folder: &Path) -> bool {
    std::fs::create_dir_all(folder).unwrap();
    let (files, queue) = mpsc::channel::<Vec<u8>>();
    let queue = Mutex::new(queue);
    let mut chunk = vec![0u8; 64 * 1024];
    std::thread::scope(|s| {
        for _ in 0..cores() {
            let queue = &queue;
            s.spawn(move || {
                let mut decoded = Vec::new();
                // The lock is held while waiting, so one worker waits at a time.
                while let Ok(content) = queue.lock().unwrap().recv() {
                    store_one(&content, folder, &mut decoded);
                }
            });
        }
        let mut from = 0;
        while body.len() < length {
            let want = chunk.len().min(length - body.len());
            match conn.read(&mut chunk[..want]) {
                Ok(0) | Err(_) => return false,
                Ok(n) => body.extend_from_slice(&chunk[..n]),
            }
            while let Some((start, end)) = next_content(body, from) {
                files.send(body[start..end].to_vec()).unwrap();
                from = end;
            }
        }
        drop(files);
        true
    })
}

/// Decodes one file's `base64` into `decoded`, and writes it into `folder` named by its
/// SHA-256 in hex.
fn store_one(base64: &[u8], folder: &Path, decoded: &mut Vec<u8>) {
    decoded.clear();
    base64_simd::STANDARD
        .decode_append(base64, decoded)
        .unwrap();
    let mut name = String::with_capacity(64);
    for byte in Sha256::digest(&decoded) {
        write!(name, "{byte:02x}").unwrap();
    }
    write_new(&folder.join(&name), decoded);
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

/// Creates `path` and writes `bytes` to it, as the server writes an object of a new page.
fn write_new(path: &Path, bytes: &[u8]) {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .unwrap();
    file.write_all(bytes).unwrap();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_files_base64_is_found_only_once_its_closing_quote_is_in() {
        let body = br#"{"files":[{"path":"a","content":"QUJD","encoding":"base64"},{"content":"RE"#;
        let (start, end) = next_content(body, 0).unwrap();
        assert_eq!(&body[start..end], b"QUJD");
        // The second file's base64 has not closed yet, so the streamed floor waits for more.
        assert_eq!(next_content(body, end), None);
        let whole = [&body[..], br#"VG"}]}"#].concat();
        let (start, end) = next_content(&whole, end).unwrap();
        assert_eq!(&whole[start..end], b"REVG");
        assert_eq!(next_content(&whole, end), None);
    }
}
