//! Object records, and objects' bytes (with their own failure switches).

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::StreamExt;
use quire_kernel::{AccountId, InfraError, ObjectId, ProjectId};
use quire_objects::{
    ByteSink, ByteStream, Contents, InsertObjectError, Object, ObjectBytes, ObjectRecords,
    ObjectStatus,
};
use time::OffsetDateTime;

use super::links::code_taken;
use super::{Failing, MemoryStore, Op};

#[async_trait]
impl ObjectRecords for MemoryStore {
    async fn insert_pending(
        &self,
        object: &Object,
        lease_until: OffsetDateTime,
    ) -> Result<(), InsertObjectError> {
        self.check(Op::InsertObject)?;
        self.with(|s| {
            if s.objects
                .iter()
                .any(|(o, _)| o.public_id == object.public_id)
                || code_taken(s, &object.public_id, None)
            {
                return Err(InsertObjectError::PublicIdTaken);
            }
            let owner_slug = |account: AccountId, slug: &str| {
                account == object.account_id && slug == object.slug
            };
            if s.objects
                .iter()
                .any(|(o, _)| owner_slug(o.account_id, &o.slug))
                || s.pages
                    .iter()
                    .any(|(p, _)| owner_slug(p.account_id, &p.slug))
            {
                return Err(InsertObjectError::SlugTaken);
            }
            s.objects.push((object.clone(), false));
            s.object_leases.insert(object.id, lease_until);
            Ok(())
        })
    }

    async fn renew_lease(&self, id: ObjectId, until: OffsetDateTime) -> Result<bool, InfraError> {
        self.check(Op::RenewLease)?;
        Ok(self.with(|s| match s.object_leases.get_mut(&id) {
            Some(lease) => {
                *lease = until;
                true
            }
            None => false,
        }))
    }

    async fn mark_ready(&self, object: &Object) -> Result<(), InfraError> {
        self.check(Op::MarkReady)?;
        self.with(|s| {
            if s.object_leases.remove(&object.id).is_none() {
                return Err(InfraError::new("no pending record to mark ready"));
            }
            for (o, ready) in &mut s.objects {
                if o.id == object.id {
                    *o = object.clone();
                    *ready = true;
                }
            }
            Ok::<_, InfraError>(())
        })?;
        self.meet(Op::MarkReady).await;
        Ok(())
    }

    async fn pending_object(
        &self,
        id: ObjectId,
    ) -> Result<Option<(Object, OffsetDateTime)>, InfraError> {
        self.check(Op::ObjectById)?;
        Ok(self.with(|s| {
            let (object, _) = s.objects.iter().find(|(o, ready)| !*ready && o.id == id)?;
            let lease = s.object_leases.get(&id)?;
            Some((object.clone(), *lease))
        }))
    }

    async fn object(&self, id: ObjectId) -> Result<Option<Object>, InfraError> {
        self.check(Op::ObjectById)?;
        Ok(self.with(|s| {
            s.objects
                .iter()
                .find(|(o, ready)| *ready && o.id == id)
                .map(|(o, _)| o.clone())
        }))
    }

    async fn object_by_slug(
        &self,
        owner: AccountId,
        slug: &str,
    ) -> Result<Option<Object>, InfraError> {
        self.check(Op::ObjectById)?;
        Ok(self.with(|s| {
            s.objects
                .iter()
                .find(|(o, ready)| *ready && o.account_id == owner && o.slug == slug)
                .map(|(o, _)| o.clone())
        }))
    }

    async fn project_objects(
        &self,
        project: ProjectId,
        status: Option<ObjectStatus>,
    ) -> Result<Vec<Object>, InfraError> {
        self.check(Op::ObjectById)?;
        let mut found: Vec<Object> = self.with(|s| {
            s.objects
                .iter()
                .filter(|(o, ready)| {
                    *ready && o.project_id == project && status.is_none_or(|st| o.status == st)
                })
                .map(|(o, _)| o.clone())
                .collect()
        });
        found.sort_by_key(|o| std::cmp::Reverse((o.created_at, o.id.0)));
        Ok(found)
    }

