//! Object uploads on a real S3-compatible server (`QUIRE_TEST_S3_ENDPOINT`; CI starts one,
//! elsewhere the test is reported ignored without it): large ones in parts, small ones in one
//! `PUT`, and an upload cut off half-way (a killed server) whose parts the object's deletion
//! aborts, leaving no multipart upload in the bucket.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use bytes::Bytes;
use futures_util::TryStreamExt;
use quire_blobs::ObjectBundleStore;
use quire_kernel::ObjectId;
use quire_objects::ObjectBytes;

/// A store on a bucket of its own, and the bucket's URL.
async fn s3_store() -> (ObjectBundleStore, String) {
    let endpoint = std::env::var("QUIRE_TEST_S3_ENDPOINT")
        .expect("QUIRE_TEST_S3_ENDPOINT names the S3 server");
    let bucket = format!("quire-uploads-{}", ObjectId::new());
    let created = reqwest::Client::new()
        .put(format!("{endpoint}/{bucket}"))
        .send()
        .await
        .unwrap();
    assert!(created.status().is_success(), "{}", created.status());
    let env = |k: &str| match k {
        "AWS_ACCESS_KEY_ID" | "AWS_SECRET_ACCESS_KEY" => Some("test".to_owned()),
        "AWS_REGION" => Some("us-east-1".to_owned()),
        "AWS_ENDPOINT_URL" => Some(endpoint.clone()),
        _ => None,
    };
    let store = ObjectBundleStore::open_with(&format!("s3://{bucket}/quire"), env).unwrap();
    (store, format!("{endpoint}/{bucket}"))
}

/// The multipart uploads the bucket holds, as S3's `ListMultipartUploads` names them.
async fn open_uploads(bucket: &str) -> usize {
    let listing = reqwest::Client::new()
        .get(format!("{bucket}?uploads"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    listing.matches("<Upload>").count()
}

fn content(size: usize) -> Vec<u8> {
    (0..size).map(|i| (i * 7 % 251) as u8).collect()
}

async fn read_all(store: &ObjectBundleStore, object: ObjectId, blob: &str) -> Vec<u8> {
    let stream = store.read(object, blob, None).await.unwrap().unwrap();
    let pieces: Vec<Bytes> = stream.try_collect().await.unwrap();
    pieces.concat()
}

#[tokio::test]
#[cfg_attr(no_s3, ignore = "needs an S3 server: set QUIRE_TEST_S3_ENDPOINT")]
async fn uploads_complete_in_parts_or_whole_and_a_cut_one_is_aborted_with_its_object() {
    let (store, bucket) = s3_store().await;
    // 12 MiB in 64 KiB writes: three parts; 100 KiB: one PUT.
    for size in [12 << 20, 100 << 10] {
        let object = ObjectId::new();
        let bytes = content(size);
        let mut sink = store.start(object, "blob").await.unwrap();
        for chunk in bytes.chunks(64 << 10) {
            sink.write(Bytes::copy_from_slice(chunk)).await.unwrap();
        }
        sink.finish().await.unwrap();
        assert!(
            read_all(&store, object, "blob").await == bytes,
            "{size} bytes"
        );
        assert_eq!(
            store.objects().await.unwrap(),
            vec![object],
            "no marker stays"
        );
        store.delete_object(object).await.unwrap();
    }
    assert_eq!(open_uploads(&bucket).await, 0);

    // Cut off after 7 MiB: a part is in the bucket, under a multipart upload.
    let object = ObjectId::new();
    let mut sink = store.start(object, "blob").await.unwrap();
    for chunk in content(7 << 20).chunks(64 << 10) {
        sink.write(Bytes::copy_from_slice(chunk)).await.unwrap();
    }
    drop(sink);
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(open_uploads(&bucket).await, 1);
    assert!(store.read(object, "blob", None).await.unwrap().is_none());
    // The janitor finds the folder (its marker) and deletes it: the upload is aborted.
    assert_eq!(store.objects().await.unwrap(), vec![object]);
    store.delete_object(object).await.unwrap();
    assert_eq!(open_uploads(&bucket).await, 0);
    assert!(store.objects().await.unwrap().is_empty());

    // An upload aborted by its writer leaves nothing either.
    let object = ObjectId::new();
    let mut sink = store.start(object, "blob").await.unwrap();
    sink.write(Bytes::from(content(6 << 20))).await.unwrap();
    sink.abort().await;
    assert_eq!(open_uploads(&bucket).await, 0);
    assert!(store.objects().await.unwrap().is_empty());
}
