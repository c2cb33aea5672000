//! `quire-bearer`: the application layer's verifier of OAuth access tokens, behind
//! `quire-keys`' [`quire_keys::BearerTokens`] port. It runs the seven verification steps of
//! the spec in order, holding in memory what every API call would otherwise read: the
//! signing keys (reloaded every minute, and at once, at most every 5 s, when a token names
//! a key it does not hold), the client registry's answers (4 s, so a client deleted on
//! one replica is refused on every replica within 5 s) and each (account, client)'s role and
//! home project ([`SUBJECT_TTL`], 1 s). A token seen within those times costs no query.
//! Those times run on the kernel's `Clock`, as the tokens' expiry does.
//!
//! It depends on the domain crates (`quire-oauth` for the token rules, `quire-keys` for the
//! port, `quire-accounts` and `quire-projects` for the principal) and `quire-read-cache`
//! for its bounded caches; like `quire-serving` it holds caches, which the domain may not.

mod verifier;

pub use verifier::{BearerPorts, BearerVerifier, CLIENT_CACHE_TTL, KEY_CACHE_TTL, SUBJECT_TTL};
