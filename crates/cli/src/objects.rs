//! `quire upload FILE` and `quire objects …`: single files of any size (`/api/object/v1`),
//! streamed from disk with a progress bar, never read whole; each object named by its id,
//! slug, alias or public id.

use std::path::{Path, PathBuf};

use bytes::BytesMut;
use clap::{Args, Subcommand};
use futures_util::StreamExt;
use reqwest::Method;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::api::{Api, Failure, read};
use crate::links::serde_urlencoded_pairs;
use crate::{Output, out, page_update, pages, pretty, removed, rows};

const OBJECTS: &str = "/api/object/v1/objects";
/// How much of the file is read and sent at a time.
const PIECE: usize = 256 * 1024;

#[derive(Debug, Args, Default)]
pub(crate) struct ObjectFields {
    #[arg(long)]
    title: Option<String>,
    /// Its address on your origin (default: from the title).
    #[arg(long)]
    slug: Option<String>,
    /// `private` (default), `public`, `password` or `allow_list`.
    #[arg(long)]
    access: Option<String>,
    /// Sets `--access password` unless another access is given.
    #[arg(long)]
    password: Option<String>,
    /// Emails or handles allowed to download it (`allow_list`); repeat or comma-separate.
    #[arg(long, value_delimiter = ',')]
    allow: Vec<String>,
    /// When it stops being served: an RFC 3339 time, or from now `7d`, `12h`, `30m`.
    #[arg(long, visible_alias = "expires")]
    expires_at: Option<String>,
    /// Downloads people may make (previews never spend one).
    #[arg(long)]
    max_views: Option<u64>,
    /// A custom short code (3-64 of A-Z a-z 0-9 _ -).
    #[arg(long)]
    alias: Option<String>,
}

impl ObjectFields {
    /// The fields as `(name, text)` pairs, as the raw upload's query takes them.
    fn pairs(self) -> Result<Vec<(&'static str, String)>, Failure> {
        let expires_at = self
            .expires_at
            .as_deref()
            .map(page_update::expiry)
            .transpose()?;
        let access = self
            .access
            .or_else(|| self.password.as_ref().map(|_| "password".to_owned()));
        let mut q = Vec::new();
        q.extend(self.title.map(|v| ("title", v)));
        q.extend(self.slug.map(|v| ("slug", v)));
        q.extend(access.map(|v| ("access", v)));
        q.extend(self.password.map(|v| ("password", v)));
        if !self.allow.is_empty() {
            q.push(("allow", self.allow.join(",")));
        }
        q.extend(expires_at.map(|v| ("expiresAt", v)));
        q.extend(self.max_views.map(|v| ("maxViews", v.to_string())));
        q.extend(self.alias.map(|v| ("alias", v)));
        Ok(q)
    }

    /// The fields as a PATCH body.
    fn into_json(self, body: &mut Map<String, Value>) -> Result<(), Failure> {
        for (name, value) in self.pairs()? {
            let value = match name {
                "maxViews" => Value::from(value.parse::<u64>().unwrap_or_default()),
                "allow" => {
                    Value::from(value.split(',').map(str::to_owned).collect::<Vec<String>>())
                }
                _ => Value::from(value),
            };
            body.insert(name.to_owned(), value);
        }
        Ok(())
    }
}

