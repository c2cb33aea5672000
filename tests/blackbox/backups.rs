//! `admin backup DIR` while the server serves, then changes, then `admin restore DIR` with the
//! server stopped: the restarted server shows exactly the backed-up state (pages, their bytes,
//! an object, policies, keys, the sealing key). Refusals: a non-empty DIR, a DIR without a
//! manifest, a restore while a server has the database open. On PostgreSQL the backup prints
//! the `pg_dump` to run and copies the rest.

use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::harness::{Backend, TestDb};
use crate::objects::{OBJECTS, Part, download, upload};
use crate::serving::{PAGES, publish, site, visit};

fn text(out: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn run(db: &TestDb, args: &[&str]) -> (String, String) {
    let out = db.admin(args, &[]);
    let (stdout, stderr) = text(&out);
    assert!(
        out.status.success(),
        "admin {args:?} failed:\n{stdout}\n{stderr}"
    );
    (stdout, stderr)
}

fn manifest(dir: &std::path::Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap()
}

fn mode(path: &std::path::Path) -> u32 {
    std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(path).unwrap().permissions()) & 0o777
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restore_brings_back_exactly_what_the_backup_held() {
    let db = TestDb::create(Backend::Sqlite).await.unwrap();
    let ann = db.create_account("ann", &[]);
    let srv = db.start();
    let one = publish(&srv, &ann.key, site("one")).await;
    let two = publish(&srv, &ann.key, site("two")).await;
    let bytes = b"object bytes, kept apart from pages ".repeat(50);
    let object = upload(
        &srv,
        &ann.key,
        &[
            Part::Field("title", "Notes"),
            Part::File(Some("notes.txt"), &bytes),
        ],
    )
    .await
    .assert_status(201)
    .clone();
    let object_id = object["id"].as_str().unwrap().to_owned();
    let (kept_key, _) = srv.mint(&ann.key, &["page"], None).await;
    let before_two = visit(&srv, "/ann/two/").await;
    assert_eq!(before_two.status, 200);
    let before_css = visit(&srv, "/ann/two/style.css").await;
    assert_eq!(before_css.status, 200);
    let key_file = std::fs::read(db.dir.path().join("data/secret.key")).unwrap();

    // The backup, while the server runs.
    let backup = db.dir.path().join("backup");
    let (out, _) = run(&db, &["backup", backup.to_str().unwrap()]);
    for step in [
        "database: SQLite",
        "VACUUM INTO",
        "bundles:",
        "key file:",
        "checked:",
    ] {
        assert!(out.contains(step), "no {step:?} in:\n{out}");
    }
    assert!(out.contains("backup complete"), "{out}");
    let m = manifest(&backup);
    assert_eq!(m["format"], "quire-backup");
    assert_eq!(m["version"], 1);
    assert_eq!(m["database"]["backend"], "sqlite");
    assert_eq!(m["database"]["counts"]["pages"], 2);
    assert_eq!(m["database"]["counts"]["pageFiles"], 10);
    assert_eq!(m["database"]["counts"]["objects"], 1);
    assert_eq!(m["storage"]["kind"], "file");
    assert!(m["storage"]["files"].as_u64().unwrap() >= 11, "{m}");
    assert_eq!(std::fs::read(backup.join("secret.key")).unwrap(), key_file);
    assert_eq!(mode(&backup.join("secret.key")), 0o600);
    assert_eq!(mode(&backup), 0o700);

    // A second backup into it is refused; the first is untouched.
    let out = db.admin(&["backup", backup.to_str().unwrap()], &[]);
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("is not empty"), "{err}");
    assert_eq!(manifest(&backup), m);

    // Changes after the backup: a third page, one deleted, one's files replaced and its
    // access changed, the object deleted, a new key.
    publish(&srv, &ann.key, site("three")).await;
    let one_id = one["id"].as_str().unwrap();
    srv.delete(&format!("{PAGES}/{one_id}"), &ann.key, None)
        .await
        .assert_status(204);
    let two_id = two["id"].as_str().unwrap();
    let files = json!({"files": [{"path": "index.html", "content": "<p>changed</p>"}]});
    srv.call(
        "PUT",
        &format!("{PAGES}/{two_id}/files"),
        Some(&ann.key),
        Some(&files.to_string()),
    )
    .await
    .assert_status(200);
    srv.patch(
        &format!("{PAGES}/{two_id}"),
        &ann.key,
        json!({"access": "password", "password": "a password after the backup"}),
    )
    .await
    .assert_status(200);
    srv.delete(&format!("{OBJECTS}/{object_id}"), &ann.key, None)
        .await
        .assert_status(204);
    let (later_key, _) = srv.mint(&ann.key, &["page"], None).await;
    assert_eq!(visit(&srv, "/ann/one/").await.status, 404);
    assert_ne!(visit(&srv, "/ann/two/").await.status, 200);

    // A restore while the server has the database open is refused, and changes nothing.
    let out = db.admin(&["restore", backup.to_str().unwrap()], &[]);
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("stop every server"), "{err}");
    srv.get(&format!("{PAGES}/{two_id}"), &later_key)
        .await
        .assert_status(200);

    // A directory without a manifest is no backup.
    let empty = db.dir.path().join("not-a-backup");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("quire.db"), b"anything").unwrap();
    let out = db.admin(&["restore", empty.to_str().unwrap()], &[]);
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("no valid manifest.json"), "{err}");

    drop(srv);
    let (out, _) = run(&db, &["restore", backup.to_str().unwrap()]);
    assert!(out.contains("restored"), "{out}");
    assert!(out.contains("moved aside"), "{out}");
    assert!(out.contains("restore complete"), "{out}");
    let names: Vec<String> = std::fs::read_dir(db.dir.path().join("data"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("bundles.before-restore-")),
        "{names:?}"
    );
    assert!(
        !names.iter().any(|n| n.ends_with(".restore-tmp")),
        "{names:?}"
    );
    assert_eq!(
        std::fs::read(db.dir.path().join("data/secret.key")).unwrap(),
        key_file
    );
    assert_eq!(mode(&db.dir.path().join("data/secret.key")), 0o600);

    // The server starts (its signing keys open under the restored key file) on exactly the
    // backed-up state.
    let srv = db.start();
    let r = visit(&srv, "/ann/one/").await;
    assert_eq!(r.status, 200, "the deleted page is back");
    assert_eq!(r.text, before_two.text, "the same home page as two");
    let r = visit(&srv, "/ann/two/").await;
    assert_eq!(
        r.status, 200,
        "public again, with its old files: {}",
        r.text
    );
    assert_eq!(r.text, before_two.text);
    assert_eq!(
        visit(&srv, "/ann/two/style.css").await.text,
        before_css.text
    );
    assert_eq!(visit(&srv, "/ann/three/").await.status, 404);
    let list = srv.get(PAGES, &ann.key).await;
    let mut slugs: Vec<&str> = list.assert_status(200)["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["slug"].as_str().unwrap())
        .collect();
    slugs.sort_unstable();
    assert_eq!(slugs, ["one", "two"]);
    let (status, _, got) = download(&srv, &ann.key, &object_id).await;
    assert_eq!(status, 200);
    assert_eq!(got, bytes, "the deleted object is back with its bytes");
    srv.get(PAGES, &kept_key).await.assert_status(200);
    srv.get(PAGES, &later_key)
        .await
        .assert_error(401, "invalid_api_key");
}

