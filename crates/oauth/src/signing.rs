//! The keys that sign access tokens (Ed25519, `EdDSA`) and their rotation schedule.
//!
//! Keys live in the database so every replica signs and verifies with the same set. A key
//! signs from its activation until a newer key activates; a new key is stored
//! [`PUBLISH_AHEAD`] before it signs, so every replica's key set (reloaded at least every
//! minute) holds it before the first token it signs arrives; a superseded key verifies for
//! [`RETIRED_KEPT`] more, the life of the last token it signed, then is deleted.

use std::fmt;

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{Ed25519KeyPair, KeyPair};
use base64::Engine;
use quire_kernel::InfraError;
use sha2::{Digest, Sha256};
use time::{Duration, OffsetDateTime};

use crate::grant::ACCESS_TOKEN_LIFETIME;

/// How long a key signs before its successor takes over.
pub const ROTATION_PERIOD: Duration = Duration::days(30);
/// How long before it signs a new key is published.
pub const PUBLISH_AHEAD: Duration = Duration::hours(1);
/// Clock difference tolerated on `exp`.
pub const LEEWAY: Duration = Duration::seconds(30);
/// How long a superseded key keeps verifying: the last token it signed, plus leeway.
pub const RETIRED_KEPT: Duration = Duration::seconds(ACCESS_TOKEN_LIFETIME.whole_seconds() + 60);

/// The JWS algorithm of every key.
pub const ALGORITHM: &str = "EdDSA";

/// An Ed25519 signing key with its public half.
#[derive(Clone, PartialEq, Eq)]
pub struct SigningKey {
    /// Base64url SHA-256 of the public key, first 22 characters.
    pub kid: String,
    /// PKCS#8 v2 DER.
    pub private_pkcs8: Vec<u8>,
    /// The raw 32-byte public key.
    pub public: Vec<u8>,
    pub created_at: OffsetDateTime,
    /// When it starts signing.
    pub activates_at: OffsetDateTime,
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("kid", &self.kid)
            .field("activates_at", &self.activates_at)
            .finish_non_exhaustive()
    }
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

impl SigningKey {
    /// A fresh key pair that signs from `activates_at`.
    ///
    /// # Errors
    /// [`InfraError`] if the system's random source fails.
    pub fn generate(now: OffsetDateTime, activates_at: OffsetDateTime) -> Result<Self, InfraError> {
        let rng = SystemRandom::new();
        let document = Ed25519KeyPair::generate_pkcs8(&rng)
            .map_err(|_| InfraError::new("cannot generate an Ed25519 key"))?;
        let pair = Ed25519KeyPair::from_pkcs8(document.as_ref())
            .map_err(|_| InfraError::new("cannot read a generated Ed25519 key"))?;
        let public = pair.public_key().as_ref().to_vec();
        Ok(Self {
            kid: b64(&Sha256::digest(&public))[..22].to_owned(),
            private_pkcs8: document.as_ref().to_vec(),
            public,
            created_at: now,
            activates_at,
        })
    }

    /// The public key as a JWK (RFC 8037), for the JWKS document.
    #[must_use]
    pub fn jwk(&self) -> serde_json::Value {
        serde_json::json!({
            "kty": "OKP",
            "crv": "Ed25519",
            "x": b64(&self.public),
            "kid": self.kid,
            "alg": ALGORITHM,
            "use": "sig",
        })
    }
}

/// The rotation schedule over a set of stored keys.
#[derive(Debug, Clone, Copy)]
pub struct KeySchedule;

impl KeySchedule {
    fn newest_active(keys: &[SigningKey], now: OffsetDateTime) -> Option<&SigningKey> {
        keys.iter()
            .filter(|k| k.activates_at <= now)
            .max_by(|a, b| (a.activates_at, &a.kid).cmp(&(b.activates_at, &b.kid)))
    }

    /// The key that signs at `now`: the latest activated one (ties broken by `kid`, so
    /// replicas that raced to store a successor agree).
    #[must_use]
    pub fn signer(keys: &[SigningKey], now: OffsetDateTime) -> Option<&SigningKey> {
        Self::newest_active(keys, now)
    }

    /// When a new key must activate, if one must be stored now: at once when there is no
    /// key; otherwise once the signer is within [`PUBLISH_AHEAD`] of its rotation and no
    /// successor is stored.
    #[must_use]
    pub fn due(keys: &[SigningKey], now: OffsetDateTime) -> Option<OffsetDateTime> {
        if keys.iter().any(|k| k.activates_at > now) {
            return None;
        }
        let Some(signer) = Self::signer(keys, now) else {
            return Some(now);
        };
        let rotation = signer.activates_at + ROTATION_PERIOD;
        (now >= rotation - PUBLISH_AHEAD).then(|| rotation.max(now + PUBLISH_AHEAD))
    }

