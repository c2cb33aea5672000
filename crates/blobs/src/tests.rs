//! The bundle store on local disk, in memory and on S3: the same round trips, retired
//! objects kept until their marks are forgotten, the sweep of interrupted writes.

use std::time::SystemTime;

use super::*;

async fn round_trip(store: &ObjectBundleStore) {
    let page = PageId::new();
    let other = PageId::new();
    store
        .put(page, "aa11", Bytes::from_static(b"hello"))
        .await
        .unwrap();
    store
        .put(page, "bb22", Bytes::from_static(b"world"))
        .await
        .unwrap();
    store
        .put(other, "cc33", Bytes::from_static(b"!"))
        .await
        .unwrap();
    assert_eq!(store.get(page, "aa11").await.unwrap().unwrap(), b"hello");
    assert_eq!(
        store.get_range(page, "aa11", 1..4).await.unwrap().unwrap(),
        b"ell"
    );
    assert_eq!(store.get_range(page, "zz", 0..1).await.unwrap(), None);
    assert!(store.exists(page, "bb22").await.unwrap());
    assert_eq!(store.get(page, "zz").await.unwrap(), None);
    let mut pages = store.pages().await.unwrap();
    pages.sort();
    let mut expected = vec![page, other];
    expected.sort();
    assert_eq!(pages, expected);
    store.delete(page, "aa11").await.unwrap();
    store.delete(page, "aa11").await.unwrap();
    assert!(!store.exists(page, "aa11").await.unwrap());
    store.delete_page(page).await.unwrap();
    assert!(!store.exists(page, "bb22").await.unwrap());
    assert!(store.exists(other, "cc33").await.unwrap());
    assert_eq!(store.pages().await.unwrap(), vec![other]);
    store.ping().await.unwrap();
}

async fn retiring(store: &ObjectBundleStore) {
    let (page, other) = (PageId::new(), PageId::new());
    let t0 = time::OffsetDateTime::from_unix_timestamp(1_767_225_600).unwrap();
    let later = t0 + time::Duration::minutes(10);
    for (p, sha) in [(page, "aa11"), (page, "bb22"), (other, "cc33")] {
        store.put(p, sha, Bytes::from_static(b"x")).await.unwrap();
    }
    store
        .retire(page, &["aa11".into(), "bb22".into()], t0)
        .await
        .unwrap();
    store.retire(other, &["cc33".into()], later).await.unwrap();
    assert!(
        store.retired(t0).await.unwrap().is_empty(),
        "none before t0"
    );
    let mut due = store
        .retired(t0 + time::Duration::seconds(1))
        .await
        .unwrap();
    due.sort_by(|a, b| a.sha256.cmp(&b.sha256));
    let shas: Vec<&str> = due.iter().map(|m| m.sha256.as_str()).collect();
    assert_eq!(shas, ["aa11", "bb22"]);
    assert!(due.iter().all(|m| m.page == page && m.at == t0));
    // Marked objects are still there, and the marks are no page of their own.
    assert!(store.exists(page, "aa11").await.unwrap());
    assert!(!store.pages().await.unwrap().is_empty());
    store.forget_retired(&due[0], true).await.unwrap();
    store.forget_retired(&due[1], false).await.unwrap();
    assert!(!store.exists(page, "aa11").await.unwrap());
    assert!(
        store.exists(page, "bb22").await.unwrap(),
        "named again: kept"
    );
    let left = store
        .retired(later + time::Duration::seconds(1))
        .await
        .unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!((left[0].page, left[0].sha256.as_str()), (other, "cc33"));
    // Forgetting twice is harmless.
    store.forget_retired(&due[0], true).await.unwrap();
}

#[tokio::test]
async fn retired_objects_stay_until_their_marks_are_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}/bundles", dir.path().display());
    retiring(&ObjectBundleStore::open(&url).unwrap()).await;
    retiring(&ObjectBundleStore::open("memory://").unwrap()).await;
}

#[tokio::test]
async fn local_disk_and_memory_behave_alike() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}/bundles", dir.path().display());
    round_trip(&ObjectBundleStore::open(&url).unwrap()).await;
    round_trip(&ObjectBundleStore::open("memory://").unwrap()).await;
}

