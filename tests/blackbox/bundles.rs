//! Bundles long enough to take the path of long bodies: the body read into a mapping of its
//! own and every base64 file decoded there, in place, on every core. Every file must come
//! back byte for byte, however it was sent, and a file that does not decode must be refused
//! by name with nothing kept.

use base64::Engine;
use serde_json::Value;

use crate::harness::{Backend, Reply, Server, TestDb, on_both_backends, setup, sha256sum};
use crate::serving::visitor;

const PAGES: &str = "/api/page/v1/pages";

on_both_backends!(
    a_long_bundle_comes_back_byte_for_byte,
    a_file_that_does_not_decode_in_a_long_bundle_is_named_and_nothing_is_kept,
);

/// `count` binary files of 48 KiB, each different: 40 of them are 2.6 MiB of base64, past the
/// 1 MiB from which a body gets its own mapping and decoding is split across the cores.
fn generate(count: u32, seed: u32) -> Vec<(String, Vec<u8>)> {
    (0..count)
        .map(|n| {
            let mut state = seed
                .wrapping_mul(977)
                .wrapping_add(n)
                .wrapping_mul(2_654_435_761);
            let bytes = (0..48 * 1024)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 17;
                    state ^= state << 5;
                    state.to_le_bytes()[0]
                })
                .collect();
            (format!("bin/s{seed}-f{n}.bin"), bytes)
        })
        .collect()
}

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// `files` as a request sends them, in base64.
fn sent_as_base64(files: &[(String, Vec<u8>)]) -> Vec<String> {
    files
        .iter()
        .map(|(path, bytes)| file_json(path, &base64(bytes), "base64"))
        .collect()
}

