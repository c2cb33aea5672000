//! Random secrets and their digests, as every credential of Quire uses them: the secret goes
//! to its holder once; the database keeps only its SHA-256.

use std::fmt;
use std::marker::PhantomData;

use base64::Engine;
use rand::RngExt;
use sha2::{Digest, Sha256};

/// What an [`OpaqueToken`] is for; its name is all its `Debug` shows.
pub trait TokenPurpose {
    const NAME: &'static str;
}

/// A bearer secret held by a client (a session cookie, a device code): made by
/// [`OpaqueToken::generate`] or received back from the client, stored only as its
/// [`OpaqueToken::hash`]. `Debug` is redacted, and the purpose is part of the type, so one
/// kind of token is never taken for another.
pub struct OpaqueToken<P> {
    value: String,
    purpose: PhantomData<fn() -> P>,
}

impl<P: TokenPurpose> OpaqueToken<P> {
    /// A new token from [`random_url_token`].
    #[must_use]
    pub fn generate() -> Self {
        Self::received(&random_url_token())
    }

    /// The token as the client sent it back (unchecked: look its hash up).
    #[must_use]
    pub fn received(value: &str) -> Self {
        Self {
            value: value.to_owned(),
            purpose: PhantomData,
        }
    }

    /// The secret itself, for the one response that hands it to its holder.
    #[must_use]
    pub fn expose(&self) -> &str {
        &self.value
    }

    /// Lowercase hex SHA-256: what the store holds and looks up by.
    #[must_use]
    pub fn hash(&self) -> String {
        sha256_hex(self.value.as_bytes())
    }
}

impl<P> Clone for OpaqueToken<P> {
    fn clone(&self) -> Self {
        Self {
            value: self.value.clone(),
            purpose: PhantomData,
        }
    }
}

impl<P> PartialEq for OpaqueToken<P> {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl<P> Eq for OpaqueToken<P> {}

impl<P: TokenPurpose> fmt::Debug for OpaqueToken<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}(…)", P::NAME)
    }
}

/// 32 bytes from the thread-local CSPRNG, base64url without padding (43 characters).
#[must_use]
pub fn random_url_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill(&mut bytes[..]);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Lowercase hex SHA-256 of `bytes`.
#[must_use]
pub fn sha256_hex(bytes: &[u8]) -> String {
    lower_hex(&Sha256::digest(bytes))
}

/// SHA-256 of bytes that arrive in pieces (an upload, as it streams in).
#[derive(Debug, Clone, Default)]
pub struct Sha256Running(Sha256);

impl Sha256Running {
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// Lowercase hex of everything given so far.
    #[must_use]
    pub fn hex(self) -> String {
        lower_hex(&self.0.finalize())
    }
}

/// `bytes` as lowercase hex, two digits each.
#[must_use]
pub fn lower_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_43_url_safe_characters_and_differ() {
        let t = random_url_token();
        assert_eq!(t.len(), 43);
        assert!(
            t.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
        assert_ne!(random_url_token(), t);
    }

    enum Sample {}
    impl TokenPurpose for Sample {
        const NAME: &'static str = "SampleToken";
    }

    #[test]
    fn opaque_tokens_hide_their_value_and_hash_to_what_the_store_keeps() {
        let token = OpaqueToken::<Sample>::generate();
        assert_eq!(format!("{token:?}"), "SampleToken(…)");
        let back = OpaqueToken::<Sample>::received(token.expose());
        assert_eq!(back, token);
        assert_eq!(back.hash(), sha256_hex(token.expose().as_bytes()));
        assert_ne!(OpaqueToken::<Sample>::generate(), token);
    }

    #[test]
    fn hex_is_two_lowercase_digits_per_byte() {
        assert_eq!(lower_hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(lower_hex(&[]), "");
    }

    #[test]
    fn sha256_hex_matches_the_known_digest() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
