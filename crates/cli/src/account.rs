//! `quire account status` and `quire account activate`: where the account stands, and
//! activation with an invited phone number. The captcha is solved here, in process (the
//! ALTCHA proof of work the dashboard's widget does in a browser).

use std::time::Instant;

use base64::Engine as _;
use clap::Subcommand;
use reqwest::Method;
use serde_json::{Value, json};

use crate::api::{Api, Failure};
use crate::{Output, out};

pub(crate) const ACCOUNT: &str = "/api/account";
/// How long the proof of work may take before giving up (the challenge lasts 10 minutes).
const SOLVE_TIMEOUT_MS: u64 = 120_000;

#[derive(Debug, Subcommand)]
pub(crate) enum AccountCommand {
    /// Show the account and whether it is activated.
    Status,
    /// Activate the account with a phone number on the server's invitation list.
    Activate {
        /// The invited number, international: +44 7400 123456.
        #[arg(long)]
        phone: String,
    },
}

pub(crate) async fn run(api: &Api, cmd: AccountCommand) -> Result<Output, Failure> {
    match cmd {
        AccountCommand::Status => {
            let status = api.get(ACCOUNT).await?;
            let line = describe(&status);
            Ok(out(status, line))
        }
        AccountCommand::Activate { phone } => {
            let challenge = api.get(&format!("{ACCOUNT}/captcha")).await?;
            eprintln!("Solving the activation check…");
            let started = Instant::now();
            let captcha = tokio::task::spawn_blocking(move || solve(&challenge))
                .await
                .map_err(|e| Failure::local(format!("the solver stopped: {e}")))??;
            eprintln!("Solved in {:.1} s.", started.elapsed().as_secs_f64());
            let body = json!({ "captcha": captcha, "phone": phone });
            let status = api
                .call(Method::POST, &format!("{ACCOUNT}/activate"), Some(&body))
                .await?;
            let line = describe(&status);
            Ok(out(status, line))
        }
    }
}

fn describe(status: &Value) -> String {
    let handle = status["handle"].as_str().unwrap_or("-");
    match status["activatedAt"].as_str() {
        Some(at) if status["activated"] == true => format!("{handle}: activated since {at}"),
        _ => format!(
            "{handle}: not activated yet; run `quire account activate --phone +…` with a number \
             the operator invited"
        ),
    }
}

/// The payload the ALTCHA widget would submit: base64 JSON of the challenge and its solution.
fn solve(challenge: &Value) -> Result<String, Failure> {
    let challenge: altcha::Challenge = serde_json::from_value(challenge.clone())
        .map_err(|e| Failure::local(format!("the server's challenge is not ALTCHA: {e}")))?;
    let solution = altcha::solve_challenge(altcha::SolveChallengeOptions {
        timeout_ms: SOLVE_TIMEOUT_MS,
        ..altcha::SolveChallengeOptions::new(&challenge)
    })
    .map_err(|e| Failure::local(format!("cannot solve the challenge: {e}")))?
    .ok_or_else(|| Failure::local("the challenge was not solved within 2 minutes"))?;
    let payload = serde_json::to_vec(&altcha::Payload {
        challenge,
        solution,
    })
    .map_err(|e| Failure::local(e.to_string()))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(payload))
}
