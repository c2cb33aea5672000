//! A relay reached over SMTP through `mail-send`.

use std::net::IpAddr;
use std::time::Duration;

use async_trait::async_trait;
use mail_send::SmtpClientBuilder;
use quire_mail::{Mailer, OutboundMail, Recipient, SendFailure};

use crate::message::build;

/// The whole exchange with the relay, connect to QUIT, must end within this.
pub const RELAY_DEADLINE: Duration = Duration::from_secs(15);

/// How to reach the relay.
#[derive(Clone, PartialEq, Eq)]
pub struct RelayConfig {
    pub host: String,
    pub port: u16,
    pub security: Security,
    pub credentials: Option<(String, String)>,
    /// The operator's address: the From of every message.
    pub from: String,
}

impl std::fmt::Debug for RelayConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RelayConfig")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("security", &self.security)
            .field("user", &self.credentials.as_ref().map(|(u, _)| u))
            .finish_non_exhaustive()
    }
}

/// The connection's protection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Security {
    /// `smtps://`: TLS from the first byte (port 465).
    ImplicitTls,
    /// `smtp://…?tls=required`: STARTTLS, refused if the relay does not offer it.
    StartTls,
    /// `smtp://`: none at all; a loopback relay only, and never with credentials.
    Plain,
}

/// Why `QUIRE_SMTP_URL` cannot be used; the text never holds the password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RelayConfigError {
    #[error("QUIRE_SMTP_URL is not a URL")]
    NotAUrl,
    #[error("QUIRE_SMTP_URL must start with smtps:// or smtp://")]
    Scheme,
    #[error("QUIRE_SMTP_URL names no host")]
    NoHost,
    #[error(
        "plain smtp:// is allowed only to a loopback relay (127.0.0.1, [::1], localhost); use smtps:// or ?tls=required"
    )]
    PlainNotLoopback,
    #[error("credentials are never sent over plain smtp://; use smtps:// or ?tls=required")]
    PlainWithCredentials,
    #[error("QUIRE_SMTP_URL: unknown tls={0} (use tls=required)")]
    TlsMode(String),
}

impl RelayConfig {
    /// Reads `smtps://user:pass@host:465`, `smtp://host:587?tls=required` or
    /// `smtp://127.0.0.1:2525`; `password` (from `QUIRE_SMTP_PASSWORD`) stands in for a
    /// password the URL leaves out.
    ///
    /// # Errors
    /// [`RelayConfigError`].
    pub fn parse(raw: &str, password: Option<&str>, from: &str) -> Result<Self, RelayConfigError> {
        let url = url::Url::parse(raw).map_err(|_| RelayConfigError::NotAUrl)?;
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or(RelayConfigError::NoHost)?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let tls = url
            .query_pairs()
            .find(|(k, _)| k == "tls")
            .map(|(_, v)| v.into_owned());
        let security = match (url.scheme(), tls.as_deref()) {
            ("smtps", _) => Security::ImplicitTls,
            ("smtp", Some("required")) => Security::StartTls,
            ("smtp", None) => Security::Plain,
            ("smtp", Some(other)) => return Err(RelayConfigError::TlsMode(other.to_owned())),
            _ => return Err(RelayConfigError::Scheme),
        };
        let user = decode(url.username());
        let pass = url
            .password()
            .map(decode)
            .or_else(|| password.map(str::to_owned));
        let credentials = (!user.is_empty()).then(|| (user, pass.unwrap_or_default()));
        if security == Security::Plain {
            let loopback =
                host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
            if !loopback {
                return Err(RelayConfigError::PlainNotLoopback);
            }
            if credentials.is_some() {
                return Err(RelayConfigError::PlainWithCredentials);
            }
        }
        let port = url.port().unwrap_or(match security {
            Security::ImplicitTls => 465,
            Security::StartTls => 587,
            Security::Plain => 25,
        });
        Ok(Self {
            host,
            port,
            security,
            credentials,
            from: from.to_owned(),
        })
    }
}

