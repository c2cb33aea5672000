//! Sending off the request path: each message goes to the mailer in a task of its own. The
//! messages not yet sent are the mail queue of the metrics.

use std::sync::Arc;

use quire_mail::{MailDispatch, Mailer, OutboundMail};

/// Hands every message to `mailer` in a spawned task and logs the outcome (mail id and
/// the relay's answer, never the text). Must be used inside a tokio runtime.
#[derive(Debug, Clone)]
pub struct BackgroundDispatch {
    mailer: Arc<dyn Mailer>,
}

impl BackgroundDispatch {
    #[must_use]
    pub fn new(mailer: Arc<dyn Mailer>) -> Self {
        Self { mailer }
    }
}

impl MailDispatch for BackgroundDispatch {
    fn dispatch(&self, mail: OutboundMail) {
        let mailer = self.mailer.clone();
        let queued = metrics::gauge!("quire_mail_queue_depth");
        queued.increment(1);
        tokio::spawn(async move {
            let outcome = match mailer.send(&mail).await {
                Ok(reply) => {
                    tracing::info!(mail_id = %mail.mail_id, %reply, "account mail sent");
                    "sent"
                }
                Err(failure) => {
                    tracing::warn!(mail_id = %mail.mail_id, %failure, "account mail not sent");
                    "failed"
                }
            };
            queued.decrement(1);
            metrics::counter!("quire_mail_dispatched_total", "outcome" => outcome).increment(1);
        });
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use quire_mail::Recipient;
    use uuid::Uuid;

    use super::*;
    use crate::OutboxMailer;

    #[tokio::test]
    async fn a_dispatched_message_reaches_the_mailer_after_dispatch_returns() {
        let dir = tempfile::tempdir().expect("dir");
        let outbox = OutboxMailer::new(dir.path().to_str().expect("utf-8"), "quire@example.com");
        let dispatch = BackgroundDispatch::new(Arc::new(outbox));
        let mail_id = Uuid::now_v7();
        let written = dir.path().join(format!("{mail_id}.eml"));
        dispatch.dispatch(OutboundMail {
            mail_id,
            to: Recipient::parse("ann@example.com").expect("address"),
            reply_to: "quire@example.com".into(),
            reply_to_name: "Quire".into(),
            subject: "Confirm".into(),
            text: "the link".into(),
        });
        for _ in 0..200 {
            if written.exists() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let eml = std::fs::read_to_string(&written).expect("the message reached the outbox");
        assert!(eml.contains("Subject: Confirm"), "{eml}");
    }
}
