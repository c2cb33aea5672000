//! Bundle files, with their own failure switches.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use async_trait::async_trait;
use bytes::Bytes;
use quire_kernel::{InfraError, PageId};
use quire_pages::{BundleStore, FileData, Readers, Retired, put_concurrently};
use time::OffsetDateTime;

use super::{Failing, Op};

/// An in-memory `BundleStore` with failure switches: [`MemoryBundles::fail`] (one [`Op`]),
/// [`MemoryBundles::fail_everything`] and [`MemoryBundles::fail_puts_after`] (the next `n` puts succeed, then
/// every put fails), for interrupting an upload halfway, and [`MemoryBundles::stall_puts`]
/// (puts wait until released), for a publish that is still running, or dies mid-upload.
#[derive(Debug)]
pub struct MemoryBundles {
    objects: Mutex<HashMap<(PageId, String), Vec<u8>>>,
    failing: Mutex<Failing>,
    puts_left: Mutex<Option<usize>>,
    stalled: tokio::sync::watch::Sender<bool>,
    batches: Mutex<Vec<Batch>>,
    retired: Mutex<Vec<Retired>>,
}

/// One call of `put_files`: its page, who could read the objects, and the files' paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    pub page: PageId,
    pub readers: Readers,
    pub paths: Vec<String>,
}

impl Default for MemoryBundles {
    fn default() -> Self {
        Self {
            objects: Mutex::default(),
            failing: Mutex::default(),
            puts_left: Mutex::default(),
            stalled: tokio::sync::watch::channel(false).0,
            batches: Mutex::default(),
            retired: Mutex::default(),
        }
    }
}

impl MemoryBundles {
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    pub fn fail(&self, op: Op) {
        self.failing.lock().expect("lock").ops.insert(op);
    }

    pub fn fail_everything(&self) {
        self.failing.lock().expect("lock").everything = true;
    }

    pub fn fail_puts_after(&self, n: usize) {
        *self.puts_left.lock().expect("lock") = Some(n);
    }

    /// While `on`, every put waits (before writing anything) until it is set off again.
    pub fn stall_puts(&self, on: bool) {
        self.stalled.send_replace(on);
    }

    pub fn heal(&self) {
        *self.failing.lock().expect("lock") = Failing::default();
        *self.puts_left.lock().expect("lock") = None;
    }

    /// Each batch given to `put_files` so far, in order.
    #[must_use]
    pub fn batches(&self) -> Vec<Batch> {
        self.batches.lock().expect("lock").clone()
    }

    /// Every stored object key, sorted.
    #[must_use]
    pub fn keys(&self) -> Vec<(PageId, String)> {
        let mut k: Vec<(PageId, String)> =
            self.objects.lock().expect("lock").keys().cloned().collect();
        k.sort();
        k
    }

    fn check(&self, op: Op) -> Result<(), InfraError> {
        if self.failing.lock().expect("lock").covers(op) {
            return Err(InfraError::new(format!(
                "injected failure in bundles {op:?}"
            )));
        }
        Ok(())
    }
}

#[async_trait]
impl BundleStore for MemoryBundles {
    async fn put(&self, page: PageId, sha256: &str, bytes: Bytes) -> Result<(), InfraError> {
        let mut stalled = self.stalled.subscribe();
        // The sender lives in `self`, so the channel cannot close while we wait.
        let _ = stalled.wait_for(|on| !*on).await;
        self.check(Op::Put)?;
        {
            let mut left = self.puts_left.lock().expect("lock");
            if let Some(n) = left.as_mut() {
                if *n == 0 {
                    return Err(InfraError::new(
                        "injected failure in bundles.put (budget spent)",
                    ));
                }
                *n -= 1;
            }
        }
        self.objects
            .lock()
            .expect("lock")
            .insert((page, sha256.to_owned()), bytes.to_vec());
        Ok(())
    }

    async fn put_files(
        &self,
        page: PageId,
        files: Vec<FileData>,
        readers: Readers,
    ) -> Result<Vec<String>, (InfraError, Vec<String>)> {
        self.batches.lock().expect("lock").push(Batch {
            page,
            readers,
            paths: files.iter().map(|f| f.entry.path.clone()).collect(),
        });
        put_concurrently(self, page, files).await
    }

    async fn get(&self, page: PageId, sha256: &str) -> Result<Option<Vec<u8>>, InfraError> {
        self.check(Op::Get)?;
        Ok(self
            .objects
            .lock()
            .expect("lock")
            .get(&(page, sha256.to_owned()))
            .cloned())
    }

    async fn exists(&self, page: PageId, sha256: &str) -> Result<bool, InfraError> {
        self.check(Op::Exists)?;
        Ok(self
            .objects
            .lock()
            .expect("lock")
            .contains_key(&(page, sha256.to_owned())))
    }

    async fn delete(&self, page: PageId, sha256: &str) -> Result<(), InfraError> {
        self.check(Op::Delete)?;
        self.objects
            .lock()
            .expect("lock")
            .remove(&(page, sha256.to_owned()));
        Ok(())
    }

    async fn delete_page(&self, page: PageId) -> Result<(), InfraError> {
        self.check(Op::DeletePage)?;
        self.objects
            .lock()
            .expect("lock")
            .retain(|(p, _), _| *p != page);
        Ok(())
    }

    async fn pages(&self) -> Result<Vec<PageId>, InfraError> {
        self.check(Op::Pages)?;
        let set: HashSet<PageId> = self
            .objects
            .lock()
            .expect("lock")
            .keys()
            .map(|(p, _)| *p)
            .collect();
        Ok(set.into_iter().collect())
    }

    async fn sweep_leftovers(&self, _older_than: std::time::Duration) -> Result<usize, InfraError> {
        // Memory writes are whole or absent: nothing is ever left behind.
        self.check(Op::SweepLeftovers)?;
        Ok(0)
    }

    async fn retire(
        &self,
        page: PageId,
        hashes: &[String],
        at: OffsetDateTime,
    ) -> Result<(), InfraError> {
        let mut retired = self.retired.lock().expect("lock");
        for sha256 in hashes {
            let mark = Retired {
                page,
                sha256: sha256.clone(),
                at,
            };
            if !retired.contains(&mark) {
                retired.push(mark);
            }
        }
        Ok(())
    }

    async fn retired(&self, before: OffsetDateTime) -> Result<Vec<Retired>, InfraError> {
        Ok(self
            .retired
            .lock()
            .expect("lock")
            .iter()
            .filter(|m| m.at < before)
            .cloned()
            .collect())
    }

    async fn forget_retired(&self, mark: &Retired, remove_object: bool) -> Result<(), InfraError> {
        if remove_object {
            self.delete(mark.page, &mark.sha256).await?;
        }
        self.retired.lock().expect("lock").retain(|m| m != mark);
        Ok(())
    }
}