    /// Whether `key` still verifies at `now`: published ahead, signing, or superseded less
    /// than [`RETIRED_KEPT`] ago.
    #[must_use]
    pub fn verifies(keys: &[SigningKey], key: &SigningKey, now: OffsetDateTime) -> bool {
        let superseded_at = keys
            .iter()
            .filter(|k| {
                k.activates_at <= now && (k.activates_at, &k.kid) > (key.activates_at, &key.kid)
            })
            .map(|k| k.activates_at)
            .min();
        superseded_at.is_none_or(|t| now < t + RETIRED_KEPT)
    }

    /// The keys to delete: superseded longer than [`RETIRED_KEPT`] ago.
    #[must_use]
    pub fn expired(keys: &[SigningKey], now: OffsetDateTime) -> Vec<String> {
        keys.iter()
            .filter(|k| !Self::verifies(keys, k, now))
            .map(|k| k.kid.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is the failure report

    use super::*;

    fn t0() -> OffsetDateTime {
        OffsetDateTime::UNIX_EPOCH + Duration::days(20_000)
    }

    #[test]
    fn the_first_key_signs_at_once_and_its_successor_is_published_an_hour_ahead() {
        let now = t0();
        assert_eq!(KeySchedule::due(&[], now), Some(now));
        let first = SigningKey::generate(now, now).unwrap();
        let mut keys = vec![first.clone()];
        assert_eq!(KeySchedule::signer(&keys, now), Some(&first));
        // Nothing is due until an hour before the rotation.
        assert_eq!(
            KeySchedule::due(&keys, now + ROTATION_PERIOD - Duration::minutes(61)),
            None
        );
        let publish = now + ROTATION_PERIOD - PUBLISH_AHEAD;
        let activates = KeySchedule::due(&keys, publish).unwrap();
        assert_eq!(activates, now + ROTATION_PERIOD);

        let second = SigningKey::generate(publish, activates).unwrap();
        keys.push(second.clone());
        // Published but not yet signing: the first key still signs, both verify.
        assert_eq!(KeySchedule::due(&keys, publish), None);
        assert_eq!(
            KeySchedule::signer(&keys, activates - Duration::seconds(1)),
            Some(&first)
        );
        assert!(KeySchedule::verifies(&keys, &second, publish));
        // From its activation the second signs; the first verifies 960 s more, then goes.
        assert_eq!(KeySchedule::signer(&keys, activates), Some(&second));
        assert!(KeySchedule::verifies(
            &keys,
            &first,
            activates + Duration::seconds(959)
        ));
        assert!(!KeySchedule::verifies(
            &keys,
            &first,
            activates + Duration::seconds(960)
        ));
        assert_eq!(
            KeySchedule::expired(&keys, activates + Duration::seconds(960)),
            vec![first.kid]
        );
        assert!(KeySchedule::expired(&keys, activates + Duration::seconds(959)).is_empty());
    }

    #[test]
    fn a_server_down_past_the_rotation_keeps_signing_until_the_late_successor_is_published() {
        let first = SigningKey::generate(t0(), t0()).unwrap();
        let late = t0() + ROTATION_PERIOD + Duration::days(3);
        let due = KeySchedule::due(std::slice::from_ref(&first), late).unwrap();
        assert_eq!(due, late + PUBLISH_AHEAD);
        assert_eq!(
            KeySchedule::signer(std::slice::from_ref(&first), late),
            Some(&first)
        );
    }

    #[test]
    fn replicas_that_raced_agree_on_one_signer_and_keep_both_keys() {
        let now = t0();
        let a = SigningKey::generate(now, now).unwrap();
        let b = SigningKey::generate(now, now).unwrap();
        let keys = vec![a.clone(), b.clone()];
        let winner = &(if a.kid > b.kid { a.clone() } else { b.clone() });
        assert_eq!(KeySchedule::signer(&keys, now), Some(winner));
        let reversed = vec![b, a];
        assert_eq!(KeySchedule::signer(&reversed, now), Some(winner));
        assert!(KeySchedule::expired(&keys, now + Duration::seconds(959)).is_empty());
    }

    #[test]
    fn keys_debug_without_their_private_half_and_publish_a_jwk() {
        let key = SigningKey::generate(t0(), t0()).unwrap();
        let shown = format!("{key:?}");
        assert!(shown.contains(&key.kid) && !shown.contains("private"));
        let jwk = key.jwk();
        assert_eq!(jwk["kty"], "OKP");
        assert_eq!(jwk["crv"], "Ed25519");
        assert_eq!(jwk["alg"], "EdDSA");
        assert_eq!(jwk["kid"], key.kid.as_str());
        assert_eq!(jwk["x"].as_str().unwrap().len(), 43);
    }
}
