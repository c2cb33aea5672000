//! Secrets the server must read back (the second factor's TOTP secret, and the keys that
//! sign: the pages origin's, the captcha's, OAuth's) are kept sealed: AES-256-GCM under a
//! key that lives outside the database, so a copy of the database alone hands over no one's
//! second factor and signs nothing.
//!
//! The sealed form is `v1.` + base64url(nonce ‖ ciphertext ‖ tag). The additional data
//! binds a sealed value to its purpose and row (an account, a key's name): a value copied to
//! another row does not open.

use std::fmt;
use std::sync::Arc;

use aws_lc_rs::aead::{AES_256_GCM, Aad, NONCE_LEN, Nonce, RandomizedNonceKey};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use quire_kernel::AccountId;

use crate::mfa::TotpSecret;

const VERSION: &str = "v1.";
/// The key's length in bytes (AES-256).
pub const KEY_BYTES: usize = 32;

/// The server's sealing key. `Debug` shows nothing of it.
#[derive(Clone)]
pub struct SealingKey(Arc<RandomizedNonceKey>);

impl fmt::Debug for SealingKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SealingKey(…)")
    }
}

/// A value as the store keeps it: sealed, or (from before sealing) a bare base32 secret.
#[derive(Clone, PartialEq, Eq)]
pub struct SealedSecret(String);

impl fmt::Debug for SealedSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SealedSecret(…)")
    }
}

impl SealedSecret {
    /// A value read back from the store.
    #[must_use]
    pub fn stored(value: String) -> Self {
        Self(value)
    }

    /// What the store keeps.
    #[must_use]
    pub fn as_stored(&self) -> &str {
        &self.0
    }

    /// Whether this is a bare secret stored before sealing began (the server seals those
    /// at start-up).
    #[must_use]
    pub fn is_legacy(&self) -> bool {
        !self.0.starts_with(VERSION)
    }
}

/// A sealed value did not open: the key file is not the one it was sealed under, or the
/// value was altered or moved to another account.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "a sealed secret of account {0} does not open under this server's key (QUIRE_SECRET_KEY_FILE must be the same file on every replica)"
)]
pub struct UnsealError(pub AccountId);

/// A sealed value of the server's own (a signing key) did not open: the key file is not the
/// one it was sealed under, or the value was altered or moved to another row. Names the
/// value, never shows it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the sealed {0} does not open under this server's key (QUIRE_SECRET_KEY_FILE must be the file it was sealed under, the same on every replica)"
)]
pub struct UnsealValueError(pub String);

impl SealingKey {
    /// The key from its 32 bytes; `None` for any other length.
    #[must_use]
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        if bytes.len() != KEY_BYTES {
            return None;
        }
        RandomizedNonceKey::new(&AES_256_GCM, bytes)
            .ok()
            .map(|k| Self(Arc::new(k)))
    }

    /// A random key that lives as long as this process: for tests and tools, never for a
    /// server (what it sealed does not open after a restart).
    #[must_use]
    pub fn ephemeral() -> Self {
        use rand::RngExt as _;
        let mut bytes = [0u8; KEY_BYTES];
        rand::rng().fill(&mut bytes[..]);
        let Some(key) = Self::from_bytes(&bytes) else {
            unreachable!("32 bytes make an AES-256 key");
        };
        key
    }

    /// Seals `account`'s TOTP secret.
    #[must_use]
    pub fn seal_totp(&self, account: AccountId, secret: &TotpSecret) -> SealedSecret {
        self.seal_with(&totp_aad(account), secret.expose().as_bytes())
    }

    /// Opens `account`'s sealed TOTP secret (a legacy bare secret is read as is).
    ///
    /// # Errors
    /// [`UnsealError`] when the value does not open under this key for this account.
    pub fn open_totp(
        &self,
        account: AccountId,
        sealed: &SealedSecret,
    ) -> Result<TotpSecret, UnsealError> {
        let refused = || UnsealError(account);
        if sealed.is_legacy() {
            return TotpSecret::parse(&sealed.0).ok_or_else(refused);
        }
        let plain = self
            .open_with(&totp_aad(account), sealed)
            .ok_or_else(refused)?;
        std::str::from_utf8(&plain)
            .ok()
            .and_then(TotpSecret::parse)
            .ok_or_else(refused)
    }

    /// Seals `plain`, a value of the server's own, for `purpose` (what it is and which row
    /// holds it, e.g. `server secret captcha`): it opens only for that same purpose.
    #[must_use]
    pub fn seal(&self, purpose: &str, plain: &[u8]) -> SealedSecret {
        self.seal_with(&value_aad(purpose), plain)
    }

    /// Opens a value sealed by [`SealingKey::seal`] for `purpose`. A bare (legacy) value is
    /// refused: the caller decides whether it may read one.
    ///
    /// # Errors
    /// [`UnsealValueError`] naming `purpose` when the value does not open.
    pub fn open(&self, purpose: &str, sealed: &SealedSecret) -> Result<Vec<u8>, UnsealValueError> {
        if sealed.is_legacy() {
            return Err(UnsealValueError(purpose.to_owned()));
        }
        self.open_with(&value_aad(purpose), sealed)
            .ok_or_else(|| UnsealValueError(purpose.to_owned()))
    }

    fn seal_with(&self, aad: &[u8], plain: &[u8]) -> SealedSecret {
        let mut in_out = plain.to_vec();
        let Ok(nonce) = self.0.seal_in_place_append_tag(Aad::from(aad), &mut in_out) else {
            // Sealing fails only for inputs of gigabytes; these are a few dozen bytes.
            unreachable!("AES-GCM refused to seal a short value");
        };
        let mut out = nonce.as_ref().to_vec();
        out.extend_from_slice(&in_out);
        SealedSecret(format!("{VERSION}{}", URL_SAFE_NO_PAD.encode(out)))
    }

    fn open_with(&self, aad: &[u8], sealed: &SealedSecret) -> Option<Vec<u8>> {
        let encoded = sealed.0.strip_prefix(VERSION)?;
        let bytes = URL_SAFE_NO_PAD.decode(encoded).ok()?;
        if bytes.len() < NONCE_LEN {
            return None;
        }
        let (nonce, body) = bytes.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut body = body.to_vec();
        let plain = self
            .0
            .open_in_place(nonce, Aad::from(aad), &mut body)
            .ok()?;
        Some(plain.to_vec())
    }
}

