//! The world the page use-case tests run in: the in-memory fakes with one account, `ann`,
//! and a small bundle to publish.

use std::sync::Arc;

use quire_kernel::Principal;
use quire_pages::{FileInput, PageService, PublishRequest};
use quire_testkit::{FixedClock, HandTimer, MemoryBundles, MemoryStore};

pub struct World {
    pub store: Arc<MemoryStore>,
    pub bundles: Arc<MemoryBundles>,
    pub clock: Arc<FixedClock>,
    pub timer: Arc<HandTimer>,
    pub pages: PageService,
    pub ann: Principal,
}

pub async fn world_of(builder: quire_testkit::world::WorldBuilder) -> World {
    let w = builder.accounts(&["ann"]).build().await;
    World {
        ann: w.master("ann"),
        store: w.store,
        bundles: w.bundles,
        clock: w.clock,
        timer: w.timer,
        pages: w.services.pages,
    }
}

pub async fn world() -> World {
    world_of(quire_testkit::World::builder()).await
}

pub fn files(n: usize) -> Vec<FileInput> {
    let mut v = vec![FileInput {
        path: "index.html".into(),
        content: Ok("<h1>hi</h1>".into()),
    }];
    for i in 1..n {
        v.push(FileInput {
            path: format!("assets/f{i}.txt"),
            content: Ok(format!("file {i}").into()),
        });
    }
    v
}

pub fn publish(title: &str) -> PublishRequest {
    PublishRequest {
        title: title.into(),
        files: files(3),
        ..PublishRequest::default()
    }
}

/// [`publish`], its short link under `alias`.
pub fn publish_aliased(title: &str, alias: &str) -> PublishRequest {
    PublishRequest {
        policy: quire_links::PolicyInput {
            alias: Some(alias.into()),
            ..quire_links::PolicyInput::default()
        },
        ..publish(title)
    }
}
