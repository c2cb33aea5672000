//! The things behind a link: pages, URL links and objects. Each reads through the page
//! fetch's cache and tells every committed change to those who hear of it; each is served
//! on the pages domain, whose origins the page settings name.

use std::sync::Arc;

use quire_databases::DatabaseService;
use quire_links::{LinkPorts, LinkService};
use quire_objects::{ObjectPorts, ObjectService};
use quire_pages::{PagePorts, PageService};

use crate::page_databases::ServiceDatabases;
use crate::reads::Reads;
use crate::{Ports, Settings};

pub(crate) struct BehindLinks {
    pub pages: PageService,
    pub links: LinkService,
    pub objects: ObjectService,
}

/// The page, link and object services; a page may name a database of its owner in its
/// project, as `databases` decides.
pub(crate) fn behind_links(
    ports: &Ports,
    settings: &Settings,
    reads: &Reads,
    databases: &DatabaseService,
) -> BehindLinks {
    let Ports {
        projects,
        pages: stores,
        runtime,
        ..
    } = ports;
    let mut link_config = settings.links.clone();
    link_config.urls.links_origin = settings.pages.origins.links_origin();
    let links = LinkService::new(
        LinkPorts {
            links: reads.page_cache.clone(),
            accounts: stores.directory.clone(),
            projects: projects.clone(),
            clock: runtime.clock.clone(),
            offload: runtime.offload.clone(),
            ids: stores.ids.clone(),
            changes: reads.changes.clone(),
        },
        link_config,
    );
    let mut object_config = settings.objects.clone();
    object_config.origins = settings.pages.origins.clone();
    let objects = ObjectService::new(
        ObjectPorts {
            records: stores.objects.clone(),
            bytes: stores.object_bytes.clone(),
            links: reads.page_cache.clone(),
            accounts: stores.directory.clone(),
            projects: projects.clone(),
            clock: runtime.clock.clone(),
            offload: runtime.offload.clone(),
            ids: stores.ids.clone(),
            changes: reads.changes.clone(),
            limiter: runtime.limiter.clone(),
        },
        object_config,
    );
    let pages = PageService::new(
        PagePorts {
            pages: reads.page_cache.clone(),
            bundles: stores.bundles.clone(),
            links: reads.page_cache.clone(),
            accounts: stores.directory.clone(),
            projects: projects.clone(),
            clock: runtime.clock.clone(),
            timer: runtime.timer.clone(),
            offload: runtime.offload.clone(),
            ids: stores.ids.clone(),
            changes: reads.changes.clone(),
            requests: stores.requests.clone(),
            databases: Arc::new(ServiceDatabases(databases.clone())),
        },
        settings.pages.clone(),
    );
    BehindLinks {
        pages,
        links,
        objects,
    }
}
