//! `quire login`, `logout` and `whoami`: the RFC 8628 device login and the stored key.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use serde_json::json;

use crate::account::ACCOUNT;
use crate::api::{self, Api, Failure};
use crate::config;
use crate::{Output, PLATFORM, api as api_of, out, rows};

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

pub(crate) fn logout() -> Result<Output, Failure> {
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
