//! `quire db …`: PostgreSQL databases of one's own (`/api/database/v1`), each named by its
//! id or by its slug within a project; the owner's SQL, printed as psql would; and the data
//! API that Supabase's clients speak, its switch, keys and schema reload. Wherever a
//! database or SQL's answer says tables are open to whoever holds the anon key, a warning
//! says which (`open.rs`); the data API's settings in `settings.rs`.

mod open;
mod render;
mod settings;

use open::followed_by_warning;
use render::{details, list_text, secret_text, text_of};

use std::io::{BufRead, IsTerminal, Read, Write};
use std::path::PathBuf;

use clap::{Args, Subcommand};
use reqwest::Method;
use serde_json::{Map, Value, json};
use time::{Duration, OffsetDateTime, format_description::well_known::Rfc3339};

use crate::api::{Api, Failure};
use crate::links::serde_urlencoded_pairs;
use crate::page_ref::is_uuid;
use crate::{Output, out, removed};

const DATABASES: &str = "/api/database/v1/databases";
const UNAVAILABLE: &str = "database_service_unavailable";
const NIL_ID: &str = "00000000-0000-0000-0000-000000000000";

/// A database named on the command line.
#[derive(Debug, Args)]
pub(crate) struct Target {
    /// The database's slug or id.
    database: String,
    /// The project a slug is looked up in (default: the key's home project).
    #[arg(long)]
    project: Option<String>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum DbCommand {
    /// Create a database (a PostgreSQL database of its own).
    Create {
        /// 3-30 lowercase letters, digits or underscores, unique on the server.
        slug: String,
        /// A display name (default: the slug).
        #[arg(long)]
        name: Option<String>,
        #[arg(long)]
        project: Option<String>,
        /// Drop it after this long: `45m`, `2h`, `7d`, `1h30m`.
        #[arg(long, conflicts_with = "expires_at")]
        expires_in: Option<String>,
        /// Drop it at this RFC 3339 time.
        #[arg(long)]
        expires_at: Option<String>,
    },
    /// List a project's databases.
    List {
        #[arg(long)]
        project: Option<String>,
    },
    /// Show one database (by slug or id, as every command below).
    Get(Target),
    /// Delete a database and all its data (asks first on a terminal).
    Delete {
        #[command(flatten)]
        target: Target,
        /// Delete without asking (needed when standard input is not a terminal).
        #[arg(long, short)]
        yes: bool,
    },
    /// Run SQL as the database's owner: from FILE, `-c`, or standard input.
    Sql {
        #[command(flatten)]
        target: Target,
        /// A file of SQL (`-`: standard input).
        #[arg(conflicts_with = "command")]
        file: Option<PathBuf>,
        /// The SQL itself.
        #[arg(long, short)]
        command: Option<String>,
    },
    /// Turn the data API on (Supabase's clients, `/db/SLUG`).
    EnableApi(Target),
    /// Turn the data API off; its keys are kept for when it is back on.
    DisableApi(Target),
    /// Print the data API's keys and URLs.
    Secret(Target),
    /// Replace the data API's JWT secret and so both keys: the old keys and end users'
    /// access tokens stop working (asks first on a terminal).
    RotateSecret {
        #[command(flatten)]
        target: Target,
        /// Rotate without asking (needed when standard input is not a terminal).
        #[arg(long, short)]
        yes: bool,
    },
    /// Have the data API load the schema again.
    Reload(Target),
    /// Show the data API's settings, or change those named (PostgREST's, off by default).
    Settings(settings::SettingsArgs),
}

pub(crate) async fn run(api: &Api, cmd: DbCommand) -> Result<Output, Failure> {
    command(api, cmd).await.map_err(|failure| match failure {
        // Any route of a server with no cluster: said the way `list` says it.
        Failure::Api {
            status,
            code,
            message,
            body,
            text: None,
        } if code == UNAVAILABLE => Failure::Api {
            text: Some(format!(
                "error: this server has no database service: {message}"
            )),
            status,
            code,
            message,
            body,
        },
        other => other,
    })
}

async fn command(api: &Api, cmd: DbCommand) -> Result<Output, Failure> {
    let one = |id: &str| format!("{DATABASES}/{id}");
    match cmd {
        DbCommand::Create {
            slug,
            name,
            project,
            expires_in,
            expires_at,
        } => {
            let expires_at = match (expires_in, expires_at) {
                (Some(span), _) => Some(expires_after(OffsetDateTime::now_utc(), &span)?),
                (None, Some(at)) => Some(checked_time(&at)?),
                (None, None) => None,
            };
            let mut body = Map::new();
            body.insert("slug".into(), Value::from(slug));
            let fields = [
                ("name", name),
                ("project", project),
                ("expiresAt", expires_at),
            ];
            for (field, value) in fields {
                if let Some(value) = value {
                    body.insert(field.into(), Value::from(value));
                }
            }
            let made = api
                .call(Method::POST, DATABASES, Some(&Value::Object(body)))
                .await?;
            let text = followed_by_warning(
                format!(
                    "Created database {}\n\n{}",
                    text_of(&made, "slug"),
                    details(&made)
                ),
                &made["openTables"],
            );
            Ok(out(made, text))
        }
        DbCommand::List { project } => {
            let list = list(api, project.as_deref()).await?;
            if list["available"] == false {
                let text = format!(
                    "this server has no database service: {}",
                    why_not(api).await
                );
                return Ok(out(list, text));
            }
            let text = match open::list_warnings(&list) {
                Some(warnings) => format!("{}\n\n{warnings}", list_text(&list)),
                None => list_text(&list),
            };
            Ok(out(list, text))
        }
        DbCommand::Get(target) => {
            let found = resolve(api, &target).await?;
            let text = followed_by_warning(details(&found), &found["openTables"]);
            Ok(out(found, text))
        }
        DbCommand::Delete { target, yes } => {
            if !yes && !std::io::stdin().is_terminal() {
                return Err(Failure::Refused(format!(
                    "not deleting {}: standard input is not a terminal, so confirm with --yes",
                    target.database
                )));
            }
            let found = resolve(api, &target).await?;
            let id = text_of(&found, "id");
            let slug = text_of(&found, "slug");
            if !yes {
                confirm(&slug, &text_of(&found, "project"))?;
            }
            let text = format!("Deleted database {slug}.");
            removed(api, &one(&id), "deleted", &id, text).await
        }
        DbCommand::Sql {
            target,
            file,
            command,
        } => {
            let sql = read_sql(file, command)?;
            let id = id_of(api, &target).await?;
            let sent = json!({ "sql": sql });
            match api
                .call(Method::POST, &format!("{}/query", one(&id)), Some(&sent))
                .await
            {
                Ok(result) => {
                    let text =
                        followed_by_warning(render::result_table(&result), &result["openTables"]);
                    Ok(out(result, text))
                }
                Err(Failure::Api {
                    status,
                    code,
                    message,
                    body,
                    ..
                }) if code == "sql_error" => Err(Failure::Api {
                    text: Some(render::sql_error(&sql, &body)),
                    status,
                    code,
                    message,
                    body,
                }),
                Err(other) => Err(other),
            }
        }
        DbCommand::EnableApi(target) => {
            let id = id_of(api, &target).await?;
            let on = api
                .call(Method::POST, &format!("{}/data-api", one(&id)), None)
                .await?;
            let text = format!(
                "The data API of {0} is on: {1}\nIts keys: quire db secret {0}",
                target.database,
                on["dataApi"]["url"].as_str().unwrap_or("")
            );
            Ok(out(on, text))
        }
        DbCommand::DisableApi(target) => {
            let id = id_of(api, &target).await?;
            let text = format!(
                "The data API of {} is off; its keys work again once it is back on.",
                target.database
            );
            removed(
                api,
                &format!("{}/data-api", one(&id)),
                "disabled",
                &id,
                text,
            )
            .await
        }
        DbCommand::Secret(target) => {
            let id = id_of(api, &target).await?;
            let secret = api.get(&format!("{}/secret", one(&id))).await?;
            let text = secret_text(&target.database, &secret);
            Ok(out(secret, text))
        }
        DbCommand::RotateSecret { target, yes } => {
            if !yes && !std::io::stdin().is_terminal() {
                return Err(Failure::Refused(format!(
                    "not rotating the keys of {}: standard input is not a terminal, so \
                     confirm with --yes",
                    target.database
                )));
            }
            let id = id_of(api, &target).await?;
            if !yes {
                ask(
                    &format!(
                        "Rotate the keys of {}? Every client using the old anon or service role \
                         key stops working until it has the new one. [y/N] ",
                        target.database
                    ),
                    &format!("not rotating the keys of {}", target.database),
                )?;
            }
            let secret = api
                .call(Method::POST, &format!("{}/secret/rotate", one(&id)), None)
                .await?;
            let text = format!(
                "Rotated the JWT secret of {}: the old keys and end users' access tokens no \
                 longer work (signed-in users get new tokens at their next refresh).\n\n{}",
                target.database,
                secret_text(&target.database, &secret)
            );
            Ok(out(secret, text))
        }
        DbCommand::Settings(args) => settings::run(api, args).await,
        DbCommand::Reload(target) => {
            let id = id_of(api, &target).await?;
            let done = api
                .call(Method::POST, &format!("{}/reload", one(&id)), None)
                .await?;
            let json = if done.is_null() {
                json!({ "reloaded": id })
            } else {
                done
            };
            let text = format!(
                "The data API of {} loads the schema again.",
                target.database
            );
            Ok(out(json, text))
        }
    }
}

async fn list(api: &Api, project: Option<&str>) -> Result<Value, Failure> {
    let query: Vec<(&str, String)> = project
        .map(|p| ("project", p.to_owned()))
        .into_iter()
        .collect();
    api.get(&format!("{DATABASES}{}", serde_urlencoded_pairs(&query)))
        .await
}

/// The server's words on what it lacks. The list says only `available: false`; any other
/// route answers 503 with the setting to make, and a GET of the nil id changes nothing.
async fn why_not(api: &Api) -> String {
    match api.get(&format!("{DATABASES}/{NIL_ID}")).await {
        Err(Failure::Api { code, message, .. }) if code == UNAVAILABLE => message,
        _ => "its operator has not given it a PostgreSQL cluster".to_owned(),
    }
}

/// The database of that slug in a project's list.
fn find_in<'a>(list: &'a Value, slug: &str) -> Option<&'a Value> {
    list["databases"]
        .as_array()?
        .iter()
        .find(|d| d["slug"] == slug)
}