/// A file of a request body, written out by hand so that its content can carry escapes.
fn file_json(path: &str, content: &str, encoding: &str) -> String {
    format!(r#"{{"path":"{path}","content":"{content}","encoding":"{encoding}"}}"#)
}

/// A publish body holding `files`, each already written as JSON.
fn publish_body(slug: &str, files: &[String]) -> String {
    format!(
        r#"{{"title":"Long","slug":"{slug}","access":"public","files":[{}]}}"#,
        files.join(",")
    )
}

/// Publishes `files` (each already written as JSON) as the public page `long`.
async fn publish(srv: &Server, key: &str, files: &[String]) -> Reply {
    srv.call("POST", PAGES, Some(key), Some(&publish_body("long", files)))
        .await
}

/// Adds `files` (each already written as JSON) to the page `id`.
async fn add_files(srv: &Server, key: &str, id: &str, files: &[String]) -> Reply {
    let body = format!(r#"{{"files":[{}]}}"#, files.join(","));
    srv.call(
        "POST",
        &format!("{PAGES}/{id}/files"),
        Some(key),
        Some(&body),
    )
    .await
}

/// The bytes the page origin serves at `/ann/{slug}/{path}`.
async fn served(srv: &Server, slug: &str, path: &str) -> Vec<u8> {
    let resp = visitor()
        .get(srv.page(&format!("/ann/{slug}/{path}")))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200, "{path}");
    resp.bytes().await.unwrap().to_vec()
}

/// Every file of `files` is listed on page `id` with the SHA-256 of its bytes, as `sha256sum`
/// computes it apart from the server's code: the digest also names the file's object.
async fn assert_digests(srv: &Server, key: &str, id: &str, files: &[(String, Vec<u8>)]) {
    let listed = srv.get(&format!("{PAGES}/{id}/files"), key).await;
    let listed = listed.assert_status(200)["files"]
        .as_array()
        .unwrap()
        .clone();
    for (path, bytes) in files {
        let entry = listed.iter().find(|f| f["path"] == path.as_str()).unwrap();
        assert_eq!(entry["sha256"], sha256sum(bytes).as_str(), "{path}");
    }
}

async fn a_long_bundle_comes_back_byte_for_byte(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let binaries = generate(40, 1);
    let mut files = sent_as_base64(&binaries);
    // A JSON encoder may write `/` as `\/`: such base64 is a copy, not a slice of the body.
    let (escaped_path, escaped_bytes) = &binaries[7];
    let escaped = base64(escaped_bytes);
    assert!(escaped.contains('/'), "the test needs a `/` to escape");
    files[7] = file_json(escaped_path, &escaped.replace('/', "\\/"), "base64");
    files.push(file_json(
        "index.html",
        "<h1>Gr\u{f6}\u{df}e \u{2713}</h1>",
        "utf8",
    ));
    files.push(r#"{"path":"notes.txt","content":"line\nbreak \"quoted\""}"#.to_owned());
    let r = publish(&srv, &ann.key, &files).await;
    let p = r.assert_status(201).clone();
    let text_bytes = "<h1>Größe ✓</h1>".len() + "line\nbreak \"quoted\"".len();
    assert_eq!(p["fileCount"], 42);
    assert_eq!(p["sizeBytes"], 40 * 48 * 1024 + text_bytes);

    for (path, bytes) in &binaries {
        assert!(served(&srv, "long", path).await == *bytes, "{path} differs");
    }
    let id = p["id"].as_str().unwrap();
    assert_digests(&srv, &ann.key, id, &binaries).await;
    assert_eq!(
        served(&srv, "long", "index.html").await,
        "<h1>Größe ✓</h1>".as_bytes()
    );
    assert_eq!(
        served(&srv, "long", "notes.txt").await,
        b"line\nbreak \"quoted\""
    );

    // Add-files reads its batch the same way: 40 more, and the first 3 replaced. Its body,
    // a little shorter, goes into the mapping the publish's body was read into.
    let mut added = generate(40, 2);
    for (n, (_, bytes)) in added.iter_mut().take(3).enumerate() {
        bytes.reverse();
        bytes[0] = u8::try_from(n).unwrap();
    }
    for (n, file) in added.iter_mut().take(3).enumerate() {
        file.0.clone_from(&binaries[n].0);
    }
    let batch = sent_as_base64(&added);
    let r = add_files(&srv, &ann.key, id, &batch).await;
    assert_eq!(r.assert_status(200)["fileCount"], 42 + 37);
    for (path, bytes) in added.iter().chain(&binaries[3..]) {
        assert!(served(&srv, "long", path).await == *bytes, "{path} differs");
    }
    assert_digests(&srv, &ann.key, id, &added).await;
}

async fn a_file_that_does_not_decode_in_a_long_bundle_is_named_and_nothing_is_kept(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let binaries = generate(40, 3);
    let mut files = sent_as_base64(&binaries);
    files.push(file_json("index.html", "<p>long</p>", "utf8"));
    let good = files.clone();
    files[25] = file_json(&binaries[25].0, "AAAA*AAA", "base64");
    let r = publish(&srv, &ann.key, &files).await;
    r.assert_error(400, "invalid_request");
    let message = r.body["message"].as_str().unwrap();
    assert!(message.contains(&binaries[25].0), "{message}");
    let listed = srv.get(PAGES, &ann.key).await;
    assert_eq!(listed.assert_status(200)["pages"], Value::Array(vec![]));

    // The slug was never taken, and the page's files are whole after a refused add-files.
    let r = publish(&srv, &ann.key, &good).await;
    let id = r.assert_status(201)["id"].as_str().unwrap().to_owned();
    let mut batch = sent_as_base64(&generate(40, 4));
    batch[0] = file_json(&binaries[0].0, &base64(b"replacement"), "base64");
    batch[39] = file_json("bin/last.bin", "AAAA", "hex");
    let r = add_files(&srv, &ann.key, &id, &batch).await;
    r.assert_error(400, "invalid_request");
    let message = r.body["message"].as_str().unwrap();
    assert!(
        message.contains("bin/last.bin") && message.contains("hex"),
        "{message}"
    );
    let got = srv.get(&format!("{PAGES}/{id}"), &ann.key).await;
    assert_eq!(got.assert_status(200)["fileCount"], 41);
    assert!(served(&srv, "long", &binaries[0].0).await == binaries[0].1);
}

/// The resident memory of the server's process, in KiB.
fn resident_kib(srv: &Server) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", srv.child.id())).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap()
}

/// The mapping a long body was read into is kept for the next one while the server is busy,
/// and goes back to the system once it has waited a whole janitor interval.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mapping_kept_for_long_bodies_goes_back_when_idle() {
    let Some(db) = TestDb::create(Backend::Sqlite).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let srv = db.start_with(&[("QUIRE_JANITOR_INTERVAL_SECS", "1")]);
    // 160 files of 48 KiB: a body of 10.3 MiB, so that its pages stand well clear of the
    // allocator's own ups and downs in the process's resident memory.
    let mut files = sent_as_base64(&generate(160, 5));
    files.push(file_json("index.html", "<p>long</p>", "utf8"));
    let r = publish(&srv, &ann.key, &files).await;
    let id = r.assert_status(201)["id"].as_str().unwrap().to_owned();
    let before = resident_kib(&srv);
    let mut unmapped = false;
    for _ in 0..50 {
        if srv.logs().contains("janitor unmapped an idle body mapping") {
            unmapped = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(unmapped, "the janitor kept the mapping\n{}", srv.logs());
    let after = resident_kib(&srv);
    assert!(
        after + 4 * 1024 <= before,
        "the 10.3 MiB body's pages are still resident: {before} KiB, then {after} KiB"
    );

    // The next long body gets a mapping of its own.
    let added = generate(40, 6);
    let r = add_files(&srv, &ann.key, &id, &sent_as_base64(&added)).await;
    assert_eq!(r.assert_status(200)["fileCount"], 201);
    assert!(served(&srv, "long", &added[39].0).await == added[39].1);
}
