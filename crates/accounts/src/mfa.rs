//! The second factor: TOTP (RFC 6238: HMAC-SHA-1, 6 digits, 30-second steps, one step of
//! clock skew either way), as every authenticator app understands it.
//!
//! The secret must be readable to check a code, so it is stored as is (base32); what the
//! store adds is the last step accepted, so that a code is accepted once (RFC 6238 §5.2).

use std::fmt;

use time::OffsetDateTime;
use totp_rs::{Builder, Secret, Totp};

/// The name authenticator apps show above the code.
pub const ISSUER: &str = "Quire";

/// A TOTP secret in base32 (RFC 4648, no padding). Its `Debug` is redacted.
#[derive(Clone, PartialEq, Eq)]
pub struct TotpSecret(String);

impl fmt::Debug for TotpSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TotpSecret(…)")
    }
}

impl TotpSecret {
    /// 160 random bits, the size RFC 4226 recommends.
    #[must_use]
    pub fn generate() -> Self {
        Self(Secret::generate().to_base32())
    }

    /// Reads a base32 secret of at least 128 bits (as typed back by a form, so spaces and
    /// case are forgiven); `None` otherwise.
    #[must_use]
    pub fn parse(base32: &str) -> Option<Self> {
        let cleaned: String = base32
            .chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| c.to_ascii_uppercase())
            .collect();
        let secret = Secret::try_from_base32(&cleaned).ok()?;
        (secret.len() >= 16).then(|| Self(secret.to_base32()))
    }

    #[must_use]
    pub fn expose(&self) -> &str {
        &self.0
    }

    fn totp(&self, account_name: &str) -> Option<Totp> {
        let secret = Secret::try_from_base32(&self.0).ok()?;
        Builder::new()
            .with_secret(secret)
            .with_issuer(Some(ISSUER))
            .with_account_name(account_name.replace(':', "_"))
            .build()
            .ok()
    }

    /// The `otpauth://` URI an authenticator app scans.
    #[must_use]
    pub fn otpauth_uri(&self, account_name: &str) -> String {
        self.totp(account_name)
            .and_then(|t| t.to_url().ok())
            .unwrap_or_default()
    }

    /// The step (30-second window number) `code` belongs to at `now`, within one step of
    /// skew; `None` when the code is wrong. Callers must still refuse a step already used.
    #[must_use]
    pub fn matching_step(&self, code: &str, now: OffsetDateTime) -> Option<u64> {
        let code: String = code.chars().filter(|c| !c.is_whitespace()).collect();
        let time = u64::try_from(now.unix_timestamp()).ok()?;
        self.totp("")?.check(&code, time)
    }

    /// The code at `now` (what an authenticator app would show; used by tests and tools).
    #[must_use]
    pub fn code_at(&self, now: OffsetDateTime) -> String {
        let time = u64::try_from(now.unix_timestamp()).unwrap_or(0);
        self.totp("")
            .map(|t| t.generate(time).to_string())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_within_one_step_of_skew_only() {
        let secret = TotpSecret::generate();
        let now = OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap();
        let code = secret.code_at(now);
        assert_eq!(code.len(), 6);
        let step = secret.matching_step(&code, now).unwrap();
        assert_eq!(step, 1_800_000_000 / 30);
        assert!(
            secret
                .matching_step(&code, now + time::Duration::seconds(30))
                .is_some()
        );
        assert!(
            secret
                .matching_step(&code, now + time::Duration::seconds(90))
                .is_none()
        );
        assert!(secret.matching_step("12345", now).is_none());
    }

    #[test]
    fn rfc_6238_vector() {
        // RFC 6238 appendix B: the ASCII secret "12345678901234567890", T = 59 s gives
        // 94287082 in 8 digits, so 287082 in 6.
        let secret = TotpSecret::parse("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ").unwrap();
        let at = OffsetDateTime::from_unix_timestamp(59).unwrap();
        assert_eq!(secret.code_at(at), "287082");
    }

    #[test]
    fn parse_forgives_spacing_and_case_but_not_short_secrets() {
        let s = TotpSecret::generate();
        let spaced = s.expose().to_lowercase().replace("", " ");
        assert_eq!(TotpSecret::parse(&spaced), Some(s.clone()));
        assert!(TotpSecret::parse("GEZDGNBV").is_none());
        assert!(TotpSecret::parse("not base32!").is_none());
        assert!(!format!("{s:?}").contains(s.expose()));
    }

    #[test]
    fn otpauth_uri_names_issuer_account_and_secret() {
        let s = TotpSecret::generate();
        let uri = s.otpauth_uri("ada@example.com");
        assert!(
            uri.starts_with("otpauth://totp/Quire:ada%40example.com?"),
            "{uri}"
        );
        assert!(uri.contains(&format!("secret={}", s.expose())), "{uri}");
        assert!(uri.contains("issuer=Quire"), "{uri}");
    }
}
