//! `quire`: the command-line client of a Quire server.
//!
//! It speaks only the public HTTP API (no domain crate), so it is what any agent could
//! write: the RFC 8628 device login, then the page and platform APIs with the key it got.
//! Every command takes `--json`; `QUIRE_URL` and `QUIRE_KEY` override the stored login;
//! it never prompts, so it behaves the same with or without a terminal.

// Printing results is this binary's job.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod api;
mod bundle;
mod config;
mod email;
mod oauth_clients;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use reqwest::Method;
use serde_json::{Map, Value, json};

use crate::api::{Api, Failure};

const DEFAULT_SERVER: &str = "http://127.0.0.1:8080";
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
    /// Forget the stored key.
    Logout,
    /// Show the server and key in use, and check that the key works.
    Whoami,
    /// Publish a directory as a new page.
    Publish(PublishArgs),
    /// Manage pages.
    #[command(subcommand)]
    Pages(PagesCommand),
    /// Manage projects.
    #[command(subcommand)]
    Projects(ProjectsCommand),
    /// Manage API keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Manage OAuth clients (the platform admin account only).
    #[command(subcommand, name = "oauth-clients")]
    OAuthClients(oauth_clients::OAuthClientsCommand),
    /// Send email from the server's address, with your account as Reply-To.
    #[command(subcommand)]
    Email(email::EmailCommand),
}

#[derive(Debug, Args, Default)]
struct PageFields {
    /// `private`, `password`, `allow_list` or `public`.
    #[arg(long)]
    access: Option<String>,
    /// Required with `--access password`.
    #[arg(long)]
    password: Option<String>,
    /// RFC 3339 time after which the page is gone.
    #[arg(long)]
    expires_at: Option<String>,
    /// Views allowed before the page stops serving.
    #[arg(long)]
    max_views: Option<u64>,
    /// A custom short-link code.
    #[arg(long)]
    alias: Option<String>,
    /// Emails or handles allowed to view (`--access allow_list`); repeat or comma-separate.
    #[arg(long, value_delimiter = ',')]
    allow: Vec<String>,
}

impl PageFields {
    fn into_json(self, body: &mut Map<String, Value>) {
        let mut put = |k: &str, v: Option<Value>| {
            if let Some(v) = v {
                body.insert(k.to_owned(), v);
            }
        };
        put("access", self.access.map(Value::from));
        put("password", self.password.map(Value::from));
        put("expiresAt", self.expires_at.map(Value::from));
        put("maxViews", self.max_views.map(Value::from));
        put("alias", self.alias.map(Value::from));
        put(
            "allow",
            (!self.allow.is_empty()).then(|| Value::from(self.allow)),
        );
    }
}

#[derive(Debug, Args)]
struct PublishArgs {
    /// The site directory (its files keep their relative paths).
    dir: PathBuf,
    #[arg(long)]
    title: String,
    #[arg(long)]
    slug: Option<String>,
    /// The file served at the page's root (default `index.html`).
    #[arg(long)]
    entrypoint: Option<String>,
    /// Project slug (default: the key's home project).
    #[arg(long)]
    project: Option<String>,
    #[command(flatten)]
    fields: PageFields,
}

#[derive(Debug, Subcommand)]
enum PagesCommand {
    /// List pages.
    List {
        /// `active` (default) or `archived`.
        #[arg(long)]
        status: Option<String>,
        #[arg(long)]
        project: Option<String>,
    },
    /// Show one page.
    Get { id: String },
    /// Change a page's settings.
    Update {
        id: String,
        #[arg(long)]
        title: Option<String>,
        #[arg(long)]
        slug: Option<String>,
        #[command(flatten)]
        fields: PageFields,
    },
    /// Archive a page (it stops serving; restore brings it back).
    Archive { id: String },
    /// Restore an archived page.
    Restore { id: String },
    /// Delete a page, its files and its short link.
    Delete { id: String },
    /// List a page's files.
    Files { id: String },
    /// Add (or replace) files of a page from a directory.
    AddFiles { id: String, dir: PathBuf },
}