#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_the_backup_prints_the_pg_dump_and_copies_the_rest() {
    let Some(db) = TestDb::create(Backend::Postgres).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let srv = db.start();
    publish(&srv, &ann.key, site("one")).await;
    let backup = db.dir.path().join("backup");
    let (out, _) = run(&db, &["backup", backup.to_str().unwrap()]);
    assert!(out.contains("pg_dump --format=custom"), "{out}");
    assert!(out.contains("database.pgdump"), "{out}");
    assert!(out.contains("bundles:"), "{out}");
    let m = manifest(&backup);
    assert_eq!(m["database"]["backend"], "postgres");
    assert_eq!(m["database"]["copied"], false);
    assert!(!backup.join("quire.db").exists());
    assert_eq!(
        std::fs::read(backup.join("secret.key")).unwrap(),
        std::fs::read(db.dir.path().join("data/secret.key")).unwrap()
    );
    let pages = backup.join("bundles/pages");
    let page_dirs: Vec<_> = std::fs::read_dir(&pages).unwrap().collect();
    assert_eq!(page_dirs.len(), 1);
    let files = std::fs::read_dir(page_dirs[0].as_ref().unwrap().path())
        .unwrap()
        .count();
    assert_eq!(files, 5, "the page's five files");

    // A dump already in DIR is taken; anything else is not.
    let second = db.dir.path().join("second");
    std::fs::create_dir_all(&second).unwrap();
    std::fs::write(second.join("database.pgdump"), b"PGDMP").unwrap();
    let (out, _) = run(&db, &["backup", second.to_str().unwrap()]);
    assert!(out.contains("is already here"), "{out}");
    assert_eq!(manifest(&second)["database"]["dumpPresent"], true);

    drop(srv);
    let (out, _) = run(&db, &["restore", backup.to_str().unwrap()]);
    assert!(out.contains("pg_restore"), "{out}");
    let srv = db.start();
    assert_eq!(visit(&srv, "/ann/one/").await.status, 200);
}

