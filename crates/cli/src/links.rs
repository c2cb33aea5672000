//! `quire links …`: short links to any URL (`/api/link/v1`), each named by its id, alias or
//! public id; `qr` draws a link's short URL as a QR code in the terminal or an SVG file.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use qrcode::QrCode;
use qrcode::render::{svg, unicode};
use reqwest::Method;
use serde_json::{Map, Value, json};

use crate::api::{Api, Failure};
use crate::{Output, out, page_update, pretty, removed, rows};

const LINKS: &str = "/api/link/v1/links";

#[derive(Debug, Args, Default)]
pub(crate) struct LinkFields {
    /// A custom short code (3-64 of A-Z a-z 0-9 _ -).
    #[arg(long)]
    alias: Option<String>,
    #[arg(long)]
    title: Option<String>,
    /// `public` (default), `private`, `password` or `allow_list`.
    #[arg(long)]
    access: Option<String>,
    /// Sets `--access password` unless another access is given.
    #[arg(long)]
    password: Option<String>,
    /// Emails or handles allowed to follow it (`allow_list`); repeat or comma-separate.
    #[arg(long, value_delimiter = ',')]
    allow: Vec<String>,
    /// When it stops working: an RFC 3339 time, or from now `7d`, `12h`, `30m`.
    #[arg(long, visible_alias = "expires")]
    expires_at: Option<String>,
    /// Where visitors go once it has expired or its views are spent.
    #[arg(long)]
    expired_url: Option<String>,
    /// Views people may make (previews never spend one).
    #[arg(long)]
    max_views: Option<u64>,
    /// 301, 302 (default), 307 or 308.
    #[arg(long)]
    redirect_status: Option<u16>,
}

