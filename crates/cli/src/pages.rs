//! `quire pages …`: the pages of the account, each named by its id, slug or short-link code,
//! and the progress-bar upload that `publish` shares.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use reqwest::Method;
use serde_json::{Map, Value, json};

use crate::api::{self, Api, Failure};
use crate::page_update::{self, UpdateArgs};
use crate::{Output, PAGES, bundle, out, page_ref, pretty, rows};

#[derive(Debug, Args, Default)]
pub(crate) struct PageFields {
    /// `private`, `password`, `allow_list` or `public`.
    #[arg(long)]
    access: Option<String>,
    /// Required with `--access password`.
    #[arg(long)]
    password: Option<String>,
    /// When the page is gone: an RFC 3339 time, or from now `7d`, `12h`, `30m`.
    #[arg(long, visible_alias = "expires")]
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
    /// The slug of one of your databases in the page's project: the page finds its data
    /// API's URL and anon key at `/-/db.json` on its origin.
    #[arg(long)]
    database: Option<String>,
}

impl PageFields {
    /// Whether any setting was given.
    pub(crate) fn any(&self) -> bool {
        self.access.is_some()
            || self.password.is_some()
            || self.expires_at.is_some()
            || self.max_views.is_some()
            || self.alias.is_some()
            || !self.allow.is_empty()
            || self.database.is_some()
    }

    pub(crate) fn into_json(self, body: &mut Map<String, Value>) -> Result<(), Failure> {
        let expires_at = self
            .expires_at
            .as_deref()
            .map(page_update::expiry)
            .transpose()?;
        let mut put = |k: &str, v: Option<Value>| {
            if let Some(v) = v {
                body.insert(k.to_owned(), v);
            }
        };
        put("access", self.access.map(Value::from));
        put("password", self.password.map(Value::from));
        put("expiresAt", expires_at.map(Value::from));
        put("maxViews", self.max_views.map(Value::from));
        put("alias", self.alias.map(Value::from));
        put(
            "allow",
            (!self.allow.is_empty()).then(|| Value::from(self.allow)),
        );
        put("database", self.database.map(Value::from));
        Ok(())
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum PagesCommand {
    /// List pages.
    List {
        /// `active` (default) or `archived`.
        #[arg(long)]
        status: Option<String>,
        #[arg(long)]
        project: Option<String>,
    },
    /// Show one page (by id, slug or short-link code, as every command below).
    Get { page: String },
    /// Change a page's settings.
    Update(UpdateArgs),
    /// Archive a page (it stops serving; restore brings it back).
    Archive { page: String },
    /// Restore an archived page.
    Restore { page: String },
    /// Delete a page, its files and its short link (asks first on a terminal).
    Delete {
        page: String,
        /// Delete without asking (needed when standard input is not a terminal).
        #[arg(long, short)]
        yes: bool,
    },
    /// List a page's files.
    Files { page: String },
    /// Add (or replace) files of a page from a directory.
    AddFiles { page: String, dir: PathBuf },
}

pub(crate) fn bar(total: u64, what: &str) -> ProgressBar {
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
pub(crate) fn read_files(dir: &Path) -> Result<Vec<Value>, Failure> {
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
pub(crate) async fn upload(
    api: &Api,
    method: Method,
    path: &str,
    body: &Value,
) -> Result<Value, Failure> {
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

pub(crate) fn page_line(p: &Value) -> String {
    format!(
        "{}  {:<24} {:<10} {}",
        p["id"].as_str().unwrap_or("-"),
        p["slug"].as_str().unwrap_or("-"),
        p["access"].as_str().unwrap_or("-"),
        p["url"].as_str().unwrap_or("-"),
    )
}

pub(crate) async fn pages(api: &Api, cmd: PagesCommand) -> Result<Output, Failure> {
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
        PagesCommand::Update(args) => return page_update::update(api, args).await,
        PagesCommand::Get { page } => {
            let id = page_ref::resolve(api, &page).await?;
            let page = api.get(&one(&id)).await?;
            let text = pretty(&page);
            out(page, text)
        }
        PagesCommand::Archive { page } => {
            let id = page_ref::resolve(api, &page).await?;
            let archived = json!({ "status": "archived" });
            let page = api.call(Method::PATCH, &one(&id), Some(&archived)).await?;
            out(page, format!("Archived {id}."))
        }
        PagesCommand::Restore { page } => {
            let id = page_ref::resolve(api, &page).await?;
            let active = json!({ "status": "active" });
            let page = api.call(Method::PATCH, &one(&id), Some(&active)).await?;
            out(page, format!("Restored {id}."))
        }
        PagesCommand::Delete { page, yes } => {
            if !yes {
                confirm_delete(&page)?;
            }
            let id = page_ref::resolve(api, &page).await?;
            let gone = api.call(Method::DELETE, &one(&id), None).await?;
            out(
                if gone.is_null() {
                    json!({ "deleted": id })
                } else {
                    gone
                },
                format!("Deleted {page}."),
            )
        }
        PagesCommand::Files { page } => {
            let id = page_ref::resolve(api, &page).await?;
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
        PagesCommand::AddFiles { page, dir } => {
            let files = read_files(&dir)?;
            let count = files.len();
            let id = page_ref::resolve(api, &page).await?;
            let added = upload(
                api,
                Method::POST,
                &format!("{}/files", one(&id)),
                &json!({ "files": files }),
            )
            .await?;
            out(added, format!("Added {count} files to {page}."))
        }
    })
}

/// Asks on a terminal; without one, refuses, since nobody is there to say yes.
fn confirm_delete(page: &str) -> Result<(), Failure> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(Failure::Refused(format!(
            "not deleting {page}: standard input is not a terminal, so confirm with --yes"
        )));
    }
    eprint!("Delete page {page}? [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    stdin
        .lock()
        .read_line(&mut answer)
        .map_err(|e| Failure::local(format!("cannot read the answer: {e}")))?;
    if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        Ok(())
    } else {
        Err(Failure::Refused(format!("not deleting {page}")))
    }
}
