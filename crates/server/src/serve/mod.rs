//! `serve`: start-up in readable steps. [`prepare`](prepare::prepare) does everything before
//! a listener serves (migrations, sockets, secrets, services, the janitor; `prepare.rs`);
//! the connection budget is shared out (`capacity.rs`); one function per listener starts
//! it (API and dashboard, pages, metrics; `listeners.rs`); the listening line is logged and
//! printed; then the three serve until a signal, and what outlives them is stopped cleanly.

mod capacity;
mod listeners;
mod prepare;

use std::net::SocketAddr;

use quire_store::Database;

use self::capacity::Capacity;
use self::prepare::{Prepared, prepare};
use crate::config::Config;
use crate::error::ServerError;
use crate::exporter::Sampled;
use crate::quota_gauges::QuotaGauges;

pub(crate) async fn serve(config: Config, db: Database) -> Result<(), ServerError> {
    let Prepared {
        config,
        db,
        state,
        listeners: sockets,
        databases,
    } = prepare(config, db).await?;
    let capacity = Capacity::plan(&config, &state);
    let quotas = QuotaGauges::new(state.objects.clone(), state.databases.clone());
    let api_addr = sockets.api.addr;
    let pages_addr = sockets.pages.addr;
    let metrics_addr = sockets.metrics.as_ref().map(|m| m.bound.addr);
    let api = listeners::api(sockets.api, &config, state.clone(), &capacity)?;
    let visitors = listeners::pages(&sockets.pages, &config, &state, &capacity)?;
    let metrics = sockets
        .metrics
        .map(|socket| {
            let sampled = Sampled {
                db,
                api_connections: capacity.api_share.clone(),
                pages_connections: visitors.open_connections(),
                quotas,
            };
            listeners::metrics(socket, sampled)
        })
        .transpose()?;
    announce_listening(&config, api_addr, pages_addr, metrics_addr);
    let metrics = async {
        match metrics {
            Some(server) => server.await,
            None => Ok(()),
        }
    };
    let (api, visitors, metrics) = tokio::join!(api, visitors.run(), metrics);
    if let Err(e) = metrics {
        tracing::warn!(error = %e, "the metrics listener stopped with an error");
    }
    if let Err(e) = state.serving.close_views().await {
        tracing::warn!(error = %e, "view counts of the last second were not written");
    }
    if let Some(local) = databases.local
        && let Err(e) = local.stop().await
    {
        tracing::warn!(error = %e, "the private database cluster did not stop cleanly");
    }
    api.map_err(|source| ServerError::Serve {
        listener: "API",
        source,
    })?;
    visitors.map_err(|source| ServerError::Serve {
        listener: "pages",
        source,
    })?;
    tracing::info!("shut down cleanly");
    Ok(())
}

/// Logs where each listener is, and prints it as one machine-readable line on stdout, for
/// scripts and the black-box tests.
fn announce_listening(
    config: &Config,
    api: SocketAddr,
    pages: SocketAddr,
    metrics: Option<SocketAddr>,
) {
    let mut listening = serde_json::json!({
        "api": api.to_string(),
        "pages": pages.to_string(),
    });
    if let Some(metrics) = metrics {
        listening["metrics"] = metrics.to_string().into();
    }
    tracing::info!(
        api = %api,
        pages = %pages,
        base_url = %config.base_url,
        pages_url = %config.pages_url,
        "quire-server listening"
    );
    #[allow(clippy::print_stdout)]
    {
        println!("{}", serde_json::json!({ "listening": listening }));
    }
}