    async fn update_object(&self, object: &Object) -> Result<(), InsertObjectError> {
        self.check(Op::UpdateObject)?;
        self.with(|s| {
            let taken = s.objects.iter().any(|(o, _)| {
                o.id != object.id && o.account_id == object.account_id && o.slug == object.slug
            }) || s
                .pages
                .iter()
                .any(|(p, _)| p.account_id == object.account_id && p.slug == object.slug);
            if taken {
                return Err(InsertObjectError::SlugTaken);
            }
            for (o, _) in &mut s.objects {
                if o.id == object.id {
                    *o = Object {
                        blob: o.blob.clone(),
                        size_bytes: o.size_bytes,
                        sha256: o.sha256.clone(),
                        ..object.clone()
                    };
                }
            }
            Ok(())
        })
    }

    async fn swap_contents(
        &self,
        id: ObjectId,
        from: &str,
        to: &Contents,
    ) -> Result<bool, InfraError> {
        self.check(Op::SwapContents)?;
        let swapped = self.with(|s| {
            let Some((o, _)) = s
                .objects
                .iter_mut()
                .find(|(o, ready)| *ready && o.id == id && o.blob == from)
            else {
                return false;
            };
            o.blob.clone_from(&to.blob);
            o.size_bytes = to.size_bytes;
            o.sha256.clone_from(&to.sha256);
            if let Some(f) = &to.filename {
                o.filename.clone_from(f);
            }
            if let Some(t) = &to.content_type {
                o.content_type.clone_from(t);
            }
            if let Some(at) = to.updated_at {
                o.updated_at = at;
            }
            true
        });
        if swapped {
            self.meet(Op::SwapContents).await;
        }
        Ok(swapped)
    }

    async fn delete_object(&self, id: ObjectId) -> Result<(), InfraError> {
        self.check(Op::DeleteObject)?;
        self.with(|s| {
            s.objects.retain(|(o, _)| o.id != id);
            s.object_leases.remove(&id);
        });
        Ok(())
    }

    async fn stale_pending(&self, now: OffsetDateTime) -> Result<Vec<ObjectId>, InfraError> {
        self.check(Op::StalePending)?;
        Ok(self.with(|s| {
            s.object_leases
                .iter()
                .filter(|(_, until)| **until < now)
                .map(|(id, _)| *id)
                .collect()
        }))
    }

    async fn object_exists(&self, id: ObjectId) -> Result<bool, InfraError> {
        self.check(Op::ObjectById)?;
        Ok(self.with(|s| s.objects.iter().any(|(o, _)| o.id == id)))
    }

    async fn stored_bytes(
        &self,
        account: Option<AccountId>,
    ) -> Result<Vec<(AccountId, u64)>, InfraError> {
        self.check(Op::StoredBytes)?;
        let mut sums: Vec<(AccountId, u64)> = Vec::new();
        self.with(|s| {
            for (o, ready) in &s.objects {
                if !*ready || account.is_some_and(|a| a != o.account_id) {
                    continue;
                }
                match sums.iter_mut().find(|(a, _)| *a == o.account_id) {
                    Some((_, sum)) => *sum += o.size_bytes,
                    None => sums.push((o.account_id, o.size_bytes)),
                }
            }
        });
        self.meet(Op::StoredBytes).await;
        Ok(sums)
    }

    async fn lapsed_slug_holder(
        &self,
        owner: AccountId,
        slug: &str,
        now: OffsetDateTime,
    ) -> Result<Option<ObjectId>, InfraError> {
        self.check(Op::LapsedSlugHolder)?;
        Ok(self.with(|s| {
            s.objects
                .iter()
                .find(|(o, ready)| {
                    !*ready
                        && o.account_id == owner
                        && o.slug == slug
                        && s.object_leases.get(&o.id).is_some_and(|until| *until < now)
                })
                .map(|(o, _)| o.id)
        }))
    }
}

type Blobs = Arc<Mutex<HashMap<(ObjectId, String), Bytes>>>;

