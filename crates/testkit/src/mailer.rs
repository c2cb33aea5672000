//! A `Mailer` for domain tests: it keeps what it was given and answers as told.

use std::sync::Mutex;

use async_trait::async_trait;
use quire_mail::{MailDispatch, Mailer, OutboundMail, SendFailure};

/// Records every message; [`MemoryMailer::answer`] makes the following sends fail.
#[derive(Debug, Default)]
pub struct MemoryMailer {
    sent: Mutex<Vec<OutboundMail>>,
    failure: Mutex<Option<SendFailure>>,
}

impl MemoryMailer {
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Every later send fails with `failure` (`None`: they succeed again).
    pub fn answer(&self, failure: Option<SendFailure>) {
        *self.failure.lock().expect("lock") = failure;
    }

    /// The messages the relay accepted, oldest first.
    #[must_use]
    pub fn sent(&self) -> Vec<OutboundMail> {
        self.sent.lock().expect("lock").clone()
    }
}

#[async_trait]
impl Mailer for MemoryMailer {
    async fn send(&self, mail: &OutboundMail) -> Result<String, SendFailure> {
        if let Some(failure) = self.failure.lock().expect("lock").clone() {
            return Err(failure);
        }
        self.sent.lock().expect("lock").push(mail.clone());
        Ok("250 2.0.0 queued".into())
    }
}

/// Dispatched messages are kept at once (a refusal set by [`MemoryMailer::answer`] drops
/// them, as the real dispatch logs and drops a refused message).
impl MailDispatch for MemoryMailer {
    fn dispatch(&self, mail: OutboundMail) {
        if self.failure.lock().expect("lock").is_none() {
            self.sent.lock().expect("lock").push(mail);
        }
    }
}
