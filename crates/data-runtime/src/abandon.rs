//! The authenticator's connections let go of before the server answered: a request dropped
//! because its client went away, or one past its deadline. Closing the socket does not stop
//! the backend: a tenant's function may lift `statement_timeout` and
//! `client_connection_check_interval` for itself and catch every cancel. So the backend is
//! cancelled with the key data of its login, given a grace to end by itself, and then
//! terminated through the cluster's adapter ([`TenantBackends`], as the owner's sessions
//! are), which no exception handler catches; the connection's place under the cap and its
//! account's share is held until then, so that the share bounds backends, not sockets.

use std::sync::Arc;
use std::time::Duration;

use quire_databases::{TenantBackend, TenantBackends};

use crate::cap::Hold;
use crate::meter::{Ended, Meter};
use crate::wire::Leftover;

/// What ending a connection's leftovers takes: the cluster's terminate (none in tests that
/// only need the cancel) and the grace between the two.
pub(crate) struct Ender {
    pub backends: Option<Arc<dyn TenantBackends>>,
    pub grace: Duration,
    pub meter: Arc<Meter>,
}

impl Ender {
    /// Ends what a connection as `role` left running, on a task of its own, and gives
    /// `hold` back once its backend is gone (or could not be ended: the sweep then will).
    pub(crate) fn end(self: &Arc<Self>, role: &str, left: Leftover, hold: Hold) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // No runtime means the process is ending, and its sockets with it.
            return;
        };
        let ender = self.clone();
        let role = role.to_owned();
        runtime.spawn(async move {
            let ended = ender.ended(role, left).await;
            ender.meter.ended(ended);
            drop(hold);
        });
    }

    async fn ended(&self, role: String, left: Leftover) -> Ended {
        // A cancel ends a statement that honours it; the socket is already closed, so its
        // backend then ends as it tries to answer.
        let _ = left.cancel().await;
        tokio::time::sleep(self.grace).await;
        let Some(backends) = &self.backends else {
            return Ended::Cancelled;
        };
        let backend = TenantBackend {
            role,
            pid: left.backend.pid,
            started: left.backend.started,
        };
        match backends.terminate(&backend).await {
            Ok(true) => {
                tracing::info!(
                    role = %backend.role,
                    pid = backend.pid,
                    "ended a data API backend that outlived its request"
                );
                Ended::Terminated
            }
            Ok(false) => Ended::Cancelled,
            Err(e) => {
                tracing::warn!(
                    role = %backend.role,
                    pid = backend.pid,
                    error = %e,
                    "could not end a data API backend that outlived its request; the \
                     janitor's sweep will"
                );
                Ended::Failed
            }
        }
    }
}
