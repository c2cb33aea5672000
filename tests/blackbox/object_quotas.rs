//! The object bytes of an account, and object uploads among the bodies in flight, on both
//! databases with objects on local disk: an upload that would pass the account's quota is
//! refused `413 storage_quota_exceeded` with the figures (before a byte is stored when its
//! length is declared, as its bytes pass the room left when not), and nothing of it stays,
//! neither file nor record; a replacement counts the difference; the list shows the
//! figures. Long uploads count among the bodies in flight as other long bodies do: past the
//! credential's share `429`, past the server's bound `503`, both with `Retry-After`, and the
//! place comes back with the body.

use quire_kernel::AccountId;
use quire_objects::ObjectRecords;
use serde_json::json;
use tokio::io::AsyncWriteExt;

use crate::harness::{Account, Backend, Reply, Server, TestDb, eventually, on_both_backends};
use crate::objects::{OBJECTS, Part, send, stored_files, upload};

on_both_backends!(
    an_upload_past_the_accounts_object_bytes_is_refused_and_stores_nothing,
    object_uploads_count_among_the_bodies_in_flight
);

const MIB: usize = 1 << 20;

/// A raw upload of `bytes` to `path` (`PUT`, declared length).
async fn put(srv: &Server, key: &str, path: &str, bytes: Vec<u8>) -> Reply {
    send(srv, "PUT", path, key, "application/octet-stream", bytes).await
}

/// A raw upload of `pieces` pieces of `size` bytes as a chunked body (no declared length).
async fn put_chunked(srv: &Server, key: &str, path: &str, pieces: usize, size: usize) -> Reply {
    let resp = srv
        .http
        .put(format!("{}{path}", srv.base))
        .header("authorization", format!("Bearer {key}"))
        .body(reqwest::Body::wrap_stream(futures_util::stream::iter(
            (0..pieces).map(move |_| Ok::<_, std::io::Error>(vec![5u8; size])),
        )))
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.unwrap();
    Reply {
        status,
        body: serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
        text,
        headers,
    }
}

/// What the account holds: its ready objects' bytes, and the records that are not ready
/// (an upload's pending record, left behind).
async fn held_records(db: &TestDb, account: &Account) -> (u64, usize) {
    let store = db.store();
    let id = AccountId(account.account_id.parse().unwrap());
    let bytes = store.stored_bytes(Some(id)).await.unwrap();
    let later = time::OffsetDateTime::now_utc() + time::Duration::days(1);
    let pending = store.stale_pending(later).await.unwrap().len();
    (bytes.first().map_or(0, |(_, b)| *b), pending)
}

#[track_caller]
fn assert_quota(reply: &Reply, used: u64) {
    reply.assert_error(413, "storage_quota_exceeded");
    assert_eq!(reply.body["limit"], "object_bytes", "{}", reply.text);
    assert_eq!(reply.body["used"], used, "{}", reply.text);
    assert_eq!(reply.body["quota"], 10_000, "{}", reply.text);
    let message = reply.body["message"].as_str().unwrap();
    assert!(message.contains("10000 bytes"), "{message}");
}