#[derive(Debug, Subcommand)]
enum ProjectsCommand {
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
enum KeysCommand {
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
        }) => {
            if json {
                println!("{body}");
            }
            eprintln!("error: {code}: {message} (HTTP {status})");
            ExitCode::FAILURE
        }
        Err(Failure::Local(message)) => {
            if json {
                println!("{}", json!({ "error": "client_error", "message": message }));
            }
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn api(cli_server: Option<&str>) -> Result<Api, Failure> {
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
        } => login(server, no_browser, &client_name, cli.json).await,
        Command::Logout => logout(),
        Command::Whoami => whoami(&api(server)?).await,
        Command::Publish(args) => publish(&api(server)?, args).await,
        Command::Pages(cmd) => pages(&api(server)?, cmd).await,
        Command::Projects(cmd) => projects(&api(server)?, cmd).await,
        Command::Keys(cmd) => keys(&api(server)?, cmd).await,
        Command::OAuthClients(cmd) => oauth_clients::run(&api(server)?, cmd).await,
        Command::Email(cmd) => email::run(&api(server)?, cmd).await,
    }
}

// ---------------------------------------------------------------------------------------
// Login

async fn login(
    server: Option<&str>,
    no_browser: bool,
    client_name: &str,
    json: bool,
) -> Result<Output, Failure> {
    let api = api(server)?;
    let start = api::read(
        api.http
            .post(api.url("/api/agent-login/device_authorization"))
            .json(&json!({ "client_name": client_name }))
            .send()
            .await?,
    )
    .await?;
    let field = |k: &str| start[k].as_str().unwrap_or_default().to_owned();
    let (device_code, user_code) = (field("device_code"), field("user_code"));
    let complete = field("verification_uri_complete");
    if device_code.is_empty() || complete.is_empty() {
        return Err(Failure::local(
            "the server's device login answer is incomplete",
        ));
    }
    let mut interval = start["interval"].as_u64().unwrap_or(5).max(1);
    if json {
        println!(
            "{}",
            json!({
                "verification_uri": start["verification_uri"],
                "verification_uri_complete": complete,
                "user_code": user_code,
                "expires_in": start["expires_in"],
            })
        );
    } else {
        println!("To sign in, open this link in a browser and approve:\n\n    {complete}\n");
        println!("Check that it shows the code {user_code}. Waiting for approval…");
    }
    let _ = std::io::stdout().flush();
    if !no_browser && std::io::stdout().is_terminal() {
        open_browser(&complete);
    }
    loop {
        tokio::time::sleep(Duration::from_secs(interval)).await;
        let resp = api
            .http
            .post(api.url("/api/agent-login/token"))
            .json(&json!({
                "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                "device_code": device_code,
            }))
            .send()
            .await?;
        match api::read(resp).await {
            Ok(token) => {
                let key = token["access_token"]
                    .as_str()
                    .ok_or_else(|| Failure::local("the server sent no access_token"))?;
                let path = config::save(&config::Stored {
                    server: Some(api.server.clone()),
                    key: Some(key.to_owned()),
                })
                .map_err(Failure::Local)?;
                return Ok(out(
                    json!({ "logged_in": true, "server": api.server, "config": path }),
                    format!(
                        "Logged in to {}. Key stored in {}.",
                        api.server,
                        path.display()
                    ),
                ));
            }
            Err(Failure::Api { code, .. }) if code == "authorization_pending" => {}
            Err(Failure::Api { code, body, .. }) if code == "slow_down" => {
                interval = body["interval"].as_u64().unwrap_or(interval + 5);
            }
            Err(Failure::Api {
                status,
                code,
                message,
                body,
            }) => {
                let message = match code.as_str() {
                    "access_denied" => "the sign-in was denied in the browser".to_owned(),
                    "expired_token" => {
                        "the sign-in request expired before it was approved; run `quire login` again"
                            .to_owned()
                    }
                    _ => message,
                };
                return Err(Failure::Api {
                    status,
                    code,
                    message,
                    body,
                });
            }
            Err(e) => return Err(e),
        }
    }
}

fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let _ = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}

fn logout() -> Result<Output, Failure> {
    let mut stored = config::load().map_err(Failure::Local)?;
    let had = stored.key.take().is_some();
    config::save(&stored).map_err(Failure::Local)?;
    Ok(out(
        json!({ "logged_out": had }),
        if had {
            "Logged out: the stored key is forgotten here. It stays valid on the server until \
             revoked (`quire keys revoke ID` from another key, or the dashboard)."
        } else {
            "Not logged in."
        },
    ))
}

async fn whoami(api: &Api) -> Result<Output, Failure> {
    let projects = api.get(&format!("{PLATFORM}/projects")).await?;
    let key = api.key.as_deref().unwrap_or_default();
    let prefix: String = key.chars().take(8).collect();
    let names = rows(&projects, "projects", |p| {
        p["slug"].as_str().unwrap_or("-").to_owned()
    });
    Ok(out(
        json!({ "server": api.server, "keyPrefix": prefix, "projects": projects["projects"] }),
        format!(
            "Server:   {}\nKey:      {prefix}…\nProjects: {}",
            api.server,
            names.join(", ")
        ),
    ))
}

// ---------------------------------------------------------------------------------------
// Publishing

fn bar(total: u64, what: &str) -> ProgressBar {
    // Drawn on stderr, and only when it is a terminal.
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{msg:10} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message(what.to_owned());
    bar
}

/// Reads and encodes the directory's files, with a progress bar over their bytes.
fn read_files(dir: &Path) -> Result<Vec<Value>, Failure> {
    let listed = bundle::list(dir).map_err(Failure::Local)?;
    let total: u64 = listed.iter().map(|f| f.2).sum();
    let progress = bar(total, "reading");
    let mut files = Vec::with_capacity(listed.len());
    for (relative, path, size) in &listed {
        files.push(bundle::encode(relative, path).map_err(Failure::Local)?);
        progress.inc(*size);
    }
    progress.finish_and_clear();
    Ok(files)
}

/// Sends a JSON body in chunks, advancing a progress bar as they go.
async fn upload(api: &Api, method: Method, path: &str, body: &Value) -> Result<Value, Failure> {
    let bytes =
        bytes::Bytes::from(serde_json::to_vec(body).map_err(|e| Failure::local(e.to_string()))?);
    let progress = bar(bytes.len() as u64, "uploading");
    const CHUNK: usize = 64 * 1024;
    let chunks: Vec<bytes::Bytes> = (0..bytes.len())
        .step_by(CHUNK)
        .map(|i| bytes.slice(i..(i + CHUNK).min(bytes.len())))
        .collect();
    let ticker = progress.clone();
    let stream = futures_util::stream::iter(chunks.into_iter().map(move |c| {
        ticker.inc(c.len() as u64);
        Ok::<_, std::io::Error>(c)
    }));
    let resp = api
        .request(method, path)?
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(reqwest::header::CONTENT_LENGTH, bytes.len())
        .body(reqwest::Body::wrap_stream(stream))
        .send()
        .await;
    progress.finish_and_clear();
    api::read(resp?).await
}

async fn publish(api: &Api, args: PublishArgs) -> Result<Output, Failure> {
    let files = read_files(&args.dir)?;
    let count = files.len();
    let mut body = Map::new();
    body.insert("title".into(), Value::from(args.title.clone()));
    body.insert("files".into(), Value::Array(files));
    if let Some(s) = args.slug {
        body.insert("slug".into(), Value::from(s));
    }
    if let Some(e) = args.entrypoint {
        body.insert("entrypoint".into(), Value::from(e));
    }
    if let Some(p) = args.project {
        body.insert("project".into(), Value::from(p));
    }
    args.fields.into_json(&mut body);
    let published = upload(api, Method::POST, PAGES, &Value::Object(body)).await?;
    let text = format!(
        "Published \"{}\" ({count} files, {} bytes)\nURL:       {}\nShort URL: {}\nPage id:   {}",
        args.title,
        published["sizeBytes"],
        published["url"].as_str().unwrap_or("-"),
        published["shortUrl"].as_str().unwrap_or("-"),
        published["id"].as_str().unwrap_or("-"),
    );
    Ok(out(published, text))
}

