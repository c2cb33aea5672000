//! A large batch is hashed on the offload, and the async worker serves other tasks meanwhile;
//! a small one is hashed where it is, with no hand-over.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

#[allow(dead_code)] // the lease tests' clock and timer are not used here
mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use quire_kernel::Offload;
use quire_kernel::offload::{Job, Running};
use quire_pages::FileInput;
use quire_testkit::{ThreadOffload, World};

use common::{publish, world_of};

/// Runs each job on a thread as [`ThreadOffload`] does, counting them; a job, once done,
/// waits for a heartbeat that only a task on the test's async worker sends. So a job ends
/// only if that worker was free to run another task while it ran.
#[derive(Debug)]
struct Heartbeats {
    jobs: AtomicUsize,
    heard: Arc<Mutex<Receiver<()>>>,
}

impl Offload for Heartbeats {
    fn run(&self, job: Job) -> Running {
        self.jobs.fetch_add(1, Ordering::SeqCst);
        let heard = self.heard.clone();
        ThreadOffload.run(Box::new(move || {
            let done = job();
            let beat = heard.lock().unwrap().recv_timeout(Duration::from_secs(10));
            assert!(
                beat.is_ok(),
                "no other task ran on the async worker while the batch was hashed"
            );
            done
        }))
    }
}

/// A task for the worker to run while a publish waits: it yields once, then beats.
async fn heartbeat(beat: &Sender<()>) {
    tokio::task::yield_now().await;
    beat.send(()).unwrap();
}

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
    let (beat, heard) = channel();
    let offload = Arc::new(Heartbeats {
        jobs: AtomicUsize::new(0),
        heard: Arc::new(Mutex::new(heard)),
    });
    let w = world_of(World::builder().offload(offload.clone())).await;
    let mut request = publish("large");
    request.files.push(large("big.bin"));
    let (published, ()) = tokio::join!(w.pages.publish(&w.ann, request), heartbeat(&beat));
    let page = published.unwrap().page;
    assert_eq!(page.file_count, 4);
    assert_eq!(offload.jobs.load(Ordering::SeqCst), 1);

    let (added, ()) = tokio::join!(
        w.pages.add_files(&w.ann, page.id, vec![large("other.bin")]),
        heartbeat(&beat)
    );
    assert_eq!(added.unwrap().file_count, 5);
    assert_eq!(offload.jobs.load(Ordering::SeqCst), 2);

    w.pages.publish(&w.ann, publish("small")).await.unwrap();
    assert_eq!(offload.jobs.load(Ordering::SeqCst), 2);
}