/// The database named: fetched by id, or found by slug in the project's list.
async fn resolve(api: &Api, target: &Target) -> Result<Value, Failure> {
    if is_uuid(&target.database) {
        return api.get(&format!("{DATABASES}/{}", target.database)).await;
    }
    let list = list(api, target.project.as_deref()).await?;
    if list["available"] == false {
        return Err(Failure::local(format!(
            "this server has no database service: {}",
            why_not(api).await
        )));
    }
    find_in(&list, &target.database).cloned().ok_or_else(|| {
        Failure::local(format!(
            "no database named {:?} in project {}: give its id, or another --project \
             (`quire db list`)",
            target.database,
            text_of(&list, "project")
        ))
    })
}

/// The id of the database named, asking the server only for a slug.
async fn id_of(api: &Api, target: &Target) -> Result<String, Failure> {
    if is_uuid(&target.database) {
        return Ok(target.database.clone());
    }
    Ok(text_of(&resolve(api, target).await?, "id"))
}

/// `45s`, `30m`, `2h`, `7d`, `2w`, or a sum of them (`1h30m`), as a duration.
pub(crate) fn span(given: &str) -> Result<Duration, Failure> {
    let bad = || {
        Failure::local(format!(
            "--expires-in {given}: give a number and a unit (s, m, h, d, w), as 2h or 1h30m"
        ))
    };
    let mut total = Duration::ZERO;
    let mut digits = String::new();
    for c in given.trim().chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let n: i64 = digits.parse().map_err(|_| bad())?;
        digits.clear();
        total += match c {
            's' => Duration::seconds(n),
            'm' => Duration::minutes(n),
            'h' => Duration::hours(n),
            'd' => Duration::days(n),
            'w' => Duration::weeks(n),
            _ => return Err(bad()),
        };
    }
    if !digits.is_empty() || total <= Duration::ZERO {
        return Err(bad());
    }
    Ok(total)
}

