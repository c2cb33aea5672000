//! Recovery codes: ten one-time codes handed out when the second factor is turned on, for
//! the day the authenticator app is lost. Each is 16 characters of base32 (80 random bits,
//! out of reach of guessing under the code attempt limit), shown once and stored as its
//! SHA-256, like every other credential.

use std::fmt;

use quire_kernel::secret::sha256_hex;
use rand::RngExt as _;

/// How many codes a set holds.
pub const RECOVERY_CODES: usize = 10;
const CODE_CHARS: usize = 16;
const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

/// A fresh set of codes, readable once. `Debug` shows only how many.
#[derive(Clone, PartialEq, Eq)]
pub struct RecoveryCodes(Vec<String>);

impl fmt::Debug for RecoveryCodes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RecoveryCodes({} codes)", self.0.len())
    }
}

impl RecoveryCodes {
    /// [`RECOVERY_CODES`] new codes, each grouped `xxxx-xxxx-xxxx-xxxx`.
    #[must_use]
    pub fn generate() -> Self {
        let mut rng = rand::rng();
        Self(
            (0..RECOVERY_CODES)
                .map(|_| {
                    let chars: Vec<u8> = (0..CODE_CHARS)
                        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())])
                        .collect();
                    chars
                        .chunks(4)
                        .map(|c| String::from_utf8_lossy(c).into_owned())
                        .collect::<Vec<_>>()
                        .join("-")
                })
                .collect(),
        )
    }

    /// The codes, for the one page that shows them.
    #[must_use]
    pub fn expose(&self) -> &[String] {
        &self.0
    }

    /// What the store keeps.
    #[must_use]
    pub fn hashes(&self) -> Vec<String> {
        self.0
            .iter()
            .filter_map(|c| recovery_code_hash(c))
            .collect()
    }
}

/// The stored hash of a code as a person types it (case, dashes and spaces forgiven);
/// `None` when it cannot be a recovery code at all.
#[must_use]
pub fn recovery_code_hash(typed: &str) -> Option<String> {
    let cleaned: String = typed
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .map(|c| c.to_ascii_lowercase())
        .collect();
    (cleaned.len() == CODE_CHARS && cleaned.bytes().all(|b| ALPHABET.contains(&b)))
        .then(|| sha256_hex(cleaned.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_distinct_codes_of_80_bits_each() {
        let codes = RecoveryCodes::generate();
        assert_eq!(codes.expose().len(), RECOVERY_CODES);
        let mut unique = codes.hashes();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), RECOVERY_CODES);
        for c in codes.expose() {
            assert_eq!(c.len(), 19, "{c}");
            assert_eq!(c.matches('-').count(), 3, "{c}");
        }
        assert!(!format!("{codes:?}").contains(&codes.expose()[0]));
    }

    #[test]
    fn typed_codes_forgive_case_dashes_and_spaces_only() {
        let codes = RecoveryCodes::generate();
        let code = &codes.expose()[3];
        let hash = recovery_code_hash(code).unwrap();
        assert!(codes.hashes().contains(&hash));
        let typed = format!(" {} ", code.replace('-', " ").to_uppercase());
        assert_eq!(recovery_code_hash(&typed), Some(hash));
        assert_eq!(recovery_code_hash("123456"), None);
        assert_eq!(recovery_code_hash("abcd-efgh-ijkl-mno1"), None);
        assert_eq!(recovery_code_hash("abcd-efgh-ijkl-mnopq"), None);
    }
}
