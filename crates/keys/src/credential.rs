//! The key format: `qk_` followed by 43 base62 characters (256 bits of randomness), stored
//! only as its SHA-256; the first 11 characters are the displayable `keyPrefix`.

use std::fmt;

use rand::RngExt;
use subtle::ConstantTimeEq;

const SCHEME: &str = "qk_";
const BODY_LEN: usize = 43;
const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/// Length of the non-secret prefix shown in listings.
pub const KEY_PREFIX_LEN: usize = 11;

/// A plaintext key. Its `Debug` output is redacted so it cannot reach a log by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct PlaintextKey(String);

impl fmt::Debug for PlaintextKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PlaintextKey({}…)", self.prefix())
    }
}

impl PlaintextKey {
    /// A new random key from the thread-local CSPRNG.
    #[must_use]
    pub fn generate() -> Self {
        let mut rng = rand::rng();
        let body: String = (0..BODY_LEN)
            .map(|_| char::from(BASE62[rng.random_range(0..BASE62.len())]))
            .collect();
        Self(format!("{SCHEME}{body}"))
    }

    /// Accepts a string of exactly the key format, else `None`.
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        let body = s.strip_prefix(SCHEME)?;
        (body.len() == BODY_LEN && body.bytes().all(|b| b.is_ascii_alphanumeric()))
            .then(|| Self(s.to_owned()))
    }

    /// The secret itself; only for handing to the caller once.
    #[must_use]
    pub fn expose(&self) -> &str {
        &self.0
    }

    #[must_use]
    pub fn prefix(&self) -> &str {
        &self.0[..KEY_PREFIX_LEN]
    }

    #[must_use]
    pub fn hash(&self) -> KeyHash {
        KeyHash(quire_kernel::secret::sha256_hex(self.0.as_bytes()))
    }
}

/// The lowercase hex SHA-256 of a plaintext key: what the database holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeyHash(pub String);

impl KeyHash {
    /// Compares in constant time, so a lookup that matched on an index cannot be confirmed
    /// byte by byte through timing.
    #[must_use]
    pub fn matches(&self, other: &KeyHash) -> bool {
        self.0.as_bytes().ct_eq(other.0.as_bytes()).into()
    }
}

/// A credential that looks like a JWT: three base64url segments separated by dots.
#[must_use]
pub fn is_jwt_shaped(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 3
        && parts[..2].iter().all(|p| !p.is_empty())
        && parts.iter().all(|p| {
            p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_have_the_documented_format() {
        let k = PlaintextKey::generate();
        assert_eq!(k.expose().len(), 46);
        assert!(k.expose().starts_with("qk_"));
        assert_eq!(k.prefix(), &k.expose()[..11]);
        assert_eq!(PlaintextKey::parse(k.expose()), Some(k.clone()));
        assert_ne!(PlaintextKey::generate(), k);
        assert!(!format!("{k:?}").contains(k.expose()));
    }

    #[test]
    fn parse_refuses_anything_off_format() {
        let good = PlaintextKey::generate();
        let s = good.expose();
        for bad in [
            "",
            "qk_",
            &s[..45],
            &format!("{s}x"),
            &s.replacen("qk_", "qx_", 1),
            &format!("qk_{}", "-".repeat(43)),
        ] {
            assert!(PlaintextKey::parse(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn hash_is_sha256_hex_and_matches_itself_only() {
        let k = PlaintextKey::parse("qk_0000000000000000000000000000000000000000000").unwrap();
        let h = k.hash();
        assert_eq!(h.0.len(), 64);
        assert!(h.matches(&k.hash()));
        assert!(!h.matches(&PlaintextKey::generate().hash()));
    }

    #[test]
    fn jwt_shape_detection() {
        assert!(is_jwt_shaped("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig-_x"));
        assert!(!is_jwt_shaped("a.b"));
        assert!(!is_jwt_shaped("a..c"));
        assert!(!is_jwt_shaped("a.b.c.d"));
        assert!(!is_jwt_shaped("a.b c.d"));
    }
}
