//! The page API when things go wrong: racing publishes, bundle storage that refuses writes,
//! a publish interrupted or killed mid-upload, and the same API on S3 storage.

use serde_json::json;

use crate::harness::{Backend, TestDb, on_both_backends, setup};
use crate::pages::{PAGES, site, with};

async fn racing_publishes_get_one_winner(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    for (field, value, loser) in [
        ("slug", "same-slug", "slug_conflict"),
        ("alias", "same-alias", "alias_conflict"),
    ] {
        let mut tasks = Vec::new();
        for i in 0..8 {
            let body = with(site(&format!("Race {field} {i}")), field, json!(value));
            let srv_ref = &srv;
            let key = ann.key.clone();
            tasks.push(async move { srv_ref.post(PAGES, &key, body).await });
        }
        let replies = futures_util::future::join_all(tasks).await;
        let won = replies.iter().filter(|r| r.status == 201).count();
        assert_eq!(
            won,
            1,
            "{field}: {:?}",
            replies.iter().map(|r| &r.text).collect::<Vec<_>>()
        );
        for r in replies.iter().filter(|r| r.status != 201) {
            r.assert_error(409, loser);
        }
    }
    let pages = srv.get(PAGES, &ann.key).await.body["pages"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(pages, 2);
}

async fn storage_that_refuses_writes_leaves_no_trace(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let storage = db.dir.path().join("bundles");
    std::fs::create_dir_all(&storage).unwrap();
    let srv = db.start_with(&[(
        "QUIRE_STORAGE_URL",
        &format!("file://{}", storage.display()),
    )]);
    let id = srv.post(PAGES, &ann.key, site("Before")).await.body["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let files_before = srv
        .get(&format!("{PAGES}/{id}/files"), &ann.key)
        .await
        .body
        .clone();
    // The page's directory becomes unusable for new objects: a plain file named like one.
    let page_dir = storage.join("pages").join(&id);
    let blocker = page_dir.join(format!("{:0>64}", "f"));
    std::fs::create_dir_all(&blocker).unwrap();
    std::fs::write(blocker.join("x"), b"occupied").unwrap();
    let newcomer = "<p>new</p>";
    let sha = {
        let mut child = std::process::Command::new("sha256sum")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(newcomer.as_bytes())
            .unwrap();
        String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()[..64].to_owned()
    };
    std::fs::create_dir_all(page_dir.join(&sha).join("occupied")).unwrap();
    let r = srv
        .post(
            &format!("{PAGES}/{id}/files"),
            &ann.key,
            json!({"files": [{"path": "new.html", "content": newcomer}]}),
        )
        .await;
    r.assert_error(500, "internal_error");
    assert_eq!(
        srv.get(&format!("{PAGES}/{id}/files"), &ann.key).await.body,
        files_before
    );

    // A whole store that refuses writes: publish fails and leaves no page, link or object.
    std::fs::remove_dir_all(storage.join("pages")).unwrap();
    std::fs::write(storage.join("pages"), b"not a directory").unwrap();
    let r = srv
        .post(
            PAGES,
            &ann.key,
            with(site("Doomed"), "alias", json!("doomed-alias")),
        )
        .await;
    r.assert_error(500, "internal_error");
    let listed = srv.get(PAGES, &ann.key).await;
    assert_eq!(listed.body["pages"].as_array().unwrap().len(), 1);
    std::fs::remove_file(storage.join("pages")).unwrap();
    // The alias was not left taken by a half-made link.
    srv.post(
        PAGES,
        &ann.key,
        with(site("Doomed"), "alias", json!("doomed-alias")),
    )
    .await
    .assert_status(201);
}

async fn an_interrupted_publish_is_never_visible_and_is_swept_at_start(b: Backend) {
    if b != Backend::Postgres {
        return; // The crash state is written with a PostgreSQL client; the fakes cover the logic.
    }
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let storage = db.dir.path().join("bundles");
    let storage_env = format!("file://{}", storage.display());
    let srv = db.start_with(&[("QUIRE_STORAGE_URL", &storage_env)]);
    let kept = srv.post(PAGES, &ann.key, site("Kept")).await.body["id"]
        .as_str()
        .unwrap()
        .to_owned();
    drop(srv);

    // What a crash after "record" and "first object" leaves: a pending row, its manifest and
    // one object, no link.
    let crashed = uuid::Uuid::new_v4();
    let sha = format!("{:0>64}", "ab");
    let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let crashed_text = crashed.to_string();
    client
        .execute(
            "INSERT INTO pages (id, public_id, account_id, project_id, slug, title, entrypoint, status, state, \
             size_bytes, file_count, created_at, updated_at) VALUES ($1::text::uuid, 'CRASHED001', $2::text::uuid, $3::text::uuid, 'crashed', 'Crashed', \
             'index.html', 'active', 'pending', 3, 1, now() - interval '1 hour', now() - interval '1 hour')",
            &[&crashed_text, &ann.account_id, &ann.project_id],
        )
        .await
        .unwrap();
    client
        .execute(
            "INSERT INTO page_files (page_id, path, size_bytes, content_type, sha256) VALUES ($1::text::uuid, 'index.html', 3, 'text/html', $2)",
            &[&crashed_text, &sha],
        )
        .await
        .unwrap();
    let object = storage.join("pages").join(crashed.to_string()).join(&sha);
    std::fs::create_dir_all(object.parent().unwrap()).unwrap();
    std::fs::write(&object, b"abc").unwrap();

    let srv = db.start_with(&[("QUIRE_STORAGE_URL", &storage_env)]);
    srv.get(&format!("{PAGES}/{crashed}"), &ann.key)
        .await
        .assert_error(404, "not_found");
    let mut gone = false;
    for _ in 0..50 {
        let rows = client
            .query(
                "SELECT 1 FROM pages WHERE id = $1::text::uuid",
                &[&crashed_text],
            )
            .await
            .unwrap();
        if rows.is_empty() && !object.exists() {
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        gone,
        "the janitor did not remove the interrupted publish\n{}",
        srv.logs()
    );
    let files = client
        .query(
            "SELECT 1 FROM page_files WHERE page_id = $1::text::uuid",
            &[&crashed_text],
        )
        .await
        .unwrap();
    assert!(files.is_empty());
    srv.get(&format!("{PAGES}/{kept}"), &ann.key)
        .await
        .assert_status(200);
    let listed = srv.get(PAGES, &ann.key).await;
    assert_eq!(listed.body["pages"].as_array().unwrap().len(), 1);
}

/// Object storage that takes connections and never answers; reports the first upload
/// (`PUT`) it receives, which a publish sends only after storing its pending record.
fn black_hole_storage() -> (String, std::sync::mpsc::Receiver<()>) {
    use std::io::Read;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut head = [0u8; 8];
            if stream.read(&mut head).is_ok() && head.starts_with(b"PUT ") {
                let _ = tx.send(());
            }
            held.push(stream);
        }
    });
    (endpoint, rx)
}