fn page_line(p: &Value) -> String {
    format!(
        "{}  {:<24} {:<10} {}",
        p["id"].as_str().unwrap_or("-"),
        p["slug"].as_str().unwrap_or("-"),
        p["access"].as_str().unwrap_or("-"),
        p["url"].as_str().unwrap_or("-"),
    )
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

async fn pages(api: &Api, cmd: PagesCommand) -> Result<Output, Failure> {
    let one = |id: &str| format!("{PAGES}/{id}");
    Ok(match cmd {
        PagesCommand::List { status, project } => {
            let mut query = Vec::new();
            if let Some(s) = &status {
                query.push(("status", s.as_str()));
            }
            if let Some(p) = &project {
                query.push(("project", p.as_str()));
            }
            let resp = api
                .request(Method::GET, PAGES)?
                .query(&query)
                .send()
                .await?;
            let list = api::read(resp).await?;
            let lines = rows(&list, "pages", page_line);
            let text = if lines.is_empty() {
                "No pages.".to_owned()
            } else {
                lines.join("\n")
            };
            out(list, text)
        }
        PagesCommand::Get { id } => {
            let page = api.get(&one(&id)).await?;
            let text = pretty(&page);
            out(page, text)
        }
        PagesCommand::Update {
            id,
            title,
            slug,
            fields,
        } => {
            let mut body = Map::new();
            if let Some(t) = title {
                body.insert("title".into(), Value::from(t));
            }
            if let Some(s) = slug {
                body.insert("slug".into(), Value::from(s));
            }
            fields.into_json(&mut body);
            if body.is_empty() {
                return Err(Failure::local(
                    "nothing to update: give at least one option",
                ));
            }
            let page = api
                .call(Method::PATCH, &one(&id), Some(&Value::Object(body)))
                .await?;
            let text = format!("Updated.\n{}", pretty(&page));
            out(page, text)
        }
        PagesCommand::Archive { id } => {
            let page = api
                .call(
                    Method::PATCH,
                    &one(&id),
                    Some(&json!({ "status": "archived" })),
                )
                .await?;
            out(page, format!("Archived {id}."))
        }
        PagesCommand::Restore { id } => {
            let page = api
                .call(
                    Method::PATCH,
                    &one(&id),
                    Some(&json!({ "status": "active" })),
                )
                .await?;
            out(page, format!("Restored {id}."))
        }
        PagesCommand::Delete { id } => {
            let gone = api.call(Method::DELETE, &one(&id), None).await?;
            out(
                if gone.is_null() {
                    json!({ "deleted": id })
                } else {
                    gone
                },
                format!("Deleted {id}."),
            )
        }
        PagesCommand::Files { id } => {
            let files = api.get(&format!("{}/files", one(&id))).await?;
            let lines = rows(&files, "files", |f| {
                format!(
                    "{:>10}  {}",
                    f["sizeBytes"].as_u64().unwrap_or(0),
                    f["path"].as_str().unwrap_or("-")
                )
            });
            out(files, lines.join("\n"))
        }
        PagesCommand::AddFiles { id, dir } => {
            let files = read_files(&dir)?;
            let count = files.len();
            let added = upload(
                api,
                Method::POST,
                &format!("{}/files", one(&id)),
                &json!({ "files": files }),
            )
            .await?;
            out(added, format!("Added {count} files to {id}."))
        }
    })
}

async fn projects(api: &Api, cmd: ProjectsCommand) -> Result<Output, Failure> {
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

async fn keys(api: &Api, cmd: KeysCommand) -> Result<Output, Failure> {
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
