//! `quire publish` and `quire pages …`: a directory published as a page with progress bars,
//! and the pages of the account.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use reqwest::Method;
use serde_json::{Map, Value, json};

use crate::api::{self, Api, Failure};
use crate::bundle;
use crate::{Output, PAGES, out, pretty, rows};

#[derive(Debug, Args, Default)]
pub(crate) struct PageFields {
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
pub(crate) struct PublishArgs {
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
pub(crate) enum PagesCommand {
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

pub(crate) async fn publish(api: &Api, args: PublishArgs) -> Result<Output, Failure> {
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
