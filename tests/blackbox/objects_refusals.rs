//! Every refusal of an upload, with its code, on both databases; nothing refused leaves a
//! record or a byte in storage.

use serde_json::json;

use crate::harness::{Backend, on_both_backends};
use crate::objects::{BOUNDARY, OBJECTS, Part, download, form, send, stored_files, upload};

on_both_backends!(
    every_upload_refusal_has_its_code_and_stores_nothing,
    a_refused_upload_body_closes_its_connection,
);

/// What a client that sends its whole body before reading gets once it is past the cap:
/// the head and body of the answer, and whether the server closed the connection (EOF)
/// within 15 s. It sends 64 KiB pieces (chunked, or as the declared length says) for as
/// long as the server takes them, reading whatever comes back between them.
fn send_past_the_cap(addr: &str, head: &str, chunked: bool) -> (String, bool) {
    use std::io::{ErrorKind, Read, Write};
    use std::time::{Duration, Instant};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_write_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    let piece = vec![b'x'; 64 * 1024];
    let framed = if chunked {
        [format!("{:x}\r\n", piece.len()).as_bytes(), &piece, b"\r\n"].concat()
    } else {
        piece
    };
    let (mut answer, mut buf) = (Vec::new(), vec![0u8; 64 * 1024]);
    let (mut writing, mut written) = (true, 0usize);
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        // Sends until the socket refuses: 1 GiB at most, far past any cap here.
        if writing && written < 1 << 30 {
            match stream.write(&framed) {
                Ok(n) => written += n,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(_) => writing = false,
            }
        }
        match stream.read(&mut buf) {
            Ok(0) => return (String::from_utf8_lossy(&answer).into_owned(), true),
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            // A reset is a close too, though a client may then lose the answer: the
            // assertions on the answer say whether it came.
            Err(_) => return (String::from_utf8_lossy(&answer).into_owned(), true),
        }
    }
    (String::from_utf8_lossy(&answer).into_owned(), false)
}

/// A body refused past the cap ends its connection: the 413 says `Connection: close` and
/// the server closes, so a client that writes its whole body before reading is not left
/// hanging; with a chunked body and with a declared length over the cap alike.
async fn a_refused_upload_body_closes_its_connection(b: Backend) {
    let Some(db) = crate::harness::TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let srv = db.start_with(&[("QUIRE_MAX_OBJECT_BYTES", "1000000")]);
    for (framing, chunked) in [
        ("Transfer-Encoding: chunked".to_owned(), true),
        ("Content-Length: 50000000".to_owned(), false),
    ] {
        let head = format!(
            "PUT {OBJECTS}?filename=big.bin HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/octet-stream\r\n{framing}\r\n\r\n",
            srv.addr, ann.key
        );
        let addr = srv.addr.clone();
        let started = std::time::Instant::now();
        let (answer, closed) =
            tokio::task::spawn_blocking(move || send_past_the_cap(&addr, &head, chunked))
                .await
                .unwrap();
        assert!(answer.starts_with("HTTP/1.1 413"), "{framing}: {answer:?}");
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        assert!(
            head.to_ascii_lowercase().contains("\r\nconnection: close"),
            "{framing}: {head}"
        );
        let body: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(body["error"], "payload_too_large", "{framing}");
        assert_eq!(body["limit"], "object_size", "{framing}");
        assert!(
            closed,
            "{framing}: still open after {:?}",
            started.elapsed()
        );
    }
    assert!(stored_files(&db).is_empty());
    // The server answers new connections as before.
    srv.call("GET", "/healthz", None, None)
        .await
        .assert_status(200);
}

