//! `quire login`, `logout` and `whoami`: the RFC 8628 device login and the stored key.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use reqwest::Method;
use serde_json::json;

use crate::account::ACCOUNT;
use crate::api::{self, Api, Failure};
use crate::config;
use crate::{Output, PLATFORM, api as api_of, out, rows};

/// How many leading characters of a key the server shows in its key list (`keyPrefix`).
const KEY_PREFIX_LEN: usize = 11;

pub(crate) async fn login(
    server: Option<&str>,
    no_browser: bool,
    client_name: &str,
    json: bool,
) -> Result<Output, Failure> {
    let api = api_of(server)?;
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
                let previous = config::load().map_err(Failure::Local)?;
                let path = config::save(&config::Stored {
                    server: Some(api.server.clone()),
                    key: Some(key.to_owned()),
                })
                .map_err(Failure::Local)?;
                let replaced = match previous.key.filter(|old| {
                    old != key && previous.server.as_deref() == Some(api.server.as_str())
                }) {
                    Some(old) => {
                        let new = Api::new(&api.server, Some(key.to_owned()))?;
                        revoke_previous(&new, &old).await
                    }
                    None => false,
                };
                return Ok(out(
                    json!({
                        "logged_in": true,
                        "server": api.server,
                        "config": path,
                        "replaced_key": replaced,
                    }),
                    format!(
                        "Logged in to {}. Key stored in {}{}.",
                        api.server,
                        path.display(),
                        if replaced {
                            "; the previous key is revoked"
                        } else {
                            ""
                        }
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
                text,
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
                    text,
                });
            }
            Err(e) => return Err(e),
        }
    }
}

pub(crate) fn open_browser(url: &str) {
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

/// Revokes the CLI's previous key with the new one: found in the account's keys by its
/// prefix (the token answer names no key id), skipped when it is already revoked or gone.
/// Returns whether a key was revoked; a failure is reported and leaves the login done.
async fn revoke_previous(new: &Api, old: &str) -> bool {
    let prefix: String = old.chars().take(KEY_PREFIX_LEN).collect();
    let outcome = async {
        let keys = new.get(&format!("{PLATFORM}/keys")).await?;
        let Some(id) = keys["keys"].as_array().and_then(|keys| {
            keys.iter()
                .find(|k| k["keyPrefix"] == prefix.as_str() && k["revokedAt"].is_null())
                .and_then(|k| k["id"].as_str().map(str::to_owned))
        }) else {
            return Ok(false);
        };
        match new
            .call(Method::DELETE, &format!("{PLATFORM}/keys/{id}"), None)
            .await
        {
            Ok(_) => Ok(true),
            Err(Failure::Api { status: 404, .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }
    .await;
    match outcome {
        Ok(revoked) => revoked,
        Err(e) => {
            eprintln!(
                "The previous key ({prefix}…) could not be revoked: {}. Revoke it with \
                 `quire keys revoke ID` or in the dashboard.",
                describe(&e)
            );
            false
        }
    }
}

fn describe(e: &Failure) -> String {
    match e {
        Failure::Api { code, message, .. } => format!("{code}: {message}"),
        Failure::Local(m) | Failure::Refused(m) => m.clone(),
    }
}

/// Revokes the stored key on its server (`DELETE /keys/current`), then forgets it here. A
/// key the server no longer takes (401) was already revoked: forgotten all the same. When
/// the server cannot be reached the key is forgotten and the command fails, saying so.
pub(crate) async fn logout(cli_server: Option<&str>) -> Result<Output, Failure> {
    let mut stored = config::load().map_err(Failure::Local)?;
    let Some(key) = stored.key.take() else {
        return Ok(out(json!({ "logged_out": false }), "Not logged in."));
    };
    let server = stored
        .server
        .clone()
        .or_else(|| cli_server.map(str::to_owned))
        .unwrap_or_else(|| crate::DEFAULT_SERVER.to_owned());
    let revoked = Api::new(&server, Some(key))?
        .call(Method::DELETE, &format!("{PLATFORM}/keys/current"), None)
        .await;
    config::save(&stored).map_err(Failure::Local)?;
    match revoked {
        Ok(_) => Ok(out(
            json!({ "logged_out": true, "revoked": true }),
            format!("Logged out: the key is revoked on {server} and forgotten here."),
        )),
        Err(Failure::Api { status: 401, .. }) => Ok(out(
            json!({ "logged_out": true, "revoked": true }),
            format!("Logged out: the key was already revoked on {server}; forgotten here."),
        )),
        Err(e) => Err(Failure::local(format!(
            "the key is forgotten here, but it could not be revoked on {server} ({}): revoke \
             it in the dashboard or with `quire keys revoke ID`",
            describe(&e)
        ))),
    }
}

pub(crate) async fn whoami(api: &Api) -> Result<Output, Failure> {
    let projects = api.get(&format!("{PLATFORM}/projects")).await?;
    // Like the project list above, this needs a master key.
    let account = api.get(ACCOUNT).await?;
    let key = api.key.as_deref().unwrap_or_default();
    let prefix: String = key.chars().take(8).collect();
    let names = rows(&projects, "projects", |p| {
        p["slug"].as_str().unwrap_or("-").to_owned()
    });
    let handle = account["handle"].as_str().unwrap_or("-");
    let email = account["email"].as_str().unwrap_or("-");
    Ok(out(
        json!({
            "server": api.server,
            "handle": handle,
            "email": email,
            "keyPrefix": prefix,
            "projects": projects["projects"],
        }),
        format!(
            "Server:   {}\nAccount:  {handle} <{email}>\nKey:      {prefix}…\nProjects: {}",
            api.server,
            names.join(", ")
        ),
    ))
}
