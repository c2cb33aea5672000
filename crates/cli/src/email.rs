//! `quire email send`: a message through the server's relay, under the account's quota.

use clap::Subcommand;
use reqwest::Method;
use serde_json::json;

use crate::api::{Api, Failure};
use crate::{Output, PLATFORM, out};

#[derive(Debug, Subcommand)]
pub(crate) enum EmailCommand {
    /// Send one message (a master key; 10 per rolling 24 hours).
    Send {
        #[arg(long)]
        to: String,
        #[arg(long)]
        subject: String,
        /// The body.
        #[arg(
            long,
            conflicts_with = "text_file",
            required_unless_present = "text_file"
        )]
        text: Option<String>,
        /// A file holding the body (UTF-8).
        #[arg(long)]
        text_file: Option<std::path::PathBuf>,
    },
}

pub(crate) async fn run(api: &Api, cmd: EmailCommand) -> Result<Output, Failure> {
    let EmailCommand::Send {
        to,
        subject,
        text,
        text_file,
    } = cmd;
    let text = match (text, text_file) {
        (Some(text), _) => text,
        (None, Some(path)) => std::fs::read_to_string(&path)
            .map_err(|e| Failure::Local(format!("cannot read {}: {e}", path.display())))?,
        (None, None) => return Err(Failure::Local("give --text or --text-file".into())),
    };
    let body = json!({ "to": to, "subject": subject, "text": text });
    let sent = api
        .call(Method::POST, &format!("{PLATFORM}/email"), Some(&body))
        .await?;
    let line = format!(
        "Sent {} to {to}; {} left in the next 24 hours.",
        sent["mail_id"].as_str().unwrap_or("-"),
        sent["remaining_today"].as_u64().unwrap_or(0),
    );
    Ok(out(sent, line))
}