#[derive(Debug, Args)]
pub(crate) struct UploadArgs {
    file: PathBuf,
    #[command(flatten)]
    fields: ObjectFields,
    #[arg(long)]
    project: Option<String>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ObjectsCommand {
    /// List objects.
    List {
        /// `active` or `archived` (default both).
        #[arg(long)]
        status: Option<String>,
        #[arg(long)]
        project: Option<String>,
    },
    /// Show one object (by id, slug, alias or public id, as every command below).
    Get { object: String },
    /// Change an object's name, address or policy; its bytes and counts stay.
    Update {
        object: String,
        #[command(flatten)]
        fields: Box<ObjectFields>,
        /// What a download is saved as.
        #[arg(long)]
        filename: Option<String>,
        /// `active` or `archived`.
        #[arg(long)]
        status: Option<String>,
    },
    /// Give an object new bytes: its URL, short link, policy and counts stay.
    Replace { object: String, file: PathBuf },
    /// Save an object's bytes (as its owner: no view is counted).
    Download {
        object: String,
        /// Where to write (default: its file name, in this directory).
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Delete an object: its bytes, short link and counts.
    Delete { object: String },
}

/// The object named by its id, or else by a slug, alias or public id among the account's.
async fn find(api: &Api, name: &str) -> Result<Value, Failure> {
    if name.len() == 36 && name.chars().filter(|c| *c == '-').count() == 4 {
        return api.get(&format!("{OBJECTS}/{name}")).await;
    }
    let list = api.get(OBJECTS).await?;
    list["objects"]
        .as_array()
        .and_then(|objects| {
            objects
                .iter()
                .find(|o| o["slug"] == name || o["alias"] == name || o["public_id"] == name)
        })
        .cloned()
        .ok_or_else(|| {
            Failure::local(format!(
                "no object of yours is named {name:?} in your key's project (give its id)"
            ))
        })
}

fn id_of(object: &Value) -> Result<String, Failure> {
    object["id"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| Failure::local("the server's answer has no object id"))
}

fn line(o: &Value) -> String {
    let budget = match o["maxViews"].as_u64() {
        Some(max) => format!("{}/{max}", o["viewCount"]),
        None => o["viewCount"].to_string(),
    };
    format!(
        "{}  {}  {}  {} bytes  {} downloads  {}",
        o["url"].as_str().unwrap_or(""),
        o["access"].as_str().unwrap_or(""),
        o["filename"].as_str().unwrap_or(""),
        o["sizeBytes"],
        budget,
        o["id"].as_str().unwrap_or(""),
    )
}

/// A failed send, and whether every byte of the file had gone out (only then can the
/// server have made the object: it takes an upload once it has all of it).
struct NotSent {
    failure: Failure,
    whole: bool,
}

impl From<Failure> for NotSent {
    fn from(failure: Failure) -> Self {
        Self {
            failure,
            whole: false,
        }
    }
}

/// Sends `file` as the raw body of `method path`, a piece at a time, with a progress bar.
async fn send_file(api: &Api, method: Method, path: &str, file: &Path) -> Result<Value, Failure> {
    send_counted(api, method, path, file)
        .await
        .map_err(|e| e.failure)
}

async fn send_counted(
    api: &Api,
    method: Method,
    path: &str,
    file: &Path,
) -> Result<Value, NotSent> {
    let opened = tokio::fs::File::open(file)
        .await
        .map_err(|e| Failure::local(format!("{}: {e}", file.display())))?;
    let size = opened
        .metadata()
        .await
        .map_err(|e| Failure::local(format!("{}: {e}", file.display())))?
        .len();
    let progress = pages::bar(size, "uploading");
    let shown = progress.clone();
    let read_out = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counted = read_out.clone();
    let pieces = futures_util::stream::unfold(opened, move |mut f| {
        let (shown, counted) = (shown.clone(), counted.clone());
        async move {
            let mut buf = BytesMut::zeroed(PIECE);
            match f.read(&mut buf).await {
                Ok(0) => None,
                Ok(n) => {
                    buf.truncate(n);
                    shown.inc(n as u64);
                    counted.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
                    Some((Ok::<_, std::io::Error>(buf.freeze()), f))
                }
                Err(e) => Some((Err(e), f)),
            }
        }
    });
    let sent = api
        .request(method, path)?
        .header(reqwest::header::CONTENT_LENGTH, size)
        .body(reqwest::Body::wrap_stream(pieces))
        .send()
        .await;
    progress.finish_and_clear();
    let whole = read_out.load(std::sync::atomic::Ordering::Relaxed) >= size;
    let answered = match sent {
        Ok(resp) => read(resp).await,
        Err(e) => Err(e.into()),
    };
    answered.map_err(|failure| NotSent { failure, whole })
}

/// Attempts of an upload before it gives up, and the wait before the first retry (doubled
/// after each).
const ATTEMPTS: u32 = 4;
const FIRST_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// Worth another attempt: the network, or the server failing or busy.
fn retryable(failure: &Failure) -> bool {
    match failure {
        Failure::Local(_) => true,
        Failure::Api { status, .. } => *status >= 500 || *status == 429,
        Failure::Refused(_) => false,
    }
}

/// The ids of the objects of the upload's project, before it starts.
async fn object_ids(api: &Api, list_path: &str) -> Result<Vec<String>, Failure> {
    let list = api.get(list_path).await?;
    Ok(list["objects"]
        .as_array()
        .map(|objects| {
            objects
                .iter()
                .filter_map(|o| o["id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default())
}

/// The object an attempt made though its answer was lost: one not listed before the upload,
/// of the same file name and size.
async fn landed(
    api: &Api,
    list_path: &str,
    before: &[String],
    filename: &str,
    size: u64,
) -> Result<Option<Value>, Failure> {
    let list = api.get(list_path).await?;
    Ok(list["objects"].as_array().and_then(|objects| {
        objects
            .iter()
            .find(|o| {
                o["id"]
                    .as_str()
                    .is_some_and(|id| !before.iter().any(|b| b == id))
                    && o["filename"] == filename
                    && o["sizeBytes"].as_u64() == Some(size)
            })
            .cloned()
    }))
}

/// Uploads with retries that never make a second object: a failure before the last byte
/// went out is retried as is; after it, the object is looked for first (the answer may be
/// what was lost), and the upload is sent again only if it is not there.
async fn upload_with_retries(
    api: &Api,
    path: &str,
    list_path: &str,
    file: &Path,
    filename: &str,
) -> Result<Value, Failure> {
    let size = tokio::fs::metadata(file)
        .await
        .map_err(|e| Failure::local(format!("{}: {e}", file.display())))?
        .len();
    let before = object_ids(api, list_path).await?;
    let mut wait = FIRST_WAIT;
    let mut attempt = 1;
    loop {
        let failure = match send_counted(api, Method::PUT, path, file).await {
            Ok(object) => return Ok(object),
            Err(NotSent { failure, whole }) => {
                if whole
                    && let Ok(Some(object)) = landed(api, list_path, &before, filename, size).await
                {
                    return Ok(object);
                }
                failure
            }
        };
        if attempt >= ATTEMPTS || !retryable(&failure) {
            return Err(failure);
        }
        eprintln!(
            "upload failed ({}); trying again in {:.1} s ({}/{ATTEMPTS})",
            describe(&failure),
            wait.as_secs_f64(),
            attempt + 1
        );
        tokio::time::sleep(wait).await;
        wait *= 2;
        attempt += 1;
    }
}

fn describe(failure: &Failure) -> String {
    match failure {
        Failure::Api { status, code, .. } => format!("{status} {code}"),
        Failure::Local(message) | Failure::Refused(message) => message.clone(),
    }
}

pub(crate) async fn upload(api: &Api, args: UploadArgs) -> Result<Output, Failure> {
    let filename = args
        .file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| Failure::local(format!("{} is not a file", args.file.display())))?;
    let mut q = vec![("filename", filename.clone())];
    q.extend(args.fields.pairs()?);
    let project: Vec<(&str, String)> = args.project.map(|p| ("project", p)).into_iter().collect();
    q.extend(project.iter().cloned());
    let path = format!("{OBJECTS}{}", serde_urlencoded_pairs(&q));
    let list_path = format!("{OBJECTS}{}", serde_urlencoded_pairs(&project));
    let object = upload_with_retries(api, &path, &list_path, &args.file, &filename).await?;
    let text = format!(
        "{}\n{}  ({} bytes, sha256 {})",
        object["url"].as_str().unwrap_or(""),
        object["shortUrl"].as_str().unwrap_or(""),
        object["sizeBytes"],
        object["sha256"].as_str().unwrap_or("")
    );
    Ok(out(object, text))
}

pub(crate) async fn objects(api: &Api, cmd: ObjectsCommand) -> Result<Output, Failure> {
    match cmd {
        ObjectsCommand::List { status, project } => {
            let mut q: Vec<(&str, String)> = Vec::new();
            q.extend(status.map(|s| ("status", s)));
            q.extend(project.map(|p| ("project", p)));
            let list = api
                .get(&format!("{OBJECTS}{}", serde_urlencoded_pairs(&q)))
                .await?;
            let lines = rows(&list, "objects", line);
            let text = if lines.is_empty() {
                "No objects.".to_owned()
            } else {
                lines.join("\n")
            };
            Ok(out(list, text))
        }
        ObjectsCommand::Get { object } => {
            let object = find(api, &object).await?;
            let text = pretty(&object);
            Ok(out(object, text))
        }
        ObjectsCommand::Update {
            object,
            fields,
            filename,
            status,
        } => {
            let id = id_of(&find(api, &object).await?)?;
            let mut body = Map::new();
            fields.into_json(&mut body)?;
            if let Some(f) = filename {
                body.insert("filename".into(), Value::from(f));
            }
            if let Some(s) = status {
                body.insert("status".into(), Value::from(s));
            }
            if body.is_empty() {
                return Err(Failure::local(
                    "nothing to change: give at least one option",
                ));
            }
            let updated = api
                .call(
                    Method::PATCH,
                    &format!("{OBJECTS}/{id}"),
                    Some(&Value::Object(body)),
                )
                .await?;
            let text = line(&updated);
            Ok(out(updated, text))
        }
        ObjectsCommand::Replace { object, file } => {
            let id = id_of(&find(api, &object).await?)?;
            let replaced =
                send_file(api, Method::PUT, &format!("{OBJECTS}/{id}/content"), &file).await?;
            let text = line(&replaced);
            Ok(out(replaced, text))
        }
        ObjectsCommand::Download { object, output } => {
            let found = find(api, &object).await?;
            let id = id_of(&found)?;
            let name = found["filename"].as_str().unwrap_or("download");
            // The server's file name carries no directory; a name of dots is refused here too.
            let target = output.unwrap_or_else(|| PathBuf::from(name));
            let resp = api
                .request(Method::GET, &format!("{OBJECTS}/{id}/content"))?
                .send()
                .await?;
            if !resp.status().is_success() {
                return Err(read(resp)
                    .await
                    .err()
                    .unwrap_or_else(|| Failure::local("the server refused the download")));
            }
            let total = resp.content_length().unwrap_or(0);
            let progress = pages::bar(total, "downloading");
            let mut file = tokio::fs::File::create(&target)
                .await
                .map_err(|e| Failure::local(format!("{}: {e}", target.display())))?;
            let mut body = resp.bytes_stream();
            let mut written = 0u64;
            while let Some(piece) = body.next().await {
                let piece = piece?;
                file.write_all(&piece)
                    .await
                    .map_err(|e| Failure::local(format!("{}: {e}", target.display())))?;
                written += piece.len() as u64;
                progress.inc(piece.len() as u64);
            }
            file.flush()
                .await
                .map_err(|e| Failure::local(format!("{}: {e}", target.display())))?;
            progress.finish_and_clear();
            let text = format!("Wrote {} ({written} bytes)", target.display());
            Ok(out(
                json!({ "id": id, "path": target, "bytes": written }),
                text,
            ))
        }
        ObjectsCommand::Delete { object } => {
            let found = find(api, &object).await?;
            let id = id_of(&found)?;
            let text = format!("Deleted {}", found["url"].as_str().unwrap_or(&id));
            removed(api, &format!("{OBJECTS}/{id}"), "deleted", &id, text).await
        }
    }
}
