//! `quire-oauth`: Quire as an OAuth authorization server for third-party applications. This
//! first part is the client registry: the platform admin registers clients (confidential,
//! with a secret shown once and stored as its SHA-256, or public), lists, deletes
//! (a tombstone: the id is never reused, and projects naming it forget it) and rotates a
//! secret; redirect URIs follow RFC 6749 §3.1.2, RFC 8252 and RFC 9700 (exact match, any
//! port on a loopback IP literal).
//!
//! Pure domain: it depends on `quire-kernel`, `url` (parsing only) and `subtle`; time comes
//! from the kernel's `Clock`. Its port: [`ports::ClientStore`].

pub mod model;
pub mod ports;
pub mod redirect;
pub mod service;

pub use model::{ClientId, ClientSecret, ClientType, NewClient, OAuthClient};
pub use ports::{ClientStore, InsertClientError};
pub use redirect::{MAX_REDIRECT_URIS, RedirectUri};
pub use service::{ClientError, ClientService, MAX_NAME_CHARS, Registered};
