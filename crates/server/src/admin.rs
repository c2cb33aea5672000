//! The operator's commands: create an account, set a dashboard password, activate or
//! deactivate an account, keep the invitation list, send a test message, rotate the key
//! that seals stored secrets.

use std::sync::Arc;

use quire_accounts::{AccountService, CreateAccount, InvitationList, Region};
use quire_kernel::SystemClock;
use quire_store::Database;

use crate::cli::InviteCommand;
use crate::config::Config;
use crate::error::ServerError;
use crate::wiring::{BlockingPool, mailer, migrate, sealing_key};

pub(crate) async fn create_account(
    db: Database,
    input: CreateAccount,
) -> Result<serde_json::Value, ServerError> {
    migrate(&db).await?;
    let accounts = AccountService::new(Arc::new(db), Arc::new(SystemClock), Arc::new(BlockingPool));
    let created = accounts
        .create(input)
        .await
        .map_err(ServerError::CreateAccount)?;
    Ok(serde_json::json!({
        "accountId": created.account.id,
        "handle": created.account.handle,
        "projectId": created.project.id,
        "projectSlug": created.project.slug,
        "masterKey": created.master_key.expose(),
    }))
}

pub(crate) async fn set_password(
    db: Database,
    login: &str,
    password: &str,
) -> Result<(), ServerError> {
    migrate(&db).await?;
    let accounts = AccountService::new(Arc::new(db), Arc::new(SystemClock), Arc::new(BlockingPool));
    accounts
        .set_password(login, password)
        .await
        .map_err(ServerError::SetPassword)
}

/// Activates or deactivates an account; returns the line to print.
pub(crate) async fn set_activated(
    db: Database,
    login: &str,
    activated: bool,
) -> Result<String, ServerError> {
    migrate(&db).await?;
    let accounts = AccountService::new(Arc::new(db), Arc::new(SystemClock), Arc::new(BlockingPool));
    let account = accounts
        .set_activated(login, activated)
        .await
        .map_err(ServerError::SetActivated)?;
    Ok(match account.activated_at {
        Some(at) => format!("{} is activated (since {at})", account.handle),
        None => format!("{} is not activated", account.handle),
    })
}

/// Re-seals every stored secret from the key file of the configuration to `new_file`
/// (made when missing); returns what was re-sealed, as JSON.
pub(crate) async fn rotate_secret_key(
    db: Database,
    config: &Config,
    new_file: &std::path::Path,
) -> Result<serde_json::Value, ServerError> {
    let current = std::path::Path::new(&config.secret_key_file);
    // Making a fresh "current" key here would only make every sealed value unreadable.
    if !current.exists() {
        return Err(ServerError::NoSecretKeyFile(current.to_owned()));
    }
    let same = |a: &std::path::Path, b: &std::path::Path| matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b);
    if same(current, new_file) {
        return Err(ServerError::SameSecretKeyFile(new_file.to_owned()));
    }
    let old = sealing_key(current)?;
    let new = sealing_key(new_file)?;
    migrate(&db).await?;
    let done = db
        .reseal_all(&old, &new)
        .await
        .map_err(ServerError::Reseal)?;
    Ok(serde_json::json!({
        "totpSecrets": done.totp_secrets,
        "pendingTotpSecrets": done.pending_totp_secrets,
        "serverSecrets": done.server_secrets,
        "oauthKeys": done.oauth_keys,
        "newKeyFile": new_file.display().to_string(),
    }))
}

pub(crate) fn read_password_line() -> Result<String, ServerError> {
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(ServerError::PasswordInput)?;
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}

/// Sends one message to `to` through what the configuration names, and returns the
/// relay's answer.
pub(crate) async fn mail_test(config: &Config, to: &str) -> Result<String, ServerError> {
    let mail = quire_mail::OutboundMail {
        mail_id: uuid::Uuid::now_v7(),
        to: quire_mail::Recipient::parse(to)
            .map_err(|e| ServerError::MailTest(quire_mail::SendFailure::Rejected(e)))?,
        reply_to: config.mail_from.clone(),
        reply_to_name: "Quire".into(),
        subject: "Quire mail test".into(),
        text: "This message tests the mail settings of a Quire server.\n".into(),
    };
    mailer(config)?
        .send(&mail)
        .await
        .map_err(ServerError::MailTest)
}

/// Runs an invitation-list command; returns what to print.
pub(crate) async fn invite(db: Database, command: InviteCommand) -> Result<String, ServerError> {
    migrate(&db).await?;
    let list = InvitationList::new(Arc::new(db), Arc::new(SystemClock));
    let region = |r: Option<String>| {
        r.map(|r| r.parse::<Region>())
            .transpose()
            .map_err(ServerError::Region)
    };
    Ok(match command {
        InviteCommand::Add { number, region: r } => {
            let (number, new) = list
                .add(&number, region(r)?)
                .await
                .map_err(ServerError::Invite)?;
            if new {
                format!("invited {number}")
            } else {
                format!("{number} was already invited")
            }
        }
        InviteCommand::Remove { number, region: r } => {
            let (number, removed) = list
                .remove(&number, region(r)?)
                .await
                .map_err(ServerError::Invite)?;
            if removed {
                format!("removed {number}")
            } else {
                format!("{number} was not on the list")
            }
        }
        InviteCommand::List => {
            let entries = list
                .list()
                .await
                .map_err(|e| ServerError::Invite(e.into()))?;
            let mut out = format!("{} number(s)\n", entries.len());
            for e in entries {
                let added = e
                    .added_at
                    .format(&time::format_description::well_known::Rfc3339)
                    .unwrap_or_default();
                let bound = e
                    .bound_to
                    .map(|(_, handle)| format!("activated {handle}"))
                    .unwrap_or_else(|| "not used".into());
                out.push_str(&format!("{}\t{added}\t{bound}\n", e.number));
            }
            out
        }
        InviteCommand::Import { file, region: r } => {
            let text = std::fs::read_to_string(&file).map_err(|source| ServerError::ReadFile {
                path: file.clone(),
                source,
            })?;
            let (held, added) = list
                .import(&text, region(r)?)
                .await
                .map_err(ServerError::Invite)?;
            format!(
                "{held} number(s) in {}, {added} newly invited",
                file.display()
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread")]
    async fn rotation_refuses_a_missing_current_file_and_the_current_file_as_new() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}/quire.db", dir.path().display());
        let db = Database::connect(&quire_store::DatabaseConfig::new(url)).unwrap();
        let current = dir.path().join("secret.key");
        let config = Config {
            secret_key_file: current.display().to_string(),
            ..Config::default()
        };
        let err = rotate_secret_key(db.clone(), &config, &dir.path().join("new.key"))
            .await
            .unwrap_err();
        assert!(matches!(err, ServerError::NoSecretKeyFile(_)), "{err}");
        assert!(!current.exists(), "no current key is made up");
        assert!(!dir.path().join("new.key").exists());

        sealing_key(&current).unwrap();
        let err = rotate_secret_key(db.clone(), &config, &current)
            .await
            .unwrap_err();
        assert!(matches!(err, ServerError::SameSecretKeyFile(_)), "{err}");

        let done = rotate_secret_key(db, &config, &dir.path().join("new.key"))
            .await
            .unwrap();
        assert_eq!(done["serverSecrets"], 0);
        assert!(dir.path().join("new.key").exists());
    }
}