async fn an_upload_past_the_accounts_object_bytes_is_refused_and_stores_nothing(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let bob = db.create_account("bob", &[]);
    let srv = db.start_with(&[("QUIRE_MAX_OBJECT_BYTES_PER_ACCOUNT", "10000")]);

    let first = upload(&srv, &ann.key, &[Part::File(Some("first.bin"), &[1; 6000])]).await;
    let first_id = first.assert_status(201)["id"].as_str().unwrap().to_owned();
    let listed = srv.get(OBJECTS, &ann.key).await;
    assert_eq!(
        listed.assert_status(200)["quota"],
        json!({ "bytes": { "used": 6000, "limit": 10000 } })
    );

    // Past the quota, in another project of the account too, whichever way it is sent:
    // refused with the figures, and nothing of it stays.
    let (_, campaign) = srv.project(&ann.key, "campaign").await;
    let files = stored_files(&db).len();
    let to_campaign = |name: &str| format!("{OBJECTS}?filename={name}&project={campaign}");
    let declared = put(&srv, &ann.key, &to_campaign("declared.bin"), vec![2; 5000]).await;
    assert_quota(&declared, 6000);
    let chunked = put_chunked(&srv, &ann.key, &to_campaign("chunked.bin"), 3, 2000).await;
    assert_quota(&chunked, 6000);
    let multipart = upload(
        &srv,
        &ann.key,
        &[
            Part::Field("project", &campaign),
            Part::File(Some("form.bin"), &[3; 5000]),
        ],
    )
    .await;
    assert_quota(&multipart, 6000);
    assert_eq!(stored_files(&db).len(), files, "no file stays");
    assert_eq!(held_records(&db, &ann).await, (6000, 0), "no record stays");

    // A replacement counts the difference: the bytes replaced leave the quota.
    let content = format!("{OBJECTS}/{first_id}/content");
    put(&srv, &ann.key, &content, vec![4; 9000])
        .await
        .assert_status(200);
    let over = put(&srv, &ann.key, &content, vec![4; 10_001]).await;
    assert_quota(&over, 0);
    let kept = srv.get(&format!("{OBJECTS}/{first_id}"), &ann.key).await;
    assert_eq!(
        kept.assert_status(200)["sizeBytes"],
        9000,
        "the bytes it had stay"
    );
    assert_eq!(held_records(&db, &ann).await, (9000, 0));

    // Up to the quota exactly, then not a byte more; another account has its own.
    put(&srv, &ann.key, &to_campaign("last.bin"), vec![6; 1000])
        .await
        .assert_status(201);
    let one_more = put(&srv, &ann.key, &to_campaign("one.bin"), vec![7]).await;
    assert_quota(&one_more, 10_000);
    put(
        &srv,
        &bob.key,
        &format!("{OBJECTS}?filename=b.bin"),
        vec![8; 5000],
    )
    .await
    .assert_status(201);
    assert_eq!(held_records(&db, &ann).await, (10_000, 0));
    assert_eq!(stored_files(&db).len(), files + 2);
    let listed = srv
        .get(&format!("{OBJECTS}?project={campaign}"), &ann.key)
        .await;
    assert_eq!(
        listed.assert_status(200)["quota"]["bytes"],
        json!({ "used": 10000, "limit": 10000 }),
        "the account's figure, whatever the project"
    );
}

/// Starts a raw upload of `length` declared bytes from `key` and sends only its first
/// piece: the connection holds its body's place until it is dropped.
async fn hold_upload(srv: &Server, key: &str, length: usize) -> tokio::net::TcpStream {
    let mut stream = tokio::net::TcpStream::connect(&srv.addr).await.unwrap();
    let head = format!(
        "PUT {OBJECTS}?filename=held.bin HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: application/octet-stream\r\nContent-Length: {length}\r\n\r\n",
        srv.addr
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&vec![9u8; 64 * 1024]).await.unwrap();
    stream
}

#[track_caller]
fn assert_busy(reply: &Reply, status: u16, code: &str) {
    reply.assert_error(status, code);
    assert_eq!(reply.body["limit"], "bodies_in_flight", "{}", reply.text);
    assert_eq!(
        reply
            .headers
            .get("retry-after")
            .map(|v| v.to_str().unwrap()),
        Some("5")
    );
}

async fn object_uploads_count_among_the_bodies_in_flight(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let bob = db.create_account("bob", &[]);
    let srv = db.start_with(&[
        ("QUIRE_BODY_BYTES_IN_FLIGHT", &(3 * MIB).to_string()),
        ("QUIRE_BODY_BYTES_IN_FLIGHT_PER_KEY", &(2 * MIB).to_string()),
    ]);
    let path = format!("{OBJECTS}?filename=up.bin");

    // Ann's 2 MiB upload, under way (its pending record is stored once its place is
    // taken), holds her share: her next long one is refused.
    let held = hold_upload(&srv, &ann.key, 2 * MIB).await;
    eventually("the upload under way has its record", || async {
        held_records(&db, &ann).await.1 == 1
    })
    .await;
    assert_busy(
        &put(&srv, &ann.key, &path, vec![1; MIB]).await,
        429,
        "rate_limited",
    );
    // One of unknown length is counted as it arrives, and stopped once past the share.
    let chunked = put_chunked(&srv, &ann.key, &path, 24, 64 * 1024).await;
    assert_busy(&chunked, 429, "rate_limited");
    // Bob has a share of his own, within the server's bound (3 MiB): 1.5 MiB passes it.
    assert_busy(
        &put(&srv, &bob.key, &path, vec![2; 3 * MIB / 2]).await,
        503,
        "server_busy",
    );
    // Short uploads are not counted.
    put(&srv, &bob.key, &path, vec![3; 1000])
        .await
        .assert_status(201);

    // The place goes with the body: Ann's long upload is taken again.
    drop(held);
    eventually("the dropped upload's place comes back", || async {
        let r = put(&srv, &ann.key, &path, vec![4; MIB]).await;
        if r.status != 201 {
            assert_eq!(r.status, 429, "{}", r.text);
        }
        r.status == 201
    })
    .await;
}
