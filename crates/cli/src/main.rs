//! `quire`: the command-line client of a Quire server.
//!
//! It speaks only the public HTTP API (no domain crate), so it is what any agent could
//! write: the RFC 8628 device login, then the page and platform APIs with the key it got.
//! Every command takes `--json`; `QUIRE_URL` and `QUIRE_KEY` override the stored login.
//! The one question it asks is before `pages delete` and `db delete`, on a terminal only;
//! elsewhere that needs `--yes` (exit code 2 without it). By concern: `login` (device login, logout,
//! whoami), `publish`, `pages` (with `page_ref`, naming a page, and `page_update`), `links`,
//! `objects` (`upload` and `objects`), `databases` (`db`: databases, their SQL and data API),
//! `platform` (projects and keys), `oauth_clients`, `email`, `mcp` (the MCP endpoint and
//! client configurations); `api`, `bundle` and `config` beneath them.

// Printing results is this binary's job.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod account;
mod api;
mod bundle;
mod config;
mod databases;
mod email;
mod links;
mod login;
mod mcp;
mod oauth_clients;
mod objects;
mod page_ref;
mod page_update;
mod pages;
mod platform;
mod publish;
mod remembered;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use reqwest::Method;
use serde_json::{Value, json};

use crate::api::{Api, Failure};

pub(crate) const DEFAULT_SERVER: &str = "http://127.0.0.1:8080";
const PAGES: &str = "/api/page/v1/pages";
const PLATFORM: &str = "/api/platform/v1";

#[derive(Debug, Parser)]
#[command(
    name = "quire",
    version,
    about = "Publish static sites to a Quire server"
)]
struct Cli {
    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    json: bool,
    /// Server URL (default: the stored login's, else http://127.0.0.1:8080).
    #[arg(long, global = true, env = "QUIRE_URL")]
    server: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Sign in through the browser (device login) and store a master key.
    Login {
        /// Do not try to open a browser; just print the link.
        #[arg(long)]
        no_browser: bool,
        /// The name the consent screen shows for this client.
        #[arg(long, default_value = "quire-cli")]
        client_name: String,
    },
    /// Revoke the stored key on the server and forget it here.
    Logout,
    /// Show the server, the account (handle and email) and key in use, and check the key.
    Whoami,
    /// Publish a directory as a page; again, to replace that page's files at the same URL.
    Publish(publish::PublishArgs),
    /// Manage pages.
    #[command(subcommand)]
    Pages(pages::PagesCommand),
    /// Upload a file as an object: its own URL and short link, under the pages' policies.
    Upload(objects::UploadArgs),
    /// Manage objects (uploaded files).
    #[command(subcommand)]
    Objects(objects::ObjectsCommand),
    /// Shorten URLs: links under the same policies as pages.
    #[command(subcommand)]
    Links(links::LinksCommand),
    /// PostgreSQL databases of your own: SQL, and a data API for Supabase's clients.
    #[command(subcommand, name = "db", visible_alias = "databases")]
    Db(databases::DbCommand),
    /// Manage projects.
    #[command(subcommand)]
    Projects(platform::ProjectsCommand),
    /// Manage API keys.
    #[command(subcommand)]
    Keys(platform::KeysCommand),
    /// Manage OAuth clients (the platform admin account only).
    #[command(subcommand, name = "oauth-clients")]
    OAuthClients(oauth_clients::OAuthClientsCommand),
    /// Send email from the server's address, with your account as Reply-To.
    #[command(subcommand)]
    Email(email::EmailCommand),
    /// Your account: its status, and activation with an invited phone number.
    #[command(subcommand)]
    Account(account::AccountCommand),
    /// Print the server's MCP endpoint and client configurations to paste (Claude Code,
    /// an mcpServers entry); nothing is sent to the server.
    Mcp {
        /// Put the stored API key in the configurations (an Authorization header) instead of
        /// signing in through the browser. Prints the key.
        #[arg(long)]
        key: bool,
    },
}

/// What a command prints on success: JSON for `--json`, else the text.
struct Output {
    json: Value,
    text: String,
}

fn out(json: Value, text: impl Into<String>) -> Output {
    Output {
        json,
        text: text.into(),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let json = cli.json;
    match run(cli).await {
        Ok(o) => {
            if json {
                println!("{}", o.json);
            } else if !o.text.is_empty() {
                println!("{}", o.text.trim_end());
            }
            ExitCode::SUCCESS
        }
        Err(Failure::Api {
            status,
            code,
            message,
            body,
            text,
        }) => {
            if json {
                println!("{body}");
            }
            match text {
                Some(text) => eprintln!("{text}"),
                None => eprintln!("error: {code}: {message} (HTTP {status})"),
            }
            ExitCode::FAILURE
        }
        Err(Failure::Local(message)) => {
            if json {
                println!("{}", json!({ "error": "client_error", "message": message }));
            }
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
        Err(Failure::Refused(message)) => {
            if json {
                println!(
                    "{}",
                    json!({ "error": "not_confirmed", "message": message })
                );
            }
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

pub(crate) fn api(cli_server: Option<&str>) -> Result<Api, Failure> {
    let stored = config::load().map_err(Failure::Local)?;
    let server = cli_server
        .map(str::to_owned)
        .or(stored.server)
        .unwrap_or_else(|| DEFAULT_SERVER.to_owned());
    let key = std::env::var("QUIRE_KEY")
        .ok()
        .filter(|k| !k.is_empty())
        .or(stored.key);
    Api::new(&server, key)
}

async fn run(cli: Cli) -> Result<Output, Failure> {
    let server = cli.server.as_deref();
    match cli.command {
        Command::Login {
            no_browser,
            client_name,
        } => login::login(server, no_browser, &client_name, cli.json).await,
        Command::Logout => login::logout(server).await,
        Command::Whoami => login::whoami(&api(server)?).await,
        Command::Publish(args) => publish::publish(&api(server)?, args).await,
        Command::Pages(cmd) => pages::pages(&api(server)?, cmd).await,
        Command::Links(cmd) => links::links(&api(server)?, cmd).await,
        Command::Upload(args) => objects::upload(&api(server)?, args).await,
        Command::Objects(cmd) => objects::objects(&api(server)?, cmd).await,
        Command::Db(cmd) => databases::run(&api(server)?, cmd).await,
        Command::Projects(cmd) => platform::projects(&api(server)?, cmd).await,
        Command::Keys(cmd) => platform::keys(&api(server)?, cmd).await,
        Command::OAuthClients(cmd) => oauth_clients::run(&api(server)?, cmd).await,
        Command::Account(cmd) => account::run(&api(server)?, cmd).await,
        Command::Email(cmd) => email::run(&api(server)?, cmd).await,
        Command::Mcp { key } => mcp::mcp(&api(server)?, key),
    }
}

/// One text line per element of the array `field` of a list answer.
fn rows(list: &Value, field: &str, line: impl Fn(&Value) -> String) -> Vec<String> {
    list[field]
        .as_array()
        .map(|items| items.iter().map(line).collect())
        .unwrap_or_default()
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// Sends a `DELETE` that answers 204, and reports it as `{ field: id }` (or the body, should
/// the server send one) and as `text`.
async fn removed(
    api: &Api,
    path: &str,
    field: &str,
    id: &str,
    text: String,
) -> Result<Output, Failure> {
    let gone = api.call(Method::DELETE, path, None).await?;
    let json = if gone.is_null() {
        json!({ field: id })
    } else {
        gone
    };
    Ok(out(json, text))
}
