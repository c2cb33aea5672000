//! What stops the server or an admin command, with its cause. `main` prints the chain and
//! picks the exit code from the kind.

use std::error::Error as _;

use quire_accounts::{CreateAccountError, SetActivatedError, SetPasswordError};
use quire_blobs::BlobConfigError;
use quire_kernel::InfraError;
use quire_store::StoreError;

use crate::config::ConfigError;

#[derive(Debug, thiserror::Error)]
pub(crate) enum ServerError {
    #[error("configuration error: {0}")]
    Config(#[from] ConfigError),
    #[error("QUIRE_PAGES_URL {0}")]
    PagesUrl(String),
    #[error("QUIRE_TRUSTED_PROXIES: {0}")]
    TrustedProxies(String),
    #[error("QUIRE_STORAGE_URL: {0}")]
    Storage(#[from] BlobConfigError),
    #[error("cannot open the database")]
    Connect(#[source] StoreError),
    #[error("cannot bring the database schema up to date")]
    Migrate(#[source] StoreError),
    #[error("cannot read the server's secrets (signing keys)")]
    SigningKey(#[source] InfraError),
    #[error("cannot read or make the secret key file {path}")]
    SecretKeyFile {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the secret key file {0} must hold 64 hexadecimal digits (32 bytes)")]
    SecretKeyMalformed(std::path::PathBuf),
    #[error("cannot seal the second-factor secrets stored before sealing")]
    SealSecrets(#[source] InfraError),
    #[error("cannot seal the signing keys stored before sealing (nothing was changed)")]
    SealStoredSecrets(#[source] StoreError),
    #[error(
        "the secret key file {0} does not exist: it is the key the stored secrets are sealed under"
    )]
    NoSecretKeyFile(std::path::PathBuf),
    #[error("the new key file {0} is the current one: give the path of a new file")]
    SameSecretKeyFile(std::path::PathBuf),
    #[error("cannot re-seal the stored secrets under the new key (nothing was changed)")]
    Reseal(#[source] StoreError),
    #[error("the database service cannot start: {0}")]
    Databases(#[source] quire_kernel::InfraError),
    #[error("cannot issue the first-run setup link")]
    FirstRun(#[source] InfraError),
    #[error("cannot listen on {addr} ({listener})")]
    Listen {
        listener: &'static str,
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the {listener} listener stopped")]
    Serve {
        listener: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot create the account: {0}")]
    CreateAccount(#[source] CreateAccountError),
    #[error("cannot set the password: {0}")]
    SetPassword(#[source] SetPasswordError),
    #[error("cannot change the account's activation: {0}")]
    SetActivated(#[source] SetActivatedError),
    #[error("cannot read the password from standard input")]
    PasswordInput(#[source] std::io::Error),
    #[error("{0}")]
    Mail(#[source] quire_smtp::RelayConfigError),
    #[error("{0}")]
    Region(String),
    #[error("invitation list: {0}")]
    Invite(#[source] quire_accounts::InviteError),
    #[error("cannot read {path}")]
    ReadFile {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("backup: {0}")]
    Backup(String),
    #[error("restore refused: {0}")]
    Restore(String),
    #[error("cannot install the metrics recorder: {0}")]
    Metrics(String),
    #[error("the test message was not sent: {0}")]
    MailTest(#[source] quire_mail::SendFailure),
}

impl ServerError {
    /// 2 when the configuration could not be read or the database not opened, before any
    /// command ran; 1 for a command that failed.
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            Self::Config(_) | Self::Connect(_) | Self::Mail(_) | Self::SecretKeyMalformed(_) => 2,
            _ => 1,
        }
    }

    /// The error and each cause under it, on one line: `a: b: c`. A cause whose text the
    /// error already shows is not repeated.
    pub(crate) fn chain(&self) -> String {
        let mut line = self.to_string();
        let mut cause = self.source();
        while let Some(e) = cause {
            let text = e.to_string();
            if !line.ends_with(&text) {
                line.push_str(": ");
                line.push_str(&text);
            }
            cause = e.source();
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_names_every_cause_once() {
        let e = ServerError::Listen {
            listener: "API",
            addr: "127.0.0.1:1".into(),
            source: std::io::Error::new(std::io::ErrorKind::AddrInUse, "address in use"),
        };
        assert_eq!(
            e.chain(),
            "cannot listen on 127.0.0.1:1 (API): address in use"
        );
        assert_eq!(e.exit_code(), 1);
        let e = ServerError::CreateAccount(CreateAccountError::HandleTaken);
        assert_eq!(
            e.chain(),
            "cannot create the account: handle already taken (by an account or a project slug)"
        );
        assert_eq!(ServerError::PagesUrl("has no host".into()).exit_code(), 1);
    }
}
