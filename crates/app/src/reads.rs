//! The two decisions that are the composition root's own: which ports are read through a
//! cache, and who hears of every committed page and project change. The pages origin's
//! service and the access-token verifier are made here because they are among those who
//! hear.

use std::sync::Arc;

use quire_bearer::{BearerPorts, BearerVerifier};
use quire_kernel::{Listeners, PageChanges};
use quire_oauth::TokenAudience;
use quire_read_cache::{CachedKeyStore, CachedPageStore};
use quire_serving::{ServingPorts, ServingService};

use crate::{Ports, Settings};

/// The caches in front of the stores, and those who hear of changes.
pub(crate) struct Reads {
    /// The API's page fetch, in front of the page and link stores.
    pub page_cache: Arc<CachedPageStore>,
    /// The API keys' lookup, in front of the key store.
    pub key_cache: Arc<CachedKeyStore>,
    /// The pages origin's service, with its own caches.
    pub serving: ServingService,
    /// Verifies OAuth access tokens, with the keys and clients it holds.
    pub bearers: BearerVerifier,
    /// Who Quire's access tokens are for.
    pub audience: TokenAudience,
    /// Every committed page and project change, told to all of the above.
    pub changes: Arc<dyn PageChanges>,
}

pub(crate) fn reads(ports: &Ports, settings: &Settings) -> Reads {
    let Ports {
        accounts,
        projects,
        auth,
        pages,
        runtime,
        ..
    } = ports;
    // The views the pages origin settles go through the page fetch, so this replica's own
    // counts show at once.
    let page_cache = Arc::new(CachedPageStore::new(
        pages.pages.clone(),
        pages.links.clone(),
        runtime.clock.clone(),
    ));
    let serving = ServingService::new(
        ServingPorts {
            pages: pages.pages.clone(),
            links: page_cache.clone(),
            bundles: pages.bundles.clone(),
            accounts: pages.directory.clone(),
            projects: projects.clone(),
            limiter: runtime.limiter.clone(),
            sessions: accounts.sessions.clone(),
            clock: runtime.clock.clone(),
            offload: runtime.offload.clone(),
            objects: pages.objects.clone(),
            object_bytes: pages.object_bytes.clone(),
        },
        settings.serving.clone(),
        &settings.signing_key,
    );
    let audience = TokenAudience::for_base_url(&settings.base_url);
    let bearers = BearerVerifier::new(
        BearerPorts {
            keys: auth.signing_keys.clone(),
            clients: auth.oauth_clients.clone(),
            accounts: accounts.accounts.clone(),
            projects: projects.clone(),
            clock: runtime.clock.clone(),
        },
        audience.clone(),
    );
    let key_cache = Arc::new(CachedKeyStore::new(
        auth.keys.clone(),
        runtime.clock.clone(),
    ));
    let changes: Arc<dyn PageChanges> = Arc::new(Listeners(vec![
        Arc::new(serving.clone()),
        key_cache.clone(),
        page_cache.clone(),
        Arc::new(bearers.clone()),
    ]));
    Reads {
        page_cache,
        key_cache,
        serving,
        bearers,
        audience,
        changes,
    }
}
