//! Quire's OAuth authorization server: the client registry and dynamic registration, the
//! consent, the token endpoint, and the agents each account connected.

use quire_oauth::{
    ClientService, ConnectedAgents, ConsentService, DynamicRegistration, MetadataDocuments,
    TokenAudience, TokenPorts, TokenService,
};

use crate::{Ports, Settings};

pub(crate) struct OAuthServices {
    pub clients: ClientService,
    pub registration: DynamicRegistration,
    pub consent: ConsentService,
    pub tokens: TokenService,
    pub agents: ConnectedAgents,
}

/// The OAuth services; `audience` is whom their access tokens are for, and its issuer
/// theirs.
pub(crate) fn oauth(ports: &Ports, settings: &Settings, audience: &TokenAudience) -> OAuthServices {
    let Ports {
        projects,
        auth,
        runtime,
        ..
    } = ports;
    let (clock, limiter) = (&runtime.clock, &runtime.limiter);
    OAuthServices {
        clients: ClientService::new(auth.oauth_clients.clone(), clock.clone()),
        registration: DynamicRegistration::new(
            auth.oauth_clients.clone(),
            limiter.clone(),
            clock.clone(),
            settings.oauth_dynamic_registration,
        ),
        consent: ConsentService::new(
            auth.oauth_clients.clone(),
            auth.oauth_grants.clone(),
            projects.clone(),
            clock.clone(),
            &audience.issuer,
            MetadataDocuments::new(
                auth.client_documents.clone(),
                settings.oauth_client_metadata_documents,
                settings.oauth_documents_on_loopback_http,
            ),
        ),
        tokens: TokenService::new(
            TokenPorts {
                clients: auth.oauth_clients.clone(),
                grants: auth.oauth_grants.clone(),
                keys: auth.signing_keys.clone(),
                limiter: limiter.clone(),
                clock: clock.clone(),
            },
            audience.clone(),
        ),
        agents: ConnectedAgents::new(
            auth.oauth_clients.clone(),
            auth.oauth_grants.clone(),
            projects.clone(),
            clock.clone(),
        ),
    }
}