/// What a crash mid-write leaves on local disk, which listings hide: the sweep removes
/// idle temporary files and emptied folders, and leaves objects and fresh writes alone.
#[tokio::test]
async fn the_sweep_removes_what_interrupted_writes_left_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let store = ObjectBundleStore::open(&format!("file://{}", dir.path().display())).unwrap();
    let (kept, crashed, emptied) = (PageId::new(), PageId::new(), PageId::new());
    store
        .put(kept, "aa11", Bytes::from_static(b"kept"))
        .await
        .unwrap();
    store
        .put(emptied, "bb22", Bytes::from_static(b"gone"))
        .await
        .unwrap();
    store.delete_page(emptied).await.unwrap();
    let pages = dir.path().join("pages");
    let hour_ago = SystemTime::now() - Duration::from_secs(3600);
    let stale = pages.join(crashed.to_string()).join("cc33#1");
    std::fs::create_dir_all(stale.parent().unwrap()).unwrap();
    std::fs::File::create(&stale)
        .unwrap()
        .set_modified(hour_ago)
        .unwrap();
    let writing = pages.join(kept.to_string()).join("dd44#1");
    std::fs::write(&writing, b"in flight").unwrap();
    assert!(
        store.pages().await.unwrap() == vec![kept],
        "listings hide the leftovers"
    );

    let removed = store
        .sweep_leftovers(Duration::from_secs(600))
        .await
        .unwrap();

    assert_eq!(removed, 3, "one stale temporary file and two empty folders");
    assert!(!stale.exists() && !stale.parent().unwrap().exists());
    assert!(!pages.join(emptied.to_string()).exists());
    assert!(writing.exists(), "a write still running keeps its file");
    assert_eq!(store.get(kept, "aa11").await.unwrap().unwrap(), b"kept");
    assert_eq!(
        ObjectBundleStore::open("memory://")
            .unwrap()
            .sweep_leftovers(Duration::ZERO)
            .await
            .unwrap(),
        0
    );
}

#[tokio::test]
async fn a_directory_that_cannot_take_files_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", dir.path().display());
    let store = ObjectBundleStore::open(&url).unwrap();
    // A plain file where the pages directory must go: every write fails, even as root.
    std::fs::write(dir.path().join("pages"), b"not a directory").unwrap();
    assert!(
        store
            .put(PageId::new(), "aa", Bytes::from_static(b"x"))
            .await
            .is_err()
    );
}

/// Against a real S3-compatible server, the one `QUIRE_TEST_S3_ENDPOINT` names (CI starts
/// one; elsewhere the test is reported ignored without it).
#[tokio::test]
#[cfg_attr(no_s3, ignore = "needs an S3 server: set QUIRE_TEST_S3_ENDPOINT")]
async fn s3_behaves_like_local_disk() {
    let endpoint = std::env::var("QUIRE_TEST_S3_ENDPOINT")
        .expect("QUIRE_TEST_S3_ENDPOINT names the S3 server");
    let bucket = format!("quire-test-{}", PageId::new());
    let created = reqwest::Client::new()
        .put(format!("{endpoint}/{bucket}"))
        .send()
        .await
        .expect("S3 server reachable");
    assert!(
        created.status().is_success(),
        "create bucket: {}",
        created.status()
    );
    let env = |k: &str| match k {
        "AWS_ACCESS_KEY_ID" => Some("test".to_owned()),
        "AWS_SECRET_ACCESS_KEY" => Some("test".to_owned()),
        "AWS_REGION" => Some("us-east-1".to_owned()),
        "AWS_ENDPOINT_URL" => Some(endpoint.clone()),
        _ => None,
    };
    let store = ObjectBundleStore::open_with(&format!("s3://{bucket}/some/prefix"), env).unwrap();
    round_trip(&store).await;
    retiring(&store).await;
}

#[test]
fn urls_are_checked() {
    assert!(matches!(
        ObjectBundleStore::open("ftp://x"),
        Err(BlobConfigError::Scheme(_))
    ));
    assert!(ObjectBundleStore::open("s3://").is_err());
    assert!(ObjectBundleStore::open("s3://bucket/some/prefix").is_ok());
}
