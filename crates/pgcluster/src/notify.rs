//! Telling every data API instance of a database to load its schema again.
//!
//! Each instance (on every replica) `LISTEN`s on `pgrst` in its database, as PostgREST does,
//! so one `NOTIFY` there reaches them all. It is sent as the owner, whose connection the
//! database's `CONNECT` grant already allows; the admin role may not be able to connect.

use std::time::Duration;

use quire_kernel::InfraError;
use tokio_postgres::Client;

use crate::conn::within;

/// The channel and payload PostgREST listens for.
pub const RELOAD_CHANNEL: &str = "pgrst";
pub const RELOAD_PAYLOAD: &str = "reload schema";

pub(crate) async fn announce(client: &Client, deadline: Duration) -> Result<(), InfraError> {
    within(
        client,
        deadline,
        "announcing a schema reload",
        client.execute(
            "SELECT pg_notify($1, $2)",
            &[&RELOAD_CHANNEL, &RELOAD_PAYLOAD],
        ),
    )
    .await?;
    Ok(())
}