fn decode(s: &str) -> String {
    url::form_urlencoded::parse(format!("v={s}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

/// Sends through the relay, one connection per message.
#[derive(Debug, Clone)]
pub struct SmtpMailer {
    config: RelayConfig,
    deadline: Duration,
}

impl SmtpMailer {
    /// A mailer whose exchanges end within [`RELAY_DEADLINE`].
    #[must_use]
    pub fn new(config: RelayConfig) -> Self {
        Self {
            config,
            deadline: RELAY_DEADLINE,
        }
    }

    /// The same with another deadline (tests of a relay that never answers).
    #[must_use]
    pub fn with_deadline(self, deadline: Duration) -> Self {
        Self { deadline, ..self }
    }

    async fn exchange(&self, mail: &OutboundMail) -> Result<String, SendFailure> {
        let c = &self.config;
        let mut builder = SmtpClientBuilder::new(c.host.clone(), c.port)
            .map_err(SendFailure::Unreachable)?
            .implicit_tls(c.security == Security::ImplicitTls)
            .timeout(self.deadline);
        if let Some((user, pass)) = &c.credentials {
            builder = builder.credentials((user.clone(), pass.clone()));
        }
        let message = build(mail, &c.from);
        let reply = match c.security {
            Security::Plain => {
                let mut client = builder.connect_plain().await.map_err(failure)?;
                let reply = client.send(message).await.map_err(failure)?;
                let _ = client.quit().await;
                reply
            }
            Security::ImplicitTls | Security::StartTls => {
                let mut client = builder.connect().await.map_err(failure)?;
                let reply = client.send(message).await.map_err(failure)?;
                let _ = client.quit().await;
                reply
            }
        };
        Ok(format!("{} {}", reply.code(), reply.message()))
    }
}

/// A relay's refusal, or what failed on the way; never the credentials.
fn failure(e: mail_send::Error) -> SendFailure {
    match e {
        mail_send::Error::UnexpectedReply(r) | mail_send::Error::AuthenticationFailed(r) => {
            let [a, b, c] = r.esc;
            SendFailure::Rejected(format!("{} {a}.{b}.{c} {}", r.code, r.message))
        }
        mail_send::Error::Timeout => {
            SendFailure::Unreachable("the relay did not answer in time".into())
        }
        other => SendFailure::Unreachable(other.to_string()),
    }
}

#[async_trait]
impl Mailer for SmtpMailer {
    async fn send(&self, mail: &OutboundMail) -> Result<String, SendFailure> {
        // The recipient goes raw into RCPT TO: check it again right before.
        Recipient::parse(mail.to.as_str()).map_err(SendFailure::Rejected)?;
        match tokio::time::timeout(self.deadline, self.exchange(mail)).await {
            Ok(result) => result,
            Err(_) => Err(SendFailure::Unreachable(format!(
                "the relay did not finish within {} s",
                self.deadline.as_secs()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is the failure report

    use super::*;

    #[test]
    fn urls_choose_the_protection_and_plain_is_loopback_only() {
        let from = "quire@example.com";
        let c = RelayConfig::parse("smtps://ann:s%40cret@mail.example.com", None, from).unwrap();
        assert_eq!((c.security, c.port), (Security::ImplicitTls, 465));
        assert_eq!(c.credentials, Some(("ann".into(), "s@cret".into())));
        let c =
            RelayConfig::parse("smtp://mail.example.com:2587?tls=required", None, from).unwrap();
        assert_eq!((c.security, c.port), (Security::StartTls, 2587));
        let c = RelayConfig::parse(
            "smtp://relay@mail.example.com?tls=required",
            Some("pw"),
            from,
        )
        .unwrap();
        assert_eq!(c.credentials, Some(("relay".into(), "pw".into())));
        let c = RelayConfig::parse("smtp://127.0.0.1:2525", None, from).unwrap();
        assert_eq!(
            (c.security, c.host.as_str(), c.port),
            (Security::Plain, "127.0.0.1", 2525)
        );
        assert!(RelayConfig::parse("smtp://[::1]:25", None, from).is_ok());
        assert_eq!(
            RelayConfig::parse("smtp://mail.example.com", None, from),
            Err(RelayConfigError::PlainNotLoopback)
        );
        assert_eq!(
            RelayConfig::parse("smtp://u:p@127.0.0.1:2525", None, from),
            Err(RelayConfigError::PlainWithCredentials)
        );
        assert_eq!(
            RelayConfig::parse("http://x", None, from),
            Err(RelayConfigError::Scheme)
        );
        assert_eq!(
            RelayConfig::parse("smtp://h?tls=maybe", None, from),
            Err(RelayConfigError::TlsMode("maybe".into()))
        );
        let shown = format!(
            "{:?}",
            RelayConfig::parse("smtps://ann:hunter2@h", None, from).unwrap()
        );
        assert!(!shown.contains("hunter2"), "{shown}");
    }
}
