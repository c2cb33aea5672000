//! `quire oauth-clients …`: the OAuth client registry, for the platform admin account.

use clap::Subcommand;
use reqwest::Method;
use serde_json::{Value, json};

use crate::api::{Api, Failure};
use crate::{Output, PLATFORM, out, removed, rows};

#[derive(Debug, Subcommand)]
pub(crate) enum OAuthClientsCommand {
    List,
    /// Register a client; a confidential one's secret is shown once.
    Create {
        #[arg(long)]
        name: String,
        /// `confidential` (a server-side app with a secret) or `public` (a native app).
        #[arg(long = "type", default_value = "confidential")]
        client_type: String,
        /// A redirect URI; repeat for more (at most 10).
        #[arg(long = "redirect-uri", required = true)]
        redirect_uris: Vec<String>,
    },
    /// Delete a client: its tokens stop working, projects naming it forget it.
    Delete {
        id: String,
    },
    /// Give a confidential client a new secret (shown once); the old one stops working.
    RotateSecret {
        id: String,
    },
}

/// The text of a client as registered or rotated: its id, and the secret when there is one.
fn client_text(what: &str, client: &Value) -> String {
    let c = &client["client"];
    let mut text = format!(
        "{what} {} client {} ({}).",
        c["client_type"].as_str().unwrap_or("-"),
        c["client_id"].as_str().unwrap_or("-"),
        c["name"].as_str().unwrap_or("-"),
    );
    if let Some(secret) = c["client_secret"].as_str() {
        text.push_str(&format!(
            " Its secret is shown once; store it now:\n{secret}"
        ));
    }
    text
}

pub(crate) async fn run(api: &Api, cmd: OAuthClientsCommand) -> Result<Output, Failure> {
    let base = format!("{PLATFORM}/oauth-clients");
    Ok(match cmd {
        OAuthClientsCommand::List => {
            let list = api.get(&base).await?;
            let lines = rows(&list, "clients", |c| {
                let uris: Vec<&str> = c["redirect_uris"]
                    .as_array()
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                format!(
                    "{}  {:<12} {:<24} {}",
                    c["client_id"].as_str().unwrap_or("-"),
                    c["client_type"].as_str().unwrap_or("-"),
                    c["name"].as_str().unwrap_or("-"),
                    uris.join(" "),
                )
            });
            out(list, lines.join("\n"))
        }
        OAuthClientsCommand::Create {
            name,
            client_type,
            redirect_uris,
        } => {
            let body = json!({
                "name": name,
                "client_type": client_type,
                "redirect_uris": redirect_uris,
            });
            let created = api.call(Method::POST, &base, Some(&body)).await?;
            let text = client_text("Registered", &created);
            out(created, text)
        }
        OAuthClientsCommand::Delete { id } => {
            removed(
                api,
                &format!("{base}/{id}"),
                "deleted",
                &id,
                format!("Deleted {id}."),
            )
            .await?
        }
        OAuthClientsCommand::RotateSecret { id } => {
            let rotated = api
                .call(Method::POST, &format!("{base}/{id}/secret"), None)
                .await?;
            let text = client_text("Rotated the secret of", &rotated);
            out(rotated, text)
        }
    })
}
