//! `quire projects …` and `quire keys …`: the platform API's projects and keys.

use clap::Subcommand;
use reqwest::Method;
use serde_json::{Value, json};

use crate::api::{Api, Failure};
use crate::{Output, PLATFORM, out, removed, rows};

#[derive(Debug, Subcommand)]
pub(crate) enum ProjectsCommand {
    List,
    Create {
        #[arg(long)]
        name: String,
        /// 3-30 of `a-z 0-9 _`, unique on the server.
        #[arg(long)]
        slug: String,
        #[arg(long, default_value = "default")]
        tag: String,
        #[arg(long, default_value = "gray")]
        color: String,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum KeysCommand {
    List,
    /// Mint an app key (shown once).
    Create {
        #[arg(long)]
        name: String,
        /// From `page`, `serve`, `link`, `base`; comma-separated.
        #[arg(long, value_delimiter = ',', required = true)]
        apps: Vec<String>,
        #[arg(long)]
        project: Option<String>,
    },
    Revoke {
        id: String,
    },
}

pub(crate) async fn projects(api: &Api, cmd: ProjectsCommand) -> Result<Output, Failure> {
    Ok(match cmd {
        ProjectsCommand::List => {
            let list = api.get(&format!("{PLATFORM}/projects")).await?;
            let lines = rows(&list, "projects", |p| {
                format!(
                    "{}  {:<30} {}",
                    p["id"].as_str().unwrap_or("-"),
                    p["slug"].as_str().unwrap_or("-"),
                    p["name"].as_str().unwrap_or("-"),
                )
            });
            out(list, lines.join("\n"))
        }
        ProjectsCommand::Create {
            name,
            slug,
            tag,
            color,
        } => {
            let created = api
                .call(
                    Method::POST,
                    &format!("{PLATFORM}/projects"),
                    Some(&json!({ "name": name, "slug": slug, "tag": tag, "color": color })),
                )
                .await?;
            let text = format!(
                "Created project {} ({}).",
                created["project"]["slug"].as_str().unwrap_or("-"),
                created["project"]["id"].as_str().unwrap_or("-"),
            );
            out(created, text)
        }
    })
}

pub(crate) async fn keys(api: &Api, cmd: KeysCommand) -> Result<Output, Failure> {
    Ok(match cmd {
        KeysCommand::List => {
            let list = api.get(&format!("{PLATFORM}/keys")).await?;
            let lines = rows(&list, "keys", |k| {
                format!(
                    "{}  {:<8} {:<24} {}",
                    k["id"].as_str().unwrap_or("-"),
                    k["tier"].as_str().unwrap_or("-"),
                    k["name"].as_str().unwrap_or("-"),
                    k["prefix"].as_str().unwrap_or(""),
                )
            });
            out(list, lines.join("\n"))
        }
        KeysCommand::Create {
            name,
            apps,
            project,
        } => {
            let mut body = json!({ "name": name, "apps": apps });
            if let Some(p) = project {
                body["project"] = Value::from(p);
            }
            let minted = api
                .call(Method::POST, &format!("{PLATFORM}/keys"), Some(&body))
                .await?;
            let text = format!(
                "Key {} created. It is shown once; store it now:\n{}",
                minted["keyId"].as_str().unwrap_or("-"),
                minted["key"].as_str().unwrap_or("-"),
            );
            out(minted, text)
        }
        KeysCommand::Revoke { id } => {
            removed(
                api,
                &format!("{PLATFORM}/keys/{id}"),
                "revoked",
                &id,
                format!("Revoked {id}."),
            )
            .await?
        }
    })
}