fn totp_aad(account: AccountId) -> Vec<u8> {
    format!("quire totp {}", account.0).into_bytes()
}

// Distinct from every TOTP's: "quire totp <uuid>" is never "quire value …".
fn value_aad(purpose: &str) -> Vec<u8> {
    format!("quire value {purpose}").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(byte: u8) -> SealingKey {
        SealingKey::from_bytes(&[byte; KEY_BYTES]).unwrap()
    }

    #[test]
    fn a_sealed_secret_opens_only_with_its_key_and_for_its_account() {
        let (k, other_key) = (key(1), key(2));
        let (ann, bob) = (AccountId::new(), AccountId::new());
        let secret = TotpSecret::generate();
        let sealed = k.seal_totp(ann, &secret);
        assert!(!sealed.is_legacy());
        assert!(!sealed.as_stored().contains(secret.expose()));
        assert_eq!(k.open_totp(ann, &sealed), Ok(secret.clone()));
        assert_eq!(k.open_totp(bob, &sealed), Err(UnsealError(bob)));
        assert_eq!(other_key.open_totp(ann, &sealed), Err(UnsealError(ann)));
        assert_ne!(k.seal_totp(ann, &secret), sealed, "each seal draws a nonce");
    }

    #[test]
    fn altered_or_truncated_values_do_not_open() {
        let k = key(3);
        let ann = AccountId::new();
        let sealed = k.seal_totp(ann, &TotpSecret::generate());
        let mut altered = sealed.as_stored().to_owned();
        let last = altered.pop().unwrap();
        altered.push(if last == 'A' { 'B' } else { 'A' });
        for bad in [altered.as_str(), "v1.", "v1.AAAA", "v1.!!"] {
            assert!(
                k.open_totp(ann, &SealedSecret::stored(bad.into())).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn legacy_bare_secrets_are_read_and_flagged() {
        let k = key(4);
        let secret = TotpSecret::generate();
        let legacy = SealedSecret::stored(secret.expose().to_owned());
        assert!(legacy.is_legacy());
        assert!(!format!("{legacy:?}").contains(secret.expose()));
        assert_eq!(k.open_totp(AccountId::new(), &legacy), Ok(secret));
        assert!(SealingKey::from_bytes(&[0; 16]).is_none());
    }

    #[test]
    fn a_sealed_value_opens_only_with_its_key_and_for_its_purpose() {
        let (k, other_key) = (key(5), key(6));
        let sealed = k.seal("server secret captcha", b"the key");
        assert!(!sealed.is_legacy());
        assert!(!sealed.as_stored().contains("the key"));
        assert_eq!(
            k.open("server secret captcha", &sealed).unwrap(),
            b"the key"
        );
        let refused = UnsealValueError("server secret other".into());
        assert_eq!(k.open("server secret other", &sealed), Err(refused));
        assert!(other_key.open("server secret captcha", &sealed).is_err());
        let bare = SealedSecret::stored("the key".into());
        assert!(k.open("server secret captcha", &bare).is_err());
        let err = other_key
            .open("server secret captcha", &sealed)
            .unwrap_err();
        assert!(!err.to_string().contains("the key"));
    }
}