/// The files of a page, `n` of them, whose content is new each round: every replace leaves
/// all of the page's previous files unnamed.
fn churn_files(page: usize, round: usize, n: usize) -> String {
    let files: Vec<Value> = (0..n)
        .map(|n| {
            let path = if n == 0 {
                "index.html".to_owned()
            } else {
                format!("f{n}.txt")
            };
            json!({"path": path, "content": format!("{page}/{round}/{n} {}", "x".repeat(2000))})
        })
        .collect();
    json!({ "files": files }).to_string()
}

/// A backup taken while four pages are each replaced every 0.1 s: the files its database
/// copy names are still in storage when they are copied (replaced files stay until the
/// janitor removes them, minutes later), so it succeeds, and the restore serves every page
/// whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_succeeds_while_pages_are_replaced_several_times_a_second() {
    let db = TestDb::create(Backend::Sqlite).await.unwrap();
    let ann = db.create_account("ann", &[]);
    let srv = std::sync::Arc::new(db.start());
    // Bulk for each round of the copy to take a while, as a real store's does: 6,000 files.
    for n in 0..60 {
        let mut body = json!({"title": format!("Bulk {n}"), "slug": format!("bulk-{n}"),
                              "access": "public"});
        body["files"] =
            serde_json::from_str::<Value>(&churn_files(100 + n, 0, 100)).unwrap()["files"].clone();
        publish(&srv, &ann.key, body).await;
    }
    let mut ids = Vec::new();
    for n in 0..4 {
        let mut body = json!({"title": format!("Churn {n}"), "slug": format!("churn-{n}"),
                              "access": "public"});
        body["files"] =
            serde_json::from_str::<Value>(&churn_files(n, 0, 20)).unwrap()["files"].clone();
        ids.push(
            publish(&srv, &ann.key, body).await["id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let done = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let churn: Vec<_> = ids
        .iter()
        .enumerate()
        .map(|(page, id)| {
            let (srv, key, id, stop, done) = (
                srv.clone(),
                ann.key.clone(),
                id.clone(),
                stop.clone(),
                done.clone(),
            );
            tokio::spawn(async move {
                let mut round = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    round += 1;
                    let body = churn_files(page, round, 20);
                    let path = format!("{PAGES}/{id}/files");
                    srv.call("PUT", &path, Some(&key), Some(&body))
                        .await
                        .assert_status(200);
                    done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
                round
            })
        })
        .collect();
    // Under way before the backup starts: as many replaces answered as there are pages.
    let pages = ids.len();
    crate::harness::eventually("as many replaces answered as there are pages", || async {
        done.load(std::sync::atomic::Ordering::Relaxed) >= pages
    })
    .await;
    let backup = db.dir.path().join("backup");
    let started = std::time::Instant::now();
    let mut command = db.command();
    command.args(["admin", "backup", backup.to_str().unwrap()]);
    let out = tokio::task::spawn_blocking(move || command.output().expect("run admin backup"))
        .await
        .unwrap();
    let took = started.elapsed();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut replaces = 0;
    for c in churn {
        replaces += c.await.unwrap();
    }
    let (stdout, stderr) = text(&out);
    assert!(
        out.status.success(),
        "backup failed after {took:?} with {replaces} replaces:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("backup complete"), "{stdout}");
    assert!(replaces >= 8, "only {replaces} replaces ran");
    // No file its database copy named was gone when the files were copied.
    assert_eq!(manifest(&backup)["database"]["rounds"], 1, "{stdout}");

    drop(srv);
    run(&db, &["restore", backup.to_str().unwrap()]);
    let srv = db.start();
    // Every page's home and files, eight requests at a time (1,280 of them).
    let paths: Vec<String> = (0..4)
        .map(|n| format!("churn-{n}"))
        .chain((0..60).map(|n| format!("bulk-{n}")))
        .flat_map(|n| {
            std::iter::once(format!("/ann/{n}/"))
                .chain((1..20).map(move |f| format!("/ann/{n}/f{f}.txt")))
        })
        .collect();
    let srv = &srv;
    let mut answers = futures_util::stream::iter(paths)
        .map(|path| async move { (visit(srv, &path).await, path) })
        .buffer_unordered(8);
    while let Some((r, path)) = answers.next().await {
        assert_eq!(r.status, 200, "{path}: {}", r.text);
    }
}