impl LinkFields {
    fn into_json(self, body: &mut Map<String, Value>) -> Result<(), Failure> {
        let expires_at = self
            .expires_at
            .as_deref()
            .map(page_update::expiry)
            .transpose()?;
        let access = self
            .access
            .or_else(|| self.password.as_ref().map(|_| "password".to_owned()));
        let mut put = |k: &str, v: Option<Value>| {
            if let Some(v) = v {
                body.insert(k.to_owned(), v);
            }
        };
        put("alias", self.alias.map(Value::from));
        put("title", self.title.map(Value::from));
        put("access", access.map(Value::from));
        put("password", self.password.map(Value::from));
        put(
            "allow",
            (!self.allow.is_empty()).then(|| Value::from(self.allow)),
        );
        put("expiresAt", expires_at.map(Value::from));
        put("expiredUrl", self.expired_url.map(Value::from));
        put("maxViews", self.max_views.map(Value::from));
        put("redirectStatus", self.redirect_status.map(Value::from));
        Ok(())
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum LinksCommand {
    /// Shorten a URL.
    Create {
        url: String,
        #[command(flatten)]
        fields: LinkFields,
        #[arg(long)]
        project: Option<String>,
    },
    /// List links.
    List {
        /// `active` (default) or `archived`.
        #[arg(long)]
        status: Option<String>,
        #[arg(long)]
        project: Option<String>,
        /// Only links whose URL, title or alias holds this.
        #[arg(long, short)]
        query: Option<String>,
    },
    /// Show one link (by id, alias or public id, as every command below).
    Get { link: String },
    /// Change a link: a new URL keeps its short URL and counts.
    Update {
        link: String,
        /// A new target.
        #[arg(long)]
        url: Option<String>,
        #[command(flatten)]
        fields: LinkFields,
        /// `active` or `archived`.
        #[arg(long)]
        status: Option<String>,
    },
    /// Delete a link and its counts.
    Delete { link: String },
    /// Views per day, bot views and referrer hosts.
    Stats {
        link: String,
        /// First day (YYYY-MM-DD); default 29 days before `--to`.
        #[arg(long)]
        from: Option<String>,
        /// Last day (YYYY-MM-DD); default today.
        #[arg(long)]
        to: Option<String>,
    },
    /// Draw the short URL as a QR code (in the terminal, or `--svg FILE`).
    Qr {
        link: String,
        #[arg(long)]
        svg: Option<PathBuf>,
    },
}

/// The link named by its id, or else by an alias or public id among the account's links.
async fn find(api: &Api, name: &str) -> Result<Value, Failure> {
    if name.len() == 36 && name.chars().filter(|c| *c == '-').count() == 4 {
        return api.get(&format!("{LINKS}/{name}")).await;
    }
    for status in ["active", "archived"] {
        let list = api.get(&format!("{LINKS}?status={status}")).await?;
        if let Some(found) = list["links"].as_array().and_then(|links| {
            links
                .iter()
                .find(|l| l["alias"] == name || l["public_id"] == name)
        }) {
            return Ok(found.clone());
        }
    }
    Err(Failure::local(format!(
        "no link of yours is named {name:?} in your key's project (give its id)"
    )))
}

fn line(l: &Value) -> String {
    let budget = match l["maxViews"].as_u64() {
        Some(max) => format!("{}/{max}", l["viewCount"]),
        None => l["viewCount"].to_string(),
    };
    format!(
        "{}  {}  {}  {} views  {}",
        l["shortUrl"].as_str().unwrap_or(""),
        l["access"].as_str().unwrap_or(""),
        l["url"].as_str().unwrap_or(""),
        budget,
        l["id"].as_str().unwrap_or(""),
    )
}

pub(crate) async fn links(api: &Api, cmd: LinksCommand) -> Result<Output, Failure> {
    match cmd {
        LinksCommand::Create {
            url,
            fields,
            project,
        } => {
            let mut body = Map::new();
            body.insert("url".into(), Value::from(url));
            fields.into_json(&mut body)?;
            if let Some(p) = project {
                body.insert("project".into(), Value::from(p));
            }
            let link = api
                .call(Method::POST, LINKS, Some(&Value::Object(body)))
                .await?;
            let text = format!(
                "{}\n→ {}",
                link["shortUrl"].as_str().unwrap_or(""),
                link["url"].as_str().unwrap_or("")
            );
            Ok(out(link, text))
        }
        LinksCommand::List {
            status,
            project,
            query,
        } => {
            let mut q: Vec<(&str, String)> = Vec::new();
            q.extend(status.map(|s| ("status", s)));
            q.extend(project.map(|p| ("project", p)));
            q.extend(query.map(|s| ("q", s)));
            let query = serde_urlencoded_pairs(&q);
            let list = api.get(&format!("{LINKS}{query}")).await?;
            let lines = rows(&list, "links", line);
            let text = if lines.is_empty() {
                "No links.".to_owned()
            } else {
                lines.join("\n")
            };
            Ok(out(list, text))
        }
        LinksCommand::Get { link } => {
            let link = find(api, &link).await?;
            let text = pretty(&link);
            Ok(out(link, text))
        }
        LinksCommand::Update {
            link,
            url,
            fields,
            status,
        } => {
            let id = id_of(&find(api, &link).await?)?;
            let mut body = Map::new();
            if let Some(u) = url {
                body.insert("url".into(), Value::from(u));
            }
            if let Some(s) = status {
                body.insert("status".into(), Value::from(s));
            }
            fields.into_json(&mut body)?;
            if body.is_empty() {
                return Err(Failure::local(
                    "nothing to change: give at least one option",
                ));
            }
            let updated = api
                .call(
                    Method::PATCH,
                    &format!("{LINKS}/{id}"),
                    Some(&Value::Object(body)),
                )
                .await?;
            let text = line(&updated);
            Ok(out(updated, text))
        }
        LinksCommand::Delete { link } => {
            let found = find(api, &link).await?;
            let id = id_of(&found)?;
            let text = format!("Deleted {}", found["shortUrl"].as_str().unwrap_or(&id));
            removed(api, &format!("{LINKS}/{id}"), "deleted", &id, text).await
        }
        LinksCommand::Stats { link, from, to } => {
            let id = id_of(&find(api, &link).await?)?;
            let mut q: Vec<(&str, String)> = Vec::new();
            q.extend(from.map(|f| ("from", f)));
            q.extend(to.map(|t| ("to", t)));
            let stats = api
                .get(&format!("{LINKS}/{id}/stats{}", serde_urlencoded_pairs(&q)))
                .await?;
            let mut text = format!(
                "{} views, {} by previews and crawlers, {} to {}\n",
                stats["total"],
                stats["bots"],
                stats["from"].as_str().unwrap_or(""),
                stats["to"].as_str().unwrap_or("")
            );
            for day in stats["days"].as_array().into_iter().flatten() {
                if day["views"] != 0 || day["bots"] != 0 {
                    text.push_str(&format!(
                        "{}  {} views  {} bots\n",
                        day["day"].as_str().unwrap_or(""),
                        day["views"],
                        day["bots"]
                    ));
                }
            }
            for r in stats["referrers"].as_array().into_iter().flatten() {
                text.push_str(&format!(
                    "from {}  {}\n",
                    r["host"].as_str().unwrap_or(""),
                    r["views"]
                ));
            }
            Ok(out(stats, text))
        }
        LinksCommand::Qr { link, svg: file } => {
            let found = find(api, &link).await?;
            let short = found["shortUrl"].as_str().unwrap_or("").to_owned();
            let code = QrCode::new(short.as_bytes())
                .map_err(|e| Failure::local(format!("cannot draw a QR code: {e}")))?;
            match file {
                Some(path) => {
                    let image = code
                        .render::<svg::Color<'_>>()
                        .min_dimensions(256, 256)
                        .build();
                    std::fs::write(&path, image).map_err(|e| {
                        Failure::local(format!("cannot write {}: {e}", path.display()))
                    })?;
                    let text = format!("Wrote {} ({short})", path.display());
                    Ok(out(json!({ "shortUrl": short, "svg": path }), text))
                }
                None => {
                    let drawn = code.render::<unicode::Dense1x2>().quiet_zone(true).build();
                    Ok(out(
                        json!({ "shortUrl": short, "qr": drawn }),
                        format!("{drawn}\n{short}"),
                    ))
                }
            }
        }
    }
}

fn id_of(link: &Value) -> Result<String, Failure> {
    link["id"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| Failure::local("the server's answer has no link id"))
}

/// `?a=1&b=2` of the pairs given, or nothing.
pub(crate) fn serde_urlencoded_pairs(pairs: &[(&str, String)]) -> String {
    if pairs.is_empty() {
        return String::new();
    }
    let encoded: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}={}", encode(v)))
        .collect();
    format!("?{}", encoded.join("&"))
}

fn encode(v: &str) -> String {
    v.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
