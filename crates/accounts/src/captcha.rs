//! The activation captcha: an ALTCHA proof of work (PoW v2, PBKDF2/SHA-256) that the server
//! signs and verifies itself, with no third party.
//!
//! Challenges are made in ALTCHA's deterministic mode: the server picks the counter the
//! client must find, so solving costs on average half of [`CaptchaCost::max_counter`] key
//! derivations, and checking a solution is one HMAC. Each challenge carries, under its
//! signature, the action, the account and its own expiry ([`CHALLENGE_LIFETIME`], read from
//! Quire's clock rather than the library's, so it is testable); being single use is
//! recorded by the [`CaptchaLedger`](crate::ports::CaptchaLedger).

use std::collections::BTreeMap;

use altcha::{
    Challenge, CreateChallengeOptions, HmacAlgorithm, Payload, VerifySolutionOptions,
    create_challenge, verify_solution,
};
use base64::Engine as _;
use quire_kernel::AccountId;
use rand::RngExt as _;
use serde_json::Value;
use time::OffsetDateTime;

/// How long a challenge may be answered.
pub const CHALLENGE_LIFETIME: time::Duration = time::Duration::minutes(10);
/// The action the activation challenges are bound to.
pub const ACTIVATE: &str = "activate";
/// The longest captcha payload read (a solved challenge is about 600 bytes of base64).
pub const MAX_PAYLOAD_BYTES: usize = 4096;
const ALGORITHM: &str = "PBKDF2/SHA-256";

/// What solving a challenge costs the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaptchaCost {
    /// PBKDF2 iterations of each key derivation.
    pub iterations: u32,
    /// The counter to find is drawn from `0..max_counter`.
    pub max_counter: u32,
}

impl Default for CaptchaCost {
    /// About 2,500 derivations of 1,000 iterations on average: under a second in a
    /// browser's WebCrypto or the CLI's release build.
    fn default() -> Self {
        Self {
            iterations: 1_000,
            max_counter: 5_000,
        }
    }
}

/// The server's captcha secrets and cost.
#[derive(Clone)]
pub struct CaptchaKeys {
    /// Signs the challenge parameters.
    challenge_secret: String,
    /// Signs the key the client must derive (deterministic mode).
    key_secret: String,
    cost: CaptchaCost,
}

impl std::fmt::Debug for CaptchaKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CaptchaKeys")
            .field("cost", &self.cost)
            .finish_non_exhaustive()
    }
}

/// Why a captcha answer was refused; the text is the client's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CaptchaRefusal {
    #[error("captcha is missing")]
    Missing,
    #[error("captcha is not an ALTCHA solution payload (base64 JSON)")]
    Malformed,
    #[error("captcha solution is not right for its challenge")]
    Rejected,
    #[error("captcha challenge was not issued to this account for this action")]
    WrongBinding,
    #[error("captcha challenge expired; fetch a new one")]
    Expired,
    #[error("captcha solution was already used; fetch a new challenge")]
    AlreadyUsed,
}

/// A solution whose signature, work and binding check out, not yet spent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedSolution {
    /// What the single-use ledger records: the SHA-256 of the challenge's nonce.
    pub nonce_hash: String,
    pub expires_at: OffsetDateTime,
}

impl CaptchaKeys {
    /// Keys derived from one server secret (at least 32 bytes of randomness).
    #[must_use]
    pub fn new(secret: &str, cost: CaptchaCost) -> Self {
        Self {
            challenge_secret: quire_kernel::secret::sha256_hex(
                format!("altcha-challenge:{secret}").as_bytes(),
            ),
            key_secret: quire_kernel::secret::sha256_hex(format!("altcha-key:{secret}").as_bytes()),
            cost,
        }
    }

    /// A signed challenge for `account` to prove work for `action`, as the ALTCHA widget
    /// and `altcha::solve_challenge` read it.
    ///
    /// # Panics
    /// Never: the options are fixed and valid (a failure would be a library bug, and is
    /// reported as an empty challenge instead).
    #[must_use]
    pub fn challenge(&self, account: AccountId, action: &str, now: OffsetDateTime) -> Value {
        let counter = rand::rng().random_range(0..self.cost.max_counter.max(1));
        let data = BTreeMap::from([
            ("action".to_owned(), Value::from(action)),
            ("account".to_owned(), Value::from(account.0.to_string())),
            (
                "expires".to_owned(),
                Value::from((now + CHALLENGE_LIFETIME).unix_timestamp()),
            ),
        ]);
        let challenge = create_challenge(CreateChallengeOptions {
            algorithm: ALGORITHM.into(),
            counter: Some(counter),
            cost: self.cost.iterations,
            data: Some(data),
            hmac_signature_secret: Some(self.challenge_secret.clone()),
            hmac_key_signature_secret: Some(self.key_secret.clone()),
            ..CreateChallengeOptions::default()
        });
        challenge
            .ok()
            .and_then(|c| serde_json::to_value(c).ok())
            .unwrap_or(Value::Null)
    }

    /// Checks a payload (base64 JSON `{challenge, solution}`, as the widget submits it):
    /// signature, work, then that it was issued for `account` and `action` and has not
    /// expired at `now`. Being unused is the ledger's to check.
    ///
    /// # Errors
    /// See [`CaptchaRefusal`].
    pub fn check(
        &self,
        payload: &str,
        account: AccountId,
        action: &str,
        now: OffsetDateTime,
    ) -> Result<CheckedSolution, CaptchaRefusal> {
        let payload = payload.trim();
        if payload.is_empty() {
            return Err(CaptchaRefusal::Missing);
        }
        if payload.len() > MAX_PAYLOAD_BYTES {
            return Err(CaptchaRefusal::Malformed);
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(payload)
            .map_err(|_| CaptchaRefusal::Malformed)?;
        let Payload {
            challenge,
            solution,
        } = serde_json::from_slice(&bytes).map_err(|_| CaptchaRefusal::Malformed)?;
        let verdict = verify_solution(VerifySolutionOptions {
            challenge: &challenge,
            solution: &solution,
            hmac_signature_secret: self.challenge_secret.clone(),
            hmac_key_signature_secret: Some(self.key_secret.clone()),
            hmac_algorithm: HmacAlgorithm::Sha256,
            counter_mode: altcha::CounterMode::Uint32,
        })
        .map_err(|_| CaptchaRefusal::Rejected)?;
        if !verdict.verified {
            return Err(CaptchaRefusal::Rejected);
        }
        let expires_at = bound_to(&challenge, account, action)?;
        if now >= expires_at {
            return Err(CaptchaRefusal::Expired);
        }
        Ok(CheckedSolution {
            nonce_hash: quire_kernel::secret::sha256_hex(challenge.parameters.nonce.as_bytes()),
            expires_at,
        })
    }
}

/// The signed data's expiry, once its action and account are the expected ones.
fn bound_to(
    challenge: &Challenge,
    account: AccountId,
    action: &str,
) -> Result<OffsetDateTime, CaptchaRefusal> {
    let data = challenge
        .parameters
        .data
        .as_ref()
        .ok_or(CaptchaRefusal::WrongBinding)?;
    let field = |name: &str| data.get(name).and_then(Value::as_str);
    if field("action") != Some(action) || field("account") != Some(&account.0.to_string()) {
        return Err(CaptchaRefusal::WrongBinding);
    }
    data.get("expires")
        .and_then(Value::as_i64)
        .and_then(|t| OffsetDateTime::from_unix_timestamp(t).ok())
        .ok_or(CaptchaRefusal::WrongBinding)
}
