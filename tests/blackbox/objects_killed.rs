//! A server killed (SIGKILL) in the middle of an upload, on both databases, with local disk
//! and with the S3-compatible server: once the upload's lease lapses, the janitor leaves
//! nothing of it, neither its record (its slug is free again) nor its bytes (no staging file
//! on disk, no object and no open multipart upload in the bucket).

use std::time::{Duration, Instant};

use crate::harness::{Backend, Server, TestDb, on_both_backends};
use crate::objects::{OBJECTS, stored_files};

on_both_backends!(an_upload_killed_on_local_disk_leaves_nothing_after_its_lease);

/// The test that needs the S3 server, in a module of its own: each use of the macro makes its
/// `sqlite` and `postgres` modules.
mod on_s3 {
    use super::an_upload_killed_on_s3_leaves_nothing_after_its_lease;
    use crate::harness::on_both_backends;

    on_both_backends!(
        #[cfg_attr(no_s3, ignore = "needs an S3 server: set QUIRE_TEST_S3_ENDPOINT")]
        an_upload_killed_on_s3_leaves_nothing_after_its_lease
    );
}

/// Short enough for a test, long enough that the restart comes first.
const LEASE: (&str, &str) = ("QUIRE_PUBLISH_LEASE_SECS", "6");
const JANITOR: (&str, &str) = ("QUIRE_JANITOR_INTERVAL_SECS", "1");
/// What is sent before the server dies: more than one 5 MiB part.
const SENT: usize = 7 << 20;

/// Starts a raw upload at slug `kept` that sends [`SENT`] bytes and then waits for ever.
fn start_upload(
    srv: &Server,
    key: &str,
) -> tokio::task::JoinHandle<reqwest::Result<reqwest::Response>> {
    let chunks: Vec<std::io::Result<Vec<u8>>> = (0..SENT / (64 << 10))
        .map(|i| Ok(vec![(i % 251) as u8; 64 << 10]))
        .collect();
    let body = futures_util::StreamExt::chain(
        futures_util::stream::iter(chunks),
        futures_util::stream::pending(),
    );
    let request = srv
        .http
        .put(format!("{}{OBJECTS}?filename=kept.bin&slug=kept", srv.base))
        .bearer_auth(key)
        .header("content-type", "application/octet-stream")
        .header("content-length", (4 * SENT).to_string())
        .body(reqwest::Body::wrap_stream(body))
        .send();
    tokio::spawn(request)
}

/// Waits up to 20 s for `done`; panics with `what` otherwise.
async fn within(what: &str, mut done: impl AsyncFnMut() -> bool) {
    let started = Instant::now();
    while !done().await {
        assert!(started.elapsed() < Duration::from_secs(20), "{what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// After the crash: the slug is held until the lease lapses, then free, and `gone` says
/// the bytes went too.
async fn nothing_left(
    srv: &Server,
    key: &str,
    killed: Instant,
    mut gone: impl AsyncFnMut() -> bool,
) {
    let again = || {
        srv.http
            .put(format!(
                "{}{OBJECTS}?filename=again.bin&slug=kept",
                srv.base
            ))
            .bearer_auth(key)
            .header("content-type", "text/plain")
            .body("again")
            .send()
    };
    let first = again().await.unwrap();
    assert_eq!(
        first.status().as_u16(),
        409,
        "the dead upload holds its slug"
    );
    within("the record outlived its lease by 14 s", async || {
        again().await.unwrap().status().as_u16() == 201
    })
    .await;
    assert!(
        killed.elapsed() >= Duration::from_secs(3),
        "freed before the lease could have lapsed"
    );
    within("the bytes outlived the record", async || gone().await).await;
    let listed = srv.get(OBJECTS, key).await.body["objects"].clone();
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed[0]["filename"], "again.bin");
}

async fn an_upload_killed_on_local_disk_leaves_nothing_after_its_lease(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let doomed = db.start_with(&[LEASE, JANITOR]);
    let upload = start_upload(&doomed, &ann.key);
    within("no bytes reached the disk", async || {
        !stored_files(&db).is_empty()
    })
    .await;
    drop(doomed); // SIGKILL, mid-upload
    let killed = Instant::now();
    assert!(upload.await.unwrap().is_err(), "the client saw the crash");
    let srv = db.start_with(&[LEASE, JANITOR]);
    // Only the new object's file stays.
    nothing_left(&srv, &ann.key, killed, async || {
        stored_files(&db).len() == 1
    })
    .await;
}

async fn an_upload_killed_on_s3_leaves_nothing_after_its_lease(b: Backend) {
    let endpoint = std::env::var("QUIRE_TEST_S3_ENDPOINT")
        .expect("QUIRE_TEST_S3_ENDPOINT names the S3 server");
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let bucket = format!("{endpoint}/quire-killed-{}", uuid::Uuid::new_v4());
    let http = reqwest::Client::new();
    assert!(
        http.put(&bucket)
            .send()
            .await
            .unwrap()
            .status()
            .is_success()
    );
    let storage = format!("s3://{}/quire", bucket.rsplit('/').next().unwrap());
    let env = [
        LEASE,
        JANITOR,
        ("QUIRE_STORAGE_URL", storage.as_str()),
        ("AWS_ACCESS_KEY_ID", "test"),
        ("AWS_SECRET_ACCESS_KEY", "test"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ENDPOINT_URL", endpoint.as_str()),
    ];
    let listing = |query: &'static str| {
        let (http, bucket) = (http.clone(), bucket.clone());
        async move {
            http.get(format!("{bucket}?{query}"))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap()
        }
    };
    let doomed = db.start_with(&env);
    let upload = start_upload(&doomed, &ann.key);
    within("no part reached the bucket", async || {
        listing("uploads").await.contains("<Upload>")
    })
    .await;
    drop(doomed); // SIGKILL, mid-upload
    let killed = Instant::now();
    assert!(upload.await.unwrap().is_err(), "the client saw the crash");
    let srv = db.start_with(&env);
    nothing_left(&srv, &ann.key, killed, async || {
        let uploads = listing("uploads").await;
        let objects = listing("list-type=2&prefix=quire/objects/").await;
        // The new object's blob alone: no part, no marker.
        !uploads.contains("<Upload>") && objects.matches("<Key>").count() == 1
    })
    .await;
}
