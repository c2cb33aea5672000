//! `quire pages update`: a page's settings changed, reported in one line. Expiry may be
//! relative (`7d`, `12h`, `30m`), limits can be cleared, and the password can come from
//! standard input so it stays out of the shell history.

use std::io::BufRead;

use clap::Args;
use reqwest::Method;
use serde_json::{Map, Value};
use time::{Duration, OffsetDateTime, format_description::well_known::Rfc3339};

use crate::api::{Api, Failure};
use crate::pages::PageFields;
use crate::{Output, PAGES, out, page_ref};

#[derive(Debug, Args)]
pub(crate) struct UpdateArgs {
    /// The page's id, slug or short-link code.
    page: String,
    #[arg(long)]
    title: Option<String>,
    #[arg(long)]
    slug: Option<String>,
    /// Remove the expiry: the page serves until deleted.
    #[arg(long, conflicts_with = "expires_at")]
    no_expiry: bool,
    /// Remove the view limit.
    #[arg(long, conflicts_with = "max_views")]
    no_max_views: bool,
    /// Stop naming a database: the page's `/-/db.json` answers 404.
    #[arg(long, conflicts_with = "database")]
    no_database: bool,
    /// Read the password from the first line of standard input.
    #[arg(long, conflicts_with = "password")]
    password_stdin: bool,
    #[command(flatten)]
    fields: PageFields,
}

/// An `--expires` value as the API's RFC 3339: a time as given, or now plus `Nd`/`Nh`/`Nm`.
pub(crate) fn expiry(given: &str) -> Result<String, Failure> {
    let Some(unit) = given.chars().last().filter(|c| "dhm".contains(*c)) else {
        return Ok(given.to_owned());
    };
    let Ok(n) = given[..given.len() - 1].parse::<i64>() else {
        return Ok(given.to_owned());
    };
    let span = match unit {
        'd' => Duration::days(n),
        'h' => Duration::hours(n),
        _ => Duration::minutes(n),
    };
    (OffsetDateTime::now_utc() + span)
        .replace_nanosecond(0)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .ok_or_else(|| Failure::local(format!("--expires {given}: out of range")))
}

pub(crate) async fn update(api: &Api, args: UpdateArgs) -> Result<Output, Failure> {
    let mut body = Map::new();
    if let Some(t) = args.title {
        body.insert("title".into(), Value::from(t));
    }
    if let Some(s) = args.slug {
        body.insert("slug".into(), Value::from(s));
    }
    args.fields.into_json(&mut body)?;
    if args.no_expiry {
        body.insert("expiresAt".into(), Value::Null);
    }
    if args.no_max_views {
        body.insert("maxViews".into(), Value::Null);
    }
    if args.no_database {
        body.insert("database".into(), Value::Null);
    }
    if args.password_stdin {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map_err(|e| Failure::local(format!("cannot read the password: {e}")))?;
        let password = line.trim_end_matches(['\r', '\n']);
        if password.is_empty() {
            return Err(Failure::local(
                "--password-stdin: standard input gave no password",
            ));
        }
        body.insert("password".into(), Value::from(password));
    }
    if body.is_empty() {
        return Err(Failure::local(
            "nothing to update: give at least one option",
        ));
    }
    let id = page_ref::resolve(api, &args.page).await?;
    let page = api
        .call(
            Method::PATCH,
            &format!("{PAGES}/{id}"),
            Some(&Value::Object(body.clone())),
        )
        .await?;
    let text = describe(&body, &page);
    Ok(out(page, text))
}

/// One line: the page, then each change as the server now has it.
fn describe(sent: &Map<String, Value>, page: &Value) -> String {
    let now = |k: &str| page[k].as_str().unwrap_or("-").to_owned();
    let changes: Vec<String> = sent
        .iter()
        .map(|(field, value)| match field.as_str() {
            "title" => format!("title \"{}\"", now("title")),
            "slug" => format!("slug {}", now("slug")),
            "access" => format!("access {}", now("access")),
            "password" => "new password".to_owned(),
            "expiresAt" => page["expiresAt"].as_str().map_or_else(
                || "no expiry".to_owned(),
                |t| format!("expires {}", human(t)),
            ),
            "maxViews" => page["maxViews"]
                .as_u64()
                .map_or_else(|| "no view limit".to_owned(), |n| format!("max views {n}")),
            "alias" => format!("alias {}", value.as_str().unwrap_or("-")),
            "database" => page["database"]
                .as_str()
                .map_or_else(|| "no database".to_owned(), |d| format!("database {d}")),
            "allow" => {
                let who: Vec<&str> = value
                    .as_array()
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                format!("allow list {}", who.join(", "))
            }
            other => other.to_owned(),
        })
        .collect();
    format!("updated {}: {}", now("slug"), changes.join(", "))
}

/// An RFC 3339 time as `2026-12-01 00:00 UTC`.
fn human(rfc3339: &str) -> String {
    let format = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute] UTC");
    OffsetDateTime::parse(rfc3339, &Rfc3339)
        .ok()
        .and_then(|t| t.to_offset(time::UtcOffset::UTC).format(&format).ok())
        .unwrap_or_else(|| rfc3339.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_expiry_is_counted_from_now() {
        let in_a_week = OffsetDateTime::parse(&expiry("7d").unwrap(), &Rfc3339).unwrap();
        let gap = in_a_week - OffsetDateTime::now_utc();
        assert!(gap > Duration::days(7) - Duration::minutes(1) && gap <= Duration::days(7));
        assert_eq!(
            expiry("2026-12-01T00:00:00Z").unwrap(),
            "2026-12-01T00:00:00Z"
        );
    }

    #[test]
    fn times_read_as_utc_minutes() {
        assert_eq!(human("2026-12-01T01:00:00+01:00"), "2026-12-01 00:00 UTC");
    }
}
