//! Every refusal of an upload, with its code, on both databases; nothing refused leaves a
//! record or a byte in storage.

use serde_json::json;

use crate::harness::{Backend, on_both_backends};
use crate::objects::{BOUNDARY, OBJECTS, Part, download, form, send, stored_files, upload};

on_both_backends!(every_upload_refusal_has_its_code_and_stores_nothing);

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
