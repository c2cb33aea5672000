//! The outbox: each message as an `.eml` file, for instances without a relay.

use std::path::PathBuf;

use async_trait::async_trait;
use quire_mail::{Mailer, OutboundMail, SendFailure};

use crate::message::build;

/// Writes each message to `{dir}/{mail_id}.eml`: first to a temporary name, then renamed,
/// so a reader never sees half a message.
#[derive(Debug, Clone)]
pub struct OutboxMailer {
    dir: PathBuf,
    from: String,
}

impl OutboxMailer {
    #[must_use]
    pub fn new(dir: impl Into<PathBuf>, from: impl Into<String>) -> Self {
        Self {
            dir: dir.into(),
            from: from.into(),
        }
    }

    /// Where the messages go.
    #[must_use]
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }
}

#[async_trait]
impl Mailer for OutboxMailer {
    async fn send(&self, mail: &OutboundMail) -> Result<String, SendFailure> {
        let failed =
            |e: std::io::Error| SendFailure::Unreachable(format!("cannot write the outbox: {e}"));
        let bytes = build(mail, &self.from).write_to_vec().map_err(failed)?;
        tokio::fs::create_dir_all(&self.dir).await.map_err(failed)?;
        let name = format!("{}.eml", mail.mail_id);
        let temporary = self.dir.join(format!(".{name}.tmp"));
        tokio::fs::write(&temporary, &bytes).await.map_err(failed)?;
        tokio::fs::rename(&temporary, self.dir.join(&name))
            .await
            .map_err(failed)?;
        Ok(format!("written to the outbox as {name}"))
    }
}
