//! What link visits leave beside their count, tallied in memory between flushes: bot views,
//! referrer hosts (at most [`MAX_HOSTS`] per link between flushes) and whether a person
//! followed the link.

use std::collections::HashMap;
use std::sync::Mutex;

use quire_kernel::LinkId;
use quire_links::VisitNotes;

/// Most referrer hosts a link keeps between two flushes.
pub const MAX_HOSTS: usize = 50;

#[derive(Debug, Default)]
pub struct NoteTally(Mutex<HashMap<LinkId, VisitNotes>>);

impl NoteTally {
    fn with<T>(&self, f: impl FnOnce(&mut HashMap<LinkId, VisitNotes>) -> T) -> T {
        f(&mut self
            .0
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

    pub fn take(&self) -> Vec<VisitNotes> {
        self.with(|all| all.drain().map(|(_, n)| n).collect())
    }

    /// Puts back notes a flush could not write.
    pub fn restore(&self, notes: Vec<VisitNotes>) {
        self.with(|all| {
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
        });
    }
}

fn add_host(referrers: &mut Vec<(String, u64)>, host: String, n: u64) {
    if let Some((_, c)) = referrers.iter_mut().find(|(h, _)| *h == host) {
        *c += n;
    } else if referrers.len() < MAX_HOSTS {
        referrers.push((host, n));
    }
}
