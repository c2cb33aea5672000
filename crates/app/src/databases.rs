//! The database service: its records, cluster and data API runtime, the sealing key its
//! secrets are kept under, and its email to end users through the mail use case.

use std::sync::Arc;

use quire_accounts::SealingKey;
use quire_databases::DatabaseService;
use quire_mail::MailService;

use crate::end_user_mail::AccountMail;
use crate::{Ports, Settings};

/// The database service; its data API lives on the base URL.
pub(crate) fn databases(
    ports: &Ports,
    settings: &Settings,
    mail: &MailService,
    sealing: &SealingKey,
) -> DatabaseService {
    let Ports {
        projects,
        mail: mail_ports,
        databases,
        runtime,
        ..
    } = ports;
    let mut config = settings.databases.clone();
    config.base_url.clone_from(&settings.base_url);
    DatabaseService::new(
        quire_databases::DatabasePorts {
            records: databases.records.clone(),
            cluster: databases.cluster.clone(),
            projects: projects.clone(),
            clock: runtime.clock.clone(),
            runtime: databases.runtime.clone(),
            sealing: sealing.clone(),
            offload: runtime.offload.clone(),
            limiter: runtime.limiter.clone(),
            mail: Arc::new(AccountMail {
                mail: mail.clone(),
                dispatch: mail_ports.dispatch.clone(),
            }),
        },
        config,
    )
}
