//! The operator's commands: create an account, set a dashboard password, send a test
//! message.

use std::sync::Arc;

use quire_accounts::{AccountService, CreateAccount};
use quire_kernel::SystemClock;
use quire_store::Database;

use crate::config::Config;
use crate::error::ServerError;
use crate::wiring::{mailer, migrate};

pub(crate) async fn create_account(
    db: Database,
    input: CreateAccount,
) -> Result<serde_json::Value, ServerError> {
    migrate(&db).await?;
    let accounts = AccountService::new(Arc::new(db), Arc::new(SystemClock));
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
    let accounts = AccountService::new(Arc::new(db), Arc::new(SystemClock));
    accounts
        .set_password(login, password)
        .await
        .map_err(ServerError::SetPassword)
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
