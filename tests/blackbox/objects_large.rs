//! A gibibyte through the object service, on local disk and on the S3-compatible server:
//! streamed in, out to its owner and out to a visitor of the owner's origin, while the
//! server's peak resident memory (read from `/proc`) stays under 200 MiB, and what comes
//! back hashes the same.

use futures_util::StreamExt;
use quire_kernel::secret::Sha256Running;

use crate::harness::{Server, TestDb};
use crate::objects::OBJECTS;

const GIB: usize = 1 << 30;
const PIECE: usize = 1 << 20;
const PEAK_LIMIT_KIB: u64 = 200 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gibibyte_streams_through_local_disk_in_bounded_memory() {
    let Some(db) = TestDb::create(crate::harness::Backend::Sqlite).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let srv = db.start();
    round_trip(&srv, &ann.key).await;
}

#[cfg_attr(no_s3, ignore = "needs an S3 server: set QUIRE_TEST_S3_ENDPOINT")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gibibyte_streams_through_s3_in_bounded_memory() {
    let endpoint = std::env::var("QUIRE_TEST_S3_ENDPOINT")
        .expect("QUIRE_TEST_S3_ENDPOINT names the S3 server");
    let Some(db) = TestDb::create(crate::harness::Backend::Sqlite).await else {
        return;
    };
    let bucket = format!("quire-objects-{}", uuid::Uuid::new_v4());
    let created = reqwest::Client::new()
        .put(format!("{endpoint}/{bucket}"))
        .send()
        .await
        .unwrap();
    assert!(created.status().is_success());
    let ann = db.create_account("ann", &[]);
    let storage = format!("s3://{bucket}/quire");
    let srv = db.start_with(&[
        ("QUIRE_STORAGE_URL", storage.as_str()),
        ("AWS_ACCESS_KEY_ID", "test"),
        ("AWS_SECRET_ACCESS_KEY", "test"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ENDPOINT_URL", endpoint.as_str()),
    ]);
    let id = round_trip(&srv, &ann.key).await;
    srv.delete(&format!("{OBJECTS}/{id}"), &ann.key, None)
        .await
        .assert_status(204);
    let listing = reqwest::Client::new()
        .get(format!(
            "{endpoint}/{bucket}?list-type=2&prefix=quire/objects/"
        ))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(listing.matches("<Key>").count(), 0, "{listing}");
}

/// The `n`th mebibyte of the test file: one random mebibyte, made once, with the piece's
/// number written into its first bytes, so that every piece differs.
fn piece(n: usize) -> Vec<u8> {
    static BASE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    let base = BASE.get_or_init(|| {
        let mut bytes = vec![0u8; PIECE];
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        for chunk in bytes.chunks_mut(8) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            chunk.copy_from_slice(&state.to_le_bytes()[..chunk.len()]);
        }
        bytes
    });
    let mut bytes = base.clone();
    bytes[..8].copy_from_slice(&(n as u64).to_le_bytes());
    bytes
}

fn peak_rss_kib(srv: &Server) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", srv.child.id())).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Uploads a GiB as a raw body, downloads it as its owner, and returns the object's id.
async fn round_trip(srv: &Server, key: &str) -> String {
    let mut sent = Sha256Running::default();
    for n in 0..GIB / PIECE {
        sent.update(&piece(n));
    }
    let sent = sent.hex();
    let client = crate::harness::client()
        .timeout(std::time::Duration::from_secs(600))
        .build()
        .unwrap();
    let body =
        futures_util::stream::iter(0..GIB / PIECE).map(|n| Ok::<_, std::io::Error>(piece(n)));
    let made = client
        .put(format!("{}{OBJECTS}?filename=big.bin", srv.base))
        .header("authorization", format!("Bearer {key}"))
        .header("content-type", "application/octet-stream")
        .header("content-length", GIB.to_string())
        .body(reqwest::Body::wrap_stream(body))
        .send()
        .await
        .unwrap();
    assert_eq!(made.status(), 201);
    let made: serde_json::Value = made.json().await.unwrap();
    assert_eq!(made["sizeBytes"], GIB);
    assert_eq!(made["sha256"], sent.as_str());
    let after_upload = peak_rss_kib(srv);
    assert!(
        after_upload < PEAK_LIMIT_KIB,
        "peak RSS {after_upload} KiB during the upload"
    );

    let id = made["id"].as_str().unwrap().to_owned();
    let resp = client
        .get(format!("{}{OBJECTS}/{id}/content", srv.base))
        .header("authorization", format!("Bearer {key}"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.content_length(), Some(GIB as u64));
    let mut got = Sha256Running::default();
    let mut length = 0;
    let mut stream = resp.bytes_stream();
    while let Some(piece) = stream.next().await {
        let piece = piece.unwrap();
        length += piece.len();
        got.update(&piece);
    }
    assert_eq!(length, GIB);
    assert_eq!(got.hex(), sent);
    let after_download = peak_rss_kib(srv);
    assert!(
        after_download < PEAK_LIMIT_KIB,
        "peak RSS {after_download} KiB during the download"
    );
    // And once more to a visitor, from the owner's origin.
    srv.patch(
        &format!("{OBJECTS}/{id}"),
        key,
        serde_json::json!({"access": "public"}),
    )
    .await
    .assert_status(200);
    let resp = client
        .get(made["url"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let mut got = Sha256Running::default();
    let mut stream = resp.bytes_stream();
    while let Some(piece) = stream.next().await {
        got.update(&piece.unwrap());
    }
    assert_eq!(got.hex(), sent);
    let after_visit = peak_rss_kib(srv);
    assert!(
        after_visit < PEAK_LIMIT_KIB,
        "peak RSS {after_visit} KiB during the visitor's download"
    );
    eprintln!(
        "peak RSS: {after_upload} KiB after the upload, {after_download} KiB after the download"
    );
    id
}
