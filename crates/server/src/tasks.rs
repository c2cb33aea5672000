//! Background work of a running server: the janitor and the view-count flush.

use std::time::{Duration, Instant};

use quire_app::Services;
use quire_edge::mapping;
use quire_pages::Swept;
use quire_serving::ServingService;

/// Sweeps interrupted publishes and orphaned files, expired sessions, old device grants,
/// rate-limit events, email sends out of every window, spent captcha solutions, expired
/// one-time links, lapsed view leases, databases abandoned, half-deleted or expired, and
/// owners' SQL sessions a stopped replica left running, now (so at start-up), then every
/// `interval`; and unmaps the mapping kept for long request bodies once it has waited a
/// whole `interval`.
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
            let started = Instant::now();
            match oauth_registration.expire_idle().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(
                    clients = n,
                    "janitor deleted dynamic OAuth clients unused for 30 days"
                ),
                Err(e) => failed("oauth_clients", "janitor OAuth client pass failed", &e),
            }
            match sessions.sweep_expired().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(sessions = n, "janitor removed expired sessions"),
                Err(e) => failed("sessions", "janitor session pass failed", &e),
            }
            match device_auth.sweep().await {
                Ok((0, 0)) => {}
                Ok((grants, windows)) => tracing::info!(
                    device_grants = grants,
                    rate_windows = windows,
                    "janitor removed old device grants and rate windows"
                ),
                Err(e) => failed("device_logins", "janitor device-login pass failed", &e),
            }
            match mail.sweep().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(
                    email_sends = n,
                    "janitor forgot email sends past the quota window"
                ),
                Err(e) => failed("mail_quota", "janitor mail pass failed", &e),
            }
            match activation.sweep().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(
                    captcha_solutions = n,
                    "janitor forgot spent captcha solutions past their expiry"
                ),
                Err(e) => failed("captcha", "janitor captcha pass failed", &e),
            }
            match sign_up.sweep().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(links = n, "janitor forgot expired one-time links"),
                Err(e) => failed("one_time_links", "janitor link pass failed", &e),
            }
            match pages.sweep().await {
                Ok(swept) if swept != Swept::default() => tracing::info!(
                    pending_pages = swept.pending_pages,
                    orphaned_bundles = swept.orphaned_bundles,
                    leftovers = swept.leftovers,
                    replaced_files = swept.replaced_files,
                    "janitor removed leftovers"
                ),
                Ok(_) => {}
                Err(e) => failed("pages", "janitor page pass failed", &e),
            }
            match objects.sweep(quire_pages::LEFTOVER_AGE).await {
                Ok(swept) if swept != quire_objects::Swept::default() => tracing::info!(
                    dead_uploads = swept.dead_uploads,
                    orphaned_objects = swept.orphaned,
                    partial_uploads = swept.partial,
                    "janitor removed what object uploads and deletes left"
                ),
                Ok(_) => {}
                Err(e) => failed("objects", "janitor object pass failed", &e),
            }
            match databases.sweep().await {
                Ok(swept) if swept != quire_databases::Swept::default() => tracing::info!(
                    abandoned_creations = swept.abandoned,
                    finished_deletions = swept.deleted,
                    expired_databases = swept.expired,
                    "janitor dropped databases"
                ),
                Ok(_) => {}
                Err(e) => failed("databases", "janitor database pass failed", &e),
            }
            match databases.end_abandoned_sql().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(
                    sessions = n,
                    "janitor ended owners' SQL sessions left running past every deadline"
                ),
                Err(e) => failed("database_sessions", "janitor SQL session pass failed", &e),
            }
            match serving.settle_lapsed_leases().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(
                    views = n,
                    "janitor counted the views of lapsed view leases as served"
                ),
                Err(e) => failed("view_leases", "janitor view-lease pass failed", &e),
            }
            let unmapped = mapping::release_idle(interval);
            if unmapped > 0 {
                tracing::info!(bytes = unmapped, "janitor unmapped an idle body mapping");
            }
            metrics::counter!("quire_janitor_runs_total").increment(1);
            metrics::histogram!("quire_janitor_run_duration_seconds").record(started.elapsed());
            tokio::time::sleep(interval).await;
        }
    });
}

/// Logs a janitor pass that failed, and counts it in the metrics by pass; the next run tries
/// again.
fn failed(pass: &'static str, message: &'static str, error: &dyn std::fmt::Display) {
    tracing::warn!(error = %error, "{message}");
    metrics::counter!("quire_janitor_pass_failures_total", "pass" => pass).increment(1);
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
