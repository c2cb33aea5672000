//! `quire-oauth`: Quire as an OAuth authorization server for third-party applications.
//!
//! - The client registry: the platform admin registers clients (confidential, with a secret
//!   shown once and stored as its SHA-256, or public), lists, deletes (a tombstone: the id is
//!   never reused, projects naming it forget it, its grants are revoked) and rotates a
//!   secret; redirect URIs follow RFC 6749 §3.1.2, RFC 8252 and RFC 9700 (exact match, any
//!   port on a loopback IP literal).
//! - Dynamic registration (RFC 7591) for agents: unverified clients with the redirect URIs
//!   agents use, limited per address, expired after 30 days unused, off at the operator's
//!   word.
//! - Client ID Metadata Documents: a `client_id` that is an `https` URL names a document
//!   describing the client, fetched through [`ports::ClientMetadataDocuments`] and checked
//!   here; such a client is public, unverified, and stored when first authorized.
//! - RFC 8707 resource indicators: a grant is for the REST API or the agent endpoint, and
//!   its tokens' audience says which; the read-only scope `page:read`.
//! - The authorization code flow with PKCE (S256 only, for every client): the consent
//!   request bound to a dashboard session, codes (256 bits, hashed, 60 s, single use), the
//!   token endpoint with refresh rotation and reuse detection, revocation (RFC 7009).
//! - Access tokens (RFC 9068): Ed25519-signed JWTs, the signing keys' rotation schedule, and
//!   the first five verification steps; the registry steps belong to the caller, which may
//!   cache.
//! - Connected agents: an account's live grants by (client, project), as its holder lists
//!   and ends them.
//!
//! Pure domain: it depends on `quire-kernel`, `quire-projects` (a token's home project),
//! parsing and crypto libraries (`url`, `jsonwebtoken` and `aws-lc-rs`, `sha2`, `subtle`);
//! time comes from the kernel's `Clock`. Its ports: [`ports::ClientStore`],
//! [`ports::GrantStore`], [`ports::SigningKeyStore`], [`ports::ClientMetadataDocuments`].

pub mod access_token;
mod authorize;
pub mod connected;
pub mod consent;
pub mod dynamic;
pub mod grant;
pub mod listing;
pub mod metadata_document;
pub mod model;
pub mod ports;
pub mod redirect;
pub mod resource;
pub mod service;
pub mod signing;
pub mod token;

pub use access_token::{ParsedToken, TokenAudience, TokenRefusal, VerifiedToken};
pub use connected::{ConnectedAgent, ConnectedAgents, DisconnectError};
pub use consent::{
    Approve, AuthorizeError, AuthorizeRequest, ConsentRequest, ConsentService, DecisionError,
};
pub use dynamic::{ClientMetadata, DynamicClient, DynamicRegistration, RegistrationError};
pub use grant::{Approval, Grant, GrantStage, LiveGrant, RefreshRecord};
pub use listing::{ClientKey, OAUTH_CLIENTS_LIST};
pub use metadata_document::{DocumentRefusal, MetadataDocuments};
pub use model::{ClientId, ClientSecret, ClientType, NewClient, OAuthClient, Registration};
pub use ports::{
    ClientMetadataDocuments, ClientStore, FetchError, FetchedDocument, GrantStore,
    InsertClientError, SigningKeyStore,
};
pub use redirect::{MAX_REDIRECT_URIS, RedirectUri};
pub use service::{ClientError, ClientService, MAX_NAME_CHARS, Registered};
pub use signing::{KeySchedule, SigningKey};
pub use token::{
    ClientCredentials, IssuedTokens, TokenError, TokenPorts, TokenRequest, TokenService,
};
