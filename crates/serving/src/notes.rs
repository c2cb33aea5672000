//! What link visits leave beside their count, tallied in memory between flushes: bot views,
//! referrer hosts (at most [`MAX_HOSTS`] per link between flushes) and whether a person
//! followed the link.

use std::collections::HashMap;
use std::sync::Mutex;

use quire_kernel::LinkId;
use quire_links::VisitNotes;

use crate::views::{SHARDS, shard};

/// Most referrer hosts a link keeps between two flushes.
pub const MAX_HOSTS: usize = 50;

/// Notes since the last flush, sharded per thread as the view tally is: a link's every
/// counted visit writes one, and worker threads must not wait on one lock for it.
#[derive(Debug)]
pub struct NoteTally([Mutex<HashMap<LinkId, VisitNotes>>; SHARDS]);

impl Default for NoteTally {
    fn default() -> Self {
        Self(std::array::from_fn(|_| Mutex::new(HashMap::new())))
    }
}

impl NoteTally {
    fn with<T>(&self, f: impl FnOnce(&mut HashMap<LinkId, VisitNotes>) -> T) -> T {
        f(&mut self.0[shard()]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    /// A view by a preview or crawler.
    pub fn bot(&self, link: LinkId) {
        self.with(|all| {
            all.entry(link)
                .or_insert_with(|| VisitNotes {
                    link,
                    ..VisitNotes::default()
                })
                .bot_views += 1;
        });
    }

    /// A person's counted view, and the host that referred them.
    pub fn viewed(&self, link: LinkId, referrer: Option<String>) {
        self.with(|all| {
            let notes = all.entry(link).or_insert_with(|| VisitNotes {
                link,
                ..VisitNotes::default()
            });
            notes.viewed = true;
            if let Some(host) = referrer {
                add_host(&mut notes.referrers, host, 1);
            }
        });
    }

    /// Takes every link's notes (one entry a link), leaving the tally empty.
    pub fn take(&self) -> Vec<VisitNotes> {
        let mut all: HashMap<LinkId, VisitNotes> = HashMap::new();
        for shard in &self.0 {
            let drained: Vec<VisitNotes> = shard
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .drain()
                .map(|(_, n)| n)
                .collect();
            merge(&mut all, drained);
        }
        all.into_values().collect()
    }

    /// Puts back notes a flush could not write.
    pub fn restore(&self, notes: Vec<VisitNotes>) {
        self.with(|all| merge(all, notes));
    }
}

/// Adds `notes` into `all`, link by link.
fn merge(all: &mut HashMap<LinkId, VisitNotes>, notes: Vec<VisitNotes>) {
    for n in notes {
        let kept = all.entry(n.link).or_insert_with(|| VisitNotes {
            link: n.link,
            ..VisitNotes::default()
        });
        kept.bot_views += n.bot_views;
        kept.viewed |= n.viewed;
        for (host, count) in n.referrers {
            add_host(&mut kept.referrers, host, count);
        }
    }
}

fn add_host(referrers: &mut Vec<(String, u64)>, host: String, n: u64) {
    if let Some((_, c)) = referrers.iter_mut().find(|(h, _)| *h == host) {
        *c += n;
    } else if referrers.len() < MAX_HOSTS {
        referrers.push((host, n));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;

    use super::*;

    #[test]
    fn notes_from_many_threads_come_out_as_one_entry_a_link() {
        let tally = Arc::new(NoteTally::default());
        let (a, b) = (LinkId::new(), LinkId::new());
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let tally = tally.clone();
                std::thread::spawn(move || {
                    tally.bot(a);
                    tally.viewed(a, Some(format!("host{}.test", i % 2)));
                    if i == 0 {
                        tally.bot(b);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let mut taken = tally.take();
        assert!(tally.take().is_empty());
        taken.sort_by_key(|n| std::cmp::Reverse(n.bot_views));
        assert_eq!(taken.len(), 2);
        assert_eq!((taken[0].link, taken[0].bot_views), (a, 8));
        assert!(taken[0].viewed && !taken[1].viewed);
        let mut hosts = taken[0].referrers.clone();
        hosts.sort();
        assert_eq!(
            hosts,
            vec![("host0.test".to_owned(), 4), ("host1.test".to_owned(), 4)]
        );
        tally.restore(taken);
        assert_eq!(tally.take().len(), 2, "a failed flush keeps them");
    }
}