/// A server killed mid-upload: its pending page keeps the slug only until its lease lapses
/// (a 6 s lease here; a minute by default), across the restart; what its writes left on
/// disk and no listing shows (a temporary `{sha}#1` object, an emptied page folder) goes at
/// the next janitor pass.
async fn a_publish_killed_mid_upload_frees_its_slug_when_its_lease_lapses(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let lease = ("QUIRE_PUBLISH_LEASE_SECS", "6");
    let (endpoint, uploading) = black_hole_storage();
    let stuck = db.start_with(&[
        lease,
        ("QUIRE_STORAGE_URL", "s3://stuck/quire"),
        ("AWS_ENDPOINT_URL", &endpoint),
        ("AWS_ACCESS_KEY_ID", "test"),
        ("AWS_SECRET_ACCESS_KEY", "test"),
        ("AWS_REGION", "us-east-1"),
    ]);
    let request = stuck
        .http
        .post(format!("{}{PAGES}", stuck.base))
        .bearer_auth(&ann.key)
        .json(&with(site("Site"), "slug", json!("site")))
        .send();
    let publish = tokio::spawn(request);
    tokio::task::spawn_blocking(move || uploading.recv_timeout(std::time::Duration::from_secs(20)))
        .await
        .unwrap()
        .expect("the publish never reached the upload");
    drop(stuck); // SIGKILL, mid-upload
    assert!(publish.await.unwrap().is_err(), "the client saw the crash");
    let killed = std::time::Instant::now();

    let storage = db.dir.path().join("bundles");
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let temporary = storage
        .join("pages")
        .join(uuid::Uuid::new_v4().to_string())
        .join(format!("{:0>64}#1", "ab"));
    std::fs::create_dir_all(temporary.parent().unwrap()).unwrap();
    std::fs::File::create(&temporary)
        .unwrap()
        .set_modified(hour_ago)
        .unwrap();
    let emptied = storage.join("pages").join(uuid::Uuid::new_v4().to_string());
    std::fs::create_dir_all(&emptied).unwrap();
    let storage_env = format!("file://{}", storage.display());
    let srv = db.start_with(&[lease, ("QUIRE_STORAGE_URL", &storage_env)]);

    let again = || srv.post(PAGES, &ann.key, with(site("Again"), "slug", json!("site")));
    again().await.assert_error(409, "slug_conflict");
    assert!(
        srv.get(PAGES, &ann.key).await.body["pages"]
            .as_array()
            .unwrap()
            .is_empty(),
        "the dead publish shows nowhere"
    );
    let mut published = None;
    while killed.elapsed() < std::time::Duration::from_secs(20) {
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        let r = again().await;
        if r.status == 201 {
            published = Some(r);
            break;
        }
        r.assert_error(409, "slug_conflict");
    }
    let published = published.expect("the slug was still held 20 s after the crash");
    assert!(
        killed.elapsed() >= std::time::Duration::from_secs(3),
        "freed before the lease could have lapsed"
    );
    assert_eq!(published.body["slug"], "site");
    let url = srv.page("/ann/site/");
    assert_eq!(published.body["url"], url);
    assert!(!temporary.exists(), "the temporary object was swept");
    assert!(!temporary.parent().unwrap().exists() && !emptied.exists());
    let folders: Vec<_> = std::fs::read_dir(storage.join("pages"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(
        folders,
        vec![published.body["id"].as_str().unwrap().to_owned()]
    );
}

/// The whole page API over S3-compatible storage, the one `QUIRE_TEST_S3_ENDPOINT` names.
async fn pages_on_s3_storage(b: Backend) {
    let endpoint = std::env::var("QUIRE_TEST_S3_ENDPOINT")
        .expect("QUIRE_TEST_S3_ENDPOINT names the S3 server");
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let bucket = format!("quire-bb-{}", uuid::Uuid::new_v4());
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
    srv.call("GET", "/readyz", None, None)
        .await
        .assert_status(200);
    let id = srv
        .post(PAGES, &ann.key, site("On S3"))
        .await
        .assert_status(201)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    srv.post(
        &format!("{PAGES}/{id}/files"),
        &ann.key,
        json!({"files": [{"path": "more.txt", "content": "more"}]}),
    )
    .await
    .assert_status(200);
    let listing = reqwest::Client::new()
        .get(format!(
            "{endpoint}/{bucket}?list-type=2&prefix=quire/pages/{id}/"
        ))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(listing.matches("<Key>").count(), 4, "{listing}");
    srv.delete(&format!("{PAGES}/{id}"), &ann.key, None)
        .await
        .assert_status(204);
    let listing = reqwest::Client::new()
        .get(format!(
            "{endpoint}/{bucket}?list-type=2&prefix=quire/pages/{id}/"
        ))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(listing.matches("<Key>").count(), 0, "{listing}");
}

on_both_backends!(
    racing_publishes_get_one_winner,
    storage_that_refuses_writes_leaves_no_trace,
    an_interrupted_publish_is_never_visible_and_is_swept_at_start,
    a_publish_killed_mid_upload_frees_its_slug_when_its_lease_lapses,
);

/// The test that needs the S3 server, in a module of its own: each use of the macro makes its
/// `sqlite` and `postgres` modules.
mod on_s3 {
    use super::pages_on_s3_storage;
    use crate::harness::on_both_backends;

    on_both_backends!(
        #[cfg_attr(no_s3, ignore = "needs an S3 server: set QUIRE_TEST_S3_ENDPOINT")]
        pages_on_s3_storage
    );
}