/// Objects' bytes in memory, with failure switches ([`Op::Put`] fails writes, [`Op::Get`]
/// reads, [`Op::Delete`] removals).
#[derive(Debug, Default)]
pub struct MemoryObjectBytes {
    blobs: Blobs,
    failing: Mutex<Failing>,
}

impl MemoryObjectBytes {
    /// Makes `op` fail from now on.
    pub fn fail(&self, op: Op) {
        self.failing.lock().expect("lock").ops.insert(op);
    }

    /// Clears every failure switch.
    pub fn heal(&self) {
        *self.failing.lock().expect("lock") = Failing::default();
    }

    /// The blobs stored, by object.
    #[must_use]
    pub fn stored(&self) -> Vec<(ObjectId, String, usize)> {
        let mut all: Vec<_> = self
            .blobs
            .lock()
            .expect("lock")
            .iter()
            .map(|((o, b), bytes)| (*o, b.clone(), bytes.len()))
            .collect();
        all.sort();
        all
    }

    fn check(&self, op: Op) -> Result<(), InfraError> {
        if self.failing.lock().expect("lock").covers(op) {
            Err(InfraError::new(format!("injected failure in {op:?}")))
        } else {
            Ok(())
        }
    }
}

struct MemorySink {
    key: (ObjectId, String),
    written: Vec<u8>,
    blobs: Blobs,
    fail: bool,
}

#[async_trait]
impl ByteSink for MemorySink {
    async fn write(&mut self, chunk: Bytes) -> Result<(), InfraError> {
        if self.fail {
            return Err(InfraError::new("injected failure in Put"));
        }
        self.written.extend_from_slice(&chunk);
        Ok(())
    }

    async fn finish(self: Box<Self>) -> Result<(), InfraError> {
        let MemorySink {
            key,
            written,
            blobs,
            ..
        } = *self;
        blobs
            .lock()
            .expect("lock")
            .insert(key, Bytes::from(written));
        Ok(())
    }

    async fn abort(self: Box<Self>) {}
}

#[async_trait]
impl ObjectBytes for MemoryObjectBytes {
    async fn start(&self, object: ObjectId, blob: &str) -> Result<Box<dyn ByteSink>, InfraError> {
        Ok(Box::new(MemorySink {
            key: (object, blob.to_owned()),
            written: Vec::new(),
            blobs: self.blobs.clone(),
            fail: self.check(Op::Put).is_err(),
        }))
    }

    async fn read(
        &self,
        object: ObjectId,
        blob: &str,
        range: Option<Range<u64>>,
    ) -> Result<Option<ByteStream>, InfraError> {
        self.check(Op::Get)?;
        let Some(bytes) = self
            .blobs
            .lock()
            .expect("lock")
            .get(&(object, blob.to_owned()))
            .cloned()
        else {
            return Ok(None);
        };
        let bytes = match range {
            Some(r) => bytes.slice(
                usize::try_from(r.start)
                    .unwrap_or(usize::MAX)
                    .min(bytes.len())
                    ..usize::try_from(r.end)
                        .unwrap_or(usize::MAX)
                        .min(bytes.len()),
            ),
            None => bytes,
        };
        Ok(Some(futures_util::stream::iter([Ok(bytes)]).boxed()))
    }

    async fn delete_blob(&self, object: ObjectId, blob: &str) -> Result<(), InfraError> {
        self.check(Op::Delete)?;
        self.blobs
            .lock()
            .expect("lock")
            .remove(&(object, blob.to_owned()));
        Ok(())
    }

    async fn delete_object(&self, object: ObjectId) -> Result<(), InfraError> {
        self.check(Op::Delete)?;
        self.blobs
            .lock()
            .expect("lock")
            .retain(|(o, _), _| *o != object);
        Ok(())
    }

    async fn objects(&self) -> Result<Vec<ObjectId>, InfraError> {
        let mut ids: Vec<ObjectId> = self
            .blobs
            .lock()
            .expect("lock")
            .keys()
            .map(|(o, _)| *o)
            .collect();
        ids.sort();
        ids.dedup();
        Ok(ids)
    }

    async fn sweep_partial(&self, _older_than: std::time::Duration) -> Result<usize, InfraError> {
        Ok(0)
    }
}
