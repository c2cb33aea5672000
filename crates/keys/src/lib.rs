//! `quire-keys`: API keys: minting, hashing, verification (authentication), listing and
//! revocation.
//!
//! Pure domain: it depends on `quire-kernel`, `quire-projects` (to resolve the `project` a
//! key is minted into) and small pure crates (sha2, rand, subtle). OAuth access tokens are
//! verified behind its [`BearerTokens`] port. Plaintext keys exist only
//! in the value returned by [`KeyService::mint`]; everything stored holds the SHA-256 hash.

pub mod credential;
pub mod model;
pub mod ports;
pub mod service;

pub use credential::{KEY_PREFIX_LEN, KeyHash, PlaintextKey};
pub use model::{CredentialOwner, KeyRecord};
pub use ports::{BearerTokens, KeyStore};
pub use service::{
    AuthError, KEY_USE_RESOLUTION, KEYS_LIST, KeyService, ListKeysError, ListedKey,
    MAX_KEY_NAME_CHARS, MintError, MintRequest, MintedKey, RevokeError, RevokeSelfError, new_key,
};