/// `now` plus `--expires-in`, as the API's RFC 3339 (whole seconds).
fn expires_after(now: OffsetDateTime, given: &str) -> Result<String, Failure> {
    now.checked_add(span(given)?)
        .and_then(|t| t.replace_nanosecond(0).ok())
        .and_then(|t| t.format(&Rfc3339).ok())
        .ok_or_else(|| Failure::local(format!("--expires-in {given}: out of range")))
}

/// `--expires-at` checked here, so a typo is named as the option it came from.
fn checked_time(given: &str) -> Result<String, Failure> {
    OffsetDateTime::parse(given, &Rfc3339)
        .map(|_| given.to_owned())
        .map_err(|_| {
            Failure::local(format!(
                "--expires-at {given}: not an RFC 3339 time (2026-12-01T09:00:00Z)"
            ))
        })
}

/// The SQL: `-c`, a file, or standard input (a file named `-` too).
fn read_sql(file: Option<PathBuf>, command: Option<String>) -> Result<String, Failure> {
    let sql = match (command, file) {
        (Some(sql), _) => sql,
        (None, Some(path)) if path.as_os_str() != "-" => std::fs::read_to_string(&path)
            .map_err(|e| Failure::local(format!("cannot read {}: {e}", path.display())))?,
        (None, _) => {
            let stdin = std::io::stdin();
            if stdin.is_terminal() {
                eprintln!("Type the SQL, then Ctrl-D to run it.");
            }
            let mut sql = String::new();
            stdin
                .lock()
                .read_to_string(&mut sql)
                .map_err(|e| Failure::local(format!("cannot read standard input: {e}")))?;
            sql
        }
    };
    if sql.trim().is_empty() {
        return Err(Failure::local(
            "no SQL to run: give a FILE, -c 'SQL', or SQL on standard input",
        ));
    }
    Ok(sql)
}

/// Asks on the terminal; anything but `y`/`yes` keeps the database.
fn confirm(slug: &str, project: &str) -> Result<(), Failure> {
    ask(
        &format!("Delete database {slug} (project {project}) and all its data? [y/N] "),
        &format!("not deleting {slug}"),
    )
}

/// Asks `question` on the terminal; anything but `y`/`yes` is `refusal`.
fn ask(question: &str, refusal: &str) -> Result<(), Failure> {
    eprint!("{question}");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| Failure::local(format!("cannot read the answer: {e}")))?;
    if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        Ok(())
    } else {
        Err(Failure::Refused(refusal.to_owned()))
    }
}

#[cfg(test)]
mod tests;
