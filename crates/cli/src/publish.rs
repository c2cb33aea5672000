//! `quire publish DIR`: a directory published as a new page, titled from its `index.html`
//! (or its folder) unless `--title` says otherwise, and reported with who can open it. The
//! page is remembered in the folder (`.quire/page.json`); publishing the folder again to the
//! same server replaces that page's files (`PUT …/files`, all or nothing) at the same URL,
//! unless `--new` asks for another page.

use std::path::{Path, PathBuf};

use clap::Args;
use reqwest::Method;
use serde_json::{Map, Value, json};

use crate::api::{Api, Failure};
use crate::pages::{PageFields, read_files, upload};
use crate::remembered::{self, Remembered};
use crate::{Output, PAGES, out};

#[derive(Debug, Args)]
pub(crate) struct PublishArgs {
    /// The site directory (its files keep their relative paths).
    dir: PathBuf,
    /// Default: the entrypoint's `<title>`, else the directory's name.
    #[arg(long)]
    title: Option<String>,
    #[arg(long)]
    slug: Option<String>,
    /// The file served at the page's root (default `index.html`).
    #[arg(long)]
    entrypoint: Option<String>,
    /// Project slug (default: the key's home project).
    #[arg(long)]
    project: Option<String>,
    /// Publish a new page even if the folder remembers one (and remember the new one).
    #[arg(long)]
    new: bool,
    #[command(flatten)]
    fields: PageFields,
}

impl PublishArgs {
    /// The options that only shape a new page, by flag name.
    fn new_page_options(&self) -> Vec<&'static str> {
        let mut given = Vec::new();
        for (flag, set) in [
            ("--title", self.title.is_some()),
            ("--slug", self.slug.is_some()),
            ("--entrypoint", self.entrypoint.is_some()),
            ("--project", self.project.is_some()),
        ] {
            if set {
                given.push(flag);
            }
        }
        if self.fields.any() {
            given.push("a page setting (--access, --expires, --max-views, --database, …)");
        }
        given
    }
}

pub(crate) async fn publish(api: &Api, args: PublishArgs) -> Result<Output, Failure> {
    let remembered = if args.new {
        None
    } else {
        remembered::load(&args.dir)
            .map_err(Failure::Local)?
            .filter(|r| r.server == api.server)
    };
    if let Some(page) = remembered {
        // A redeploy changes files only: settings go through `quire pages update`, so a
        // flag never half-applies when the files are refused (or the reverse).
        let given = args.new_page_options();
        if !given.is_empty() {
            return Err(Failure::local(format!(
                "{} remembers page {}: publishing it again replaces its files only, so {} does \
                 not apply. Change settings with `quire pages update {}`, or publish another \
                 page with --new.",
                args.dir.display(),
                page.page_id,
                given.join(", "),
                page.page_id
            )));
        }
        match redeploy(api, &args.dir, &page).await {
            Err(Failure::Api { status: 404, .. }) => eprintln!(
                "The page remembered in {} is gone from {}; publishing a new one.",
                remembered::file(&args.dir).display(),
                api.server
            ),
            done => return done,
        }
    }
    publish_new(api, args).await
}

/// Replaces the remembered page's files, and says where it is and who can open it.
async fn redeploy(api: &Api, dir: &Path, page: &Remembered) -> Result<Output, Failure> {
    let files = read_files(dir)?;
    let path = format!("{PAGES}/{}", page.page_id);
    upload(
        api,
        Method::PUT,
        &format!("{path}/files"),
        &json!({ "files": files }),
    )
    .await?;
    let now = api.get(&path).await?;
    let text = format!(
        "Updated {} ({}, {} bytes); who can open it: {}",
        now["url"].as_str().unwrap_or("-"),
        files_count(now["fileCount"].as_u64().unwrap_or(0)),
        now["sizeBytes"],
        access_in_words(now["access"].as_str().unwrap_or("private")),
    );
    Ok(out(now, text))
}

async fn publish_new(api: &Api, args: PublishArgs) -> Result<Output, Failure> {
    let files = read_files(&args.dir)?;
    let count = files.len();
    let entrypoint = args.entrypoint.as_deref().unwrap_or("index.html");
    let title = match args.title {
        Some(t) => t,
        None => default_title(&args.dir, entrypoint)?,
    };
    let mut body = Map::new();
    body.insert("title".into(), Value::from(title.clone()));
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
    args.fields.into_json(&mut body)?;
    let published = upload(api, Method::POST, PAGES, &Value::Object(body)).await?;
    let page = Remembered {
        page_id: published["id"].as_str().unwrap_or_default().to_owned(),
        server: api.server.clone(),
    };
    // The page is published either way; a folder that cannot be written to only loses the
    // redeploy.
    if let Err(e) = remembered::save(&args.dir, &page) {
        eprintln!("Not remembered for the next publish: {e}");
    }
    let text = format!(
        "Published \"{title}\" as {} ({}, {} bytes)\nPage id:   {}\n\
         Who can open it: {}\nURL:       {}\nShort URL: {}",
        published["slug"].as_str().unwrap_or("-"),
        files_count(count.try_into().unwrap_or(u64::MAX)),
        published["sizeBytes"],
        published["id"].as_str().unwrap_or("-"),
        access_in_words(published["access"].as_str().unwrap_or("private")),
        published["url"].as_str().unwrap_or("-"),
        published["shortUrl"].as_str().unwrap_or("-"),
    );
    let text = match published["database"].as_str() {
        Some(database) => format!(
            "{text}\nDatabase:  {database} (its URL and anon key at {}-/db.json)",
            published["url"].as_str().unwrap_or("-")
        ),
        None => text,
    };
    Ok(out(published, text))
}

/// `1 file`, `3 files`.
fn files_count(n: u64) -> String {
    if n == 1 {
        "1 file".to_owned()
    } else {
        format!("{n} files")
    }
}

/// Who may open a page with this access, said plainly.
pub(crate) fn access_in_words(access: &str) -> String {
    match access {
        "private" => "only you (private)".to_owned(),
        "password" => "anyone with the password".to_owned(),
        "allow_list" => "the accounts on its allow list".to_owned(),
        "public" => "anyone with the link (public)".to_owned(),
        other => other.to_owned(),
    }
}

/// The entrypoint's non-empty `<title>`, else the directory's own name.
fn default_title(dir: &Path, entrypoint: &str) -> Result<String, Failure> {
    if let Some(t) = std::fs::read_to_string(dir.join(entrypoint))
        .ok()
        .and_then(|html| html_title(&html))
    {
        return Ok(t);
    }
    let absolute = std::fs::canonicalize(dir)
        .map_err(|e| Failure::local(format!("cannot read {}: {e}", dir.display())))?;
    absolute
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| Failure::local("no title: give --title"))
}

/// The text of the first `<title>` element, entities for markup characters decoded and
/// whitespace collapsed; `None` when absent or blank.
fn html_title(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start + lower[start..].find("</title")?;
    let text = html[start..end]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_title_element_gives_the_title() {
        let html = "<html><head><TITLE lang=en>\n  Tom &amp; Jerry\n</TITLE></head></html>";
        assert_eq!(html_title(html).as_deref(), Some("Tom & Jerry"));
        assert_eq!(html_title("<title>  </title>"), None);
        assert_eq!(html_title("<h1>no title</h1>"), None);
    }
}