async fn every_upload_refusal_has_its_code_and_stores_nothing(b: Backend) {
    let Some(db) = crate::harness::TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let bob = db.create_account("bob", &[]);
    let srv = db.start_with(&[("QUIRE_MAX_OBJECT_BYTES", "1000")]);
    let multipart = format!("multipart/form-data; boundary={BOUNDARY}");
    let file = |bytes: &'static [u8]| Part::File(Some("f.bin"), bytes);

    let not_multipart = send(
        &srv,
        "POST",
        OBJECTS,
        &ann.key,
        "application/json",
        b"{}".to_vec(),
    )
    .await;
    not_multipart.assert_error(400, "invalid_multipart_body");
    let no_boundary = send(
        &srv,
        "POST",
        OBJECTS,
        &ann.key,
        "multipart/form-data",
        form(&[file(b"x")]),
    )
    .await;
    no_boundary.assert_error(400, "invalid_multipart_body");
    let wrong_boundary = send(
        &srv,
        "POST",
        OBJECTS,
        &ann.key,
        "multipart/form-data; boundary=another",
        form(&[file(b"x")]),
    )
    .await;
    wrong_boundary.assert_error(400, "invalid_multipart_body");
    upload(&srv, &ann.key, &[Part::Field("title", "no file")])
        .await
        .assert_error(400, "invalid_multipart_body");
    upload(&srv, &ann.key, &[file(b"one"), file(b"two")])
        .await
        .assert_error(400, "invalid_multipart_body");
    upload(
        &srv,
        &ann.key,
        &[file(b"one"), Part::Field("title", "late")],
    )
    .await
    .assert_error(400, "invalid_multipart_body");
    let long = "x".repeat(64 * 1024 + 1);
    upload(&srv, &ann.key, &[Part::Field("title", &long), file(b"x")])
        .await
        .assert_error(400, "invalid_multipart_body");
    let cut = form(&[file(b"cut short")]);
    send(
        &srv,
        "POST",
        OBJECTS,
        &ann.key,
        &multipart,
        cut[..cut.len() - 20].to_vec(),
    )
    .await
    .assert_error(400, "invalid_multipart_body");

    upload(
        &srv,
        &ann.key,
        &[Part::Field("access", "password"), file(b"x")],
    )
    .await
    .assert_error(400, "password_required");
    upload(
        &srv,
        &ann.key,
        &[Part::Field("access", "secret"), file(b"x")],
    )
    .await
    .assert_error(400, "invalid_request");
    upload(&srv, &ann.key, &[Part::Field("maxViews", "0"), file(b"x")])
        .await
        .assert_error(400, "invalid_request");
    upload(
        &srv,
        &ann.key,
        &[Part::Field("allow", "not json"), file(b"x")],
    )
    .await
    .assert_error(400, "invalid_request");
    upload(&srv, &ann.key, &[Part::Field("colour", "red"), file(b"x")])
        .await
        .assert_error(400, "invalid_request");
    upload(
        &srv,
        &ann.key,
        &[Part::Field("contentType", "pdf"), file(b"x")],
    )
    .await
    .assert_error(400, "invalid_request");
    upload(
        &srv,
        &ann.key,
        &[Part::Field("project", "nope"), file(b"x")],
    )
    .await
    .assert_error(403, "insufficient_scope");

    // The cap: refused as the bytes pass it, with and without a declared length.
    let big = vec![7u8; 1500];
    let too_big = upload(&srv, &ann.key, &[Part::File(Some("big.bin"), &big)]).await;
    too_big.assert_error(413, "payload_too_large");
    assert_eq!(too_big.body["limit"], "object_size");
    assert!(too_big.body["message"].as_str().unwrap().contains("1000"));
    let streamed = srv
        .http
        .put(format!("{}{OBJECTS}?filename=big.bin", srv.base))
        .header("authorization", format!("Bearer {}", ann.key))
        .body(reqwest::Body::wrap_stream(futures_util::stream::iter(
            (0..3).map(|_| Ok::<_, std::io::Error>(vec![1u8; 600])),
        )))
        .send()
        .await
        .unwrap();
    assert_eq!(streamed.status(), 413);
    let exact = send(
        &srv,
        "PUT",
        &format!("{OBJECTS}?filename=exact.bin"),
        &ann.key,
        "application/octet-stream",
        vec![1u8; 1000],
    )
    .await;
    exact.assert_status(201);
    send(&srv, "PUT", OBJECTS, &ann.key, "text/plain", b"x".to_vec())
        .await
        .assert_error(400, "invalid_request");

    // Who may upload.
    send(
        &srv,
        "POST",
        OBJECTS,
        "qk_wrong",
        &multipart,
        form(&[file(b"x")]),
    )
    .await
    .assert_error(401, "invalid_api_key");
    let (links_only, _) = srv.mint(&ann.key, &["link"], None).await;
    upload(&srv, &links_only, &[file(b"x")])
        .await
        .assert_error(403, "insufficient_scope");
    let (serve_key, _) = srv.mint(&ann.key, &["serve"], None).await;
    let by_app = upload(&srv, &serve_key, &[file(b"app")]).await;
    let by_app_id = by_app.assert_status(201)["id"].as_str().unwrap().to_owned();

    // Another account's object does not exist for bob.
    srv.get(&format!("{OBJECTS}/{by_app_id}"), &bob.key)
        .await
        .assert_error(404, "not_found");
    srv.delete(&format!("{OBJECTS}/{by_app_id}"), &bob.key, None)
        .await
        .assert_error(404, "not_found");
    assert_eq!(download(&srv, &bob.key, &by_app_id).await.0, 404);
    let missing = uuid::Uuid::new_v4();
    srv.get(&format!("{OBJECTS}/{missing}"), &ann.key)
        .await
        .assert_error(404, "not_found");
    srv.get(&format!("{OBJECTS}/not-a-uuid"), &ann.key)
        .await
        .assert_error(404, "not_found");
    srv.patch(
        &format!("{OBJECTS}/{by_app_id}"),
        &ann.key,
        json!({"access": "password"}),
    )
    .await
    .assert_error(400, "password_required");
    srv.patch(
        &format!("{OBJECTS}/{by_app_id}"),
        &ann.key,
        json!({"status": "gone"}),
    )
    .await
    .assert_error(400, "invalid_request");
    srv.get(&format!("{OBJECTS}?status=gone"), &ann.key)
        .await
        .assert_error(400, "invalid_request");
    upload(
        &srv,
        &ann.key,
        &[Part::Field("alias", "taken-one"), file(b"a")],
    )
    .await
    .assert_status(201);
    upload(
        &srv,
        &ann.key,
        &[Part::Field("alias", "taken-one"), file(b"b")],
    )
    .await
    .assert_error(409, "alias_conflict");
    srv.patch(
        &format!("{OBJECTS}/{by_app_id}"),
        &ann.key,
        json!({"alias": "taken-one"}),
    )
    .await
    .assert_error(409, "alias_conflict");
    send(
        &srv,
        "PUT",
        &format!("{OBJECTS}/{by_app_id}/content"),
        &ann.key,
        "application/octet-stream",
        vec![0u8; 1001],
    )
    .await
    .assert_error(413, "payload_too_large");
    // The refused replacement left the bytes as they were.
    assert_eq!(download(&srv, &ann.key, &by_app_id).await.2, b"app");

    // Exactly three objects were stored, each with one blob; nothing refused left a trace.
    let listed = srv.get(OBJECTS, &ann.key).await;
    assert_eq!(
        listed.assert_status(200)["objects"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert_eq!(stored_files(&db).len(), 3, "{:?}", stored_files(&db));
}
