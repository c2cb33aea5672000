//! The two codes of a device grant.

use rand::RngExt;

const USER_ALPHABET: &[u8; 20] = b"BCDFGHJKLMNPQRSTVWXZ";

/// The code a person types: 8 consonants, shown `XXXX-XXXX`, matched ignoring case, spaces
/// and dashes. It can never claim a key; it only names a grant to approve or deny.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UserCode(String);

impl UserCode {
    #[must_use]
    pub fn generate() -> Self {
        let mut rng = rand::rng();
        Self(
            (0..8)
                .map(|_| char::from(USER_ALPHABET[rng.random_range(0..USER_ALPHABET.len())]))
                .collect(),
        )
    }

    /// Normalises what a person typed; `None` unless it is 8 letters of the alphabet.
    #[must_use]
    pub fn parse(typed: &str) -> Option<Self> {
        let letters: String = typed
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '-')
            .map(|c| c.to_ascii_uppercase())
            .collect();
        (letters.len() == 8 && letters.bytes().all(|b| USER_ALPHABET.contains(&b)))
            .then_some(Self(letters))
    }

    /// The stored form: 8 letters, no dash.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The displayed form: `XXXX-XXXX`.
    #[must_use]
    pub fn display(&self) -> String {
        format!("{}-{}", &self.0[..4], &self.0[4..])
    }
}

/// The device code's purpose: the secret the agent polls with.
#[derive(Debug)]
pub enum PollSecret {}

impl quire_kernel::secret::TokenPurpose for PollSecret {
    const NAME: &'static str = "DeviceCode";
}

/// The secret the agent polls with: 32 random bytes, base64url. Stored only as SHA-256.
pub type DeviceCode = quire_kernel::secret::OpaqueToken<PollSecret>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_codes_are_8_consonants_and_match_loosely() {
        let code = UserCode::generate();
        assert_eq!(code.as_str().len(), 8);
        assert!(code.as_str().bytes().all(|b| USER_ALPHABET.contains(&b)));
        let shown = code.display();
        assert_eq!(&shown[4..5], "-");
        assert_eq!(UserCode::parse(&shown), Some(code.clone()));
        let sloppy = format!(" {} - {} ", shown[..4].to_lowercase(), &shown[5..]);
        assert_eq!(UserCode::parse(&sloppy), Some(code));
        for bad in ["", "BCDF-GHJ", "BCDF-GHJKL", "AEIO-UBCD", "BCDF-GHJ1"] {
            assert_eq!(UserCode::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn device_codes_are_256_bits_and_hashed() {
        let d = DeviceCode::generate();
        assert_eq!(d.expose().len(), 43);
        assert_ne!(DeviceCode::generate(), d);
        assert_eq!(d.hash().len(), 64);
        assert_eq!(DeviceCode::received(d.expose()).hash(), d.hash());
        assert!(!format!("{d:?}").contains(d.expose()));
    }
}
