//! Background work of a running server: the janitor and the view-count flush.

use std::time::Duration;

use quire_app::Services;
use quire_edge::mapping;
use quire_pages::Swept;
use quire_serving::ServingService;

/// Sweeps interrupted publishes and orphaned files, expired sessions, old device grants,
/// rate-limit events, email sends out of every window, spent captcha solutions, expired
/// one-time links, lapsed view leases, and databases abandoned, half-deleted or expired now, then every `interval`; and unmaps the mapping kept for long request
/// bodies once it has waited a whole `interval`.
pub(crate) fn spawn_janitor(services: &Services, interval: Duration) {
    let Services {
        pages,
        sessions,
        device_auth,
        mail,
        activation,
        sign_up,
        serving,
        oauth_registration,
        objects,
        databases,
        ..
    } = services.clone();
    tokio::spawn(async move {
        loop {
            match oauth_registration.expire_idle().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(
                    clients = n,
                    "janitor deleted dynamic OAuth clients unused for 30 days"
                ),
                Err(e) => tracing::warn!(error = %e, "janitor OAuth client pass failed"),
            }
            match sessions.sweep_expired().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(sessions = n, "janitor removed expired sessions"),
                Err(e) => tracing::warn!(error = %e, "janitor session pass failed"),
            }
            match device_auth.sweep().await {
                Ok((0, 0)) => {}
                Ok((grants, windows)) => tracing::info!(
                    device_grants = grants,
                    rate_windows = windows,
                    "janitor removed old device grants and rate windows"
                ),
                Err(e) => tracing::warn!(error = %e, "janitor device-login pass failed"),
            }
            match mail.sweep().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(
                    email_sends = n,
                    "janitor forgot email sends past the quota window"
                ),
                Err(e) => tracing::warn!(error = %e, "janitor mail pass failed"),
            }
            match activation.sweep().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(
                    captcha_solutions = n,
                    "janitor forgot spent captcha solutions past their expiry"
                ),
                Err(e) => tracing::warn!(error = %e, "janitor captcha pass failed"),
            }
            match sign_up.sweep().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(links = n, "janitor forgot expired one-time links"),
                Err(e) => tracing::warn!(error = %e, "janitor link pass failed"),
            }
            match pages.sweep().await {
                Ok(swept) if swept != Swept::default() => tracing::info!(
                    pending_pages = swept.pending_pages,
                    orphaned_bundles = swept.orphaned_bundles,
                    leftovers = swept.leftovers,
                    "janitor removed leftovers"
                ),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "janitor pass failed"),
            }
            match objects.sweep(quire_pages::LEFTOVER_AGE).await {
                Ok(swept) if swept != quire_objects::Swept::default() => tracing::info!(
                    dead_uploads = swept.dead_uploads,
                    orphaned_objects = swept.orphaned,
                    partial_uploads = swept.partial,
                    "janitor removed what object uploads and deletes left"
                ),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "janitor object pass failed"),
            }
            match databases.sweep().await {
                Ok(swept) if swept != quire_databases::Swept::default() => tracing::info!(
                    abandoned_creations = swept.abandoned,
                    finished_deletions = swept.deleted,
                    expired_databases = swept.expired,
                    "janitor dropped databases"
                ),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "janitor database pass failed"),
            }
            match serving.settle_lapsed_leases().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(
                    views = n,
                    "janitor counted the views of lapsed view leases as served"
                ),
                Err(e) => tracing::warn!(error = %e, "janitor view-lease pass failed"),
            }
            let unmapped = mapping::release_idle(interval);
            if unmapped > 0 {
                tracing::info!(bytes = unmapped, "janitor unmapped an idle body mapping");
            }
            tokio::time::sleep(interval).await;
        }
    });
}

/// Writes the views counted in memory every second, so `viewCount` is at most about a
/// second behind; failed writes are kept and retried.
pub(crate) fn spawn_view_flusher(serving: ServingService) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(VIEW_FLUSH_INTERVAL);
        loop {
            tick.tick().await;
            if let Err(e) = serving.flush_views().await {
                tracing::warn!(error = %e, "view counts not written; kept for the next flush");
            }
        }
    });
}

const VIEW_FLUSH_INTERVAL: Duration = Duration::from_secs(1);
