//! The `EndUserMail` port, as told: slots held and given back, messages queued.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use quire_databases::{EndUserMail, EndUserMailError, MailSlot};
use quire_kernel::{AccountId, InfraError};
use uuid::Uuid;

/// An account's mail for its end users: every slot held and given back, every message
/// queued (to whom, and in `messages` with its subject and text). `full` refuses every slot
/// (a used-up quota), `unsendable` every message (one that cannot be made).
#[derive(Debug, Default)]
pub struct MemoryEndUserMail {
    pub full: AtomicBool,
    pub unsendable: AtomicBool,
    pub held: Mutex<Vec<Uuid>>,
    pub released: Mutex<Vec<Uuid>>,
    pub queued: Mutex<Vec<String>>,
    /// Every message queued: to, subject, text.
    pub messages: Mutex<Vec<(String, String, String)>>,
}

#[async_trait]
impl EndUserMail for MemoryEndUserMail {
    async fn reserve(&self, _: AccountId) -> Result<MailSlot, EndUserMailError> {
        if self.full.load(Ordering::SeqCst) {
            return Err(EndUserMailError::QuotaExceeded);
        }
        let mail_id = Uuid::new_v4();
        self.held.lock().expect("mail lock").push(mail_id);
        Ok(MailSlot {
            mail_id,
            reply_to: "ann@example.com".into(),
            reply_to_name: "ann".into(),
        })
    }

    async fn release(&self, slot: &MailSlot) -> Result<(), InfraError> {
        self.released.lock().expect("mail lock").push(slot.mail_id);
        Ok(())
    }

    fn send(
        &self,
        _: MailSlot,
        to: &str,
        subject: &str,
        text: &str,
    ) -> Result<(), EndUserMailError> {
        if self.unsendable.load(Ordering::SeqCst) {
            return Err(EndUserMailError::Failed("no such message".into()));
        }
        self.queued.lock().expect("mail lock").push(to.to_owned());
        self.messages.lock().expect("mail lock").push((
            to.to_owned(),
            subject.to_owned(),
            text.to_owned(),
        ));
        Ok(())
    }
}
