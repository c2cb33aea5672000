//! A large batch is hashed on the offload, and the async worker serves other tasks meanwhile;
//! a small one is hashed where it is, with no hand-over. Page passwords are always hashed
//! on the offload.

#[allow(dead_code)] // the lease tests' clock and timer are not used here
use crate::common;

use std::sync::Arc;

use bytes::Bytes;
use quire_pages::{FileInput, PatchRequest};
use quire_testkit::{Heartbeats, World};

use common::{publish, world_of};

/// A file of 2 MiB: past the content worth hashing on every core, and off the worker.
fn large(path: &str) -> FileInput {
    FileInput {
        path: path.into(),
        content: Ok(Bytes::from(vec![7u8; 2 << 20])),
    }
}

// `tokio::test` runs on one worker thread: the heartbeat and the publish share it.
#[tokio::test]
async fn a_large_batch_is_hashed_off_the_async_worker_and_a_small_one_on_it() {
    let offload = Arc::new(Heartbeats::new());
    let w = world_of(World::builder().offload(offload.clone())).await;
    let mut request = publish("large");
    request.files.push(large("big.bin"));
    let (published, ()) = tokio::join!(w.pages.publish(&w.ann, request), offload.beat());
    let page = published.unwrap().page;
    assert_eq!(page.file_count, 4);
    assert_eq!(offload.jobs(), 1);

    let (added, ()) = tokio::join!(
        w.pages.add_files(&w.ann, page.id, vec![large("other.bin")]),
        offload.beat()
    );
    assert_eq!(added.unwrap().file_count, 5);
    assert_eq!(offload.jobs(), 2);

    w.pages.publish(&w.ann, publish("small")).await.unwrap();
    assert_eq!(offload.jobs(), 2);
}

#[tokio::test]
async fn page_passwords_are_hashed_off_the_async_worker() {
    let offload = Arc::new(Heartbeats::new());
    let w = world_of(World::builder().offload(offload.clone())).await;
    let mut request = publish("guarded");
    request.policy.access = Some("password".into());
    request.policy.password = Some("open sesame".into());
    let (published, ()) = tokio::join!(w.pages.publish(&w.ann, request), offload.beat());
    let view = published.unwrap();
    assert!(view.link.unwrap().has_password());
    assert_eq!(offload.jobs(), 1);

    let patch = PatchRequest {
        policy: quire_links::PolicyPatch {
            password: Some(Some("new sesame".into())),
            ..quire_links::PolicyPatch::default()
        },
        ..PatchRequest::default()
    };
    let (patched, ()) = tokio::join!(w.pages.update(&w.ann, view.page.id, patch), offload.beat());
    assert!(patched.unwrap().link.unwrap().has_password());
    assert_eq!(offload.jobs(), 2);
}
