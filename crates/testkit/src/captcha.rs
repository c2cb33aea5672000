//! An ALTCHA solver for tests: what the dashboard's widget does in a browser and `quire
//! account activate` does in process, so tests can answer the server's challenges.

use base64::Engine as _;
use serde_json::Value;

/// Solves a challenge as the ALTCHA widget does, and encodes the payload it would submit.
///
/// # Errors
/// A message when the challenge is not an ALTCHA challenge or is not solved within
/// `timeout_ms`.
pub fn solve(challenge: &Value, timeout_ms: u64) -> Result<String, String> {
    let challenge: altcha::Challenge =
        serde_json::from_value(challenge.clone()).map_err(|e| format!("not a challenge: {e}"))?;
    let solution = altcha::solve_challenge(altcha::SolveChallengeOptions {
        timeout_ms,
        ..altcha::SolveChallengeOptions::new(&challenge)
    })
    .map_err(|e| e.to_string())?
    .ok_or_else(|| format!("the challenge was not solved within {timeout_ms} ms"))?;
    let payload = serde_json::to_vec(&altcha::Payload {
        challenge,
        solution,
    })
    .map_err(|e| e.to_string())?;
    Ok(base64::engine::general_purpose::STANDARD.encode(payload))
}
