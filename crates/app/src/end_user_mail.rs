//! The database service's email to end users, through the mail use case: on behalf of the
//! database's account and within its daily quota, its slot held in the request and the
//! message sent off the request path (the account flows' `MailDispatch`).

use std::sync::Arc;

use async_trait::async_trait;
use quire_databases::{EndUserMail, EndUserMailError, MailSlot};
use quire_kernel::{AccountId, InfraError};
use quire_mail::{Held, MailDispatch, MailError, MailRequest, MailService};

/// [`EndUserMail`] over [`MailService`] and [`MailDispatch`].
#[derive(Debug, Clone)]
pub(crate) struct AccountMail {
    pub mail: MailService,
    pub dispatch: Arc<dyn MailDispatch>,
}

#[async_trait]
impl EndUserMail for AccountMail {
    async fn reserve(&self, account: AccountId) -> Result<MailSlot, EndUserMailError> {
        match self.mail.hold_for_account(account).await {
            Ok(held) => Ok(MailSlot {
                mail_id: held.mail_id,
                reply_to: held.reply_to,
                reply_to_name: held.reply_to_name,
            }),
            Err(MailError::QuotaExceeded { .. }) => Err(EndUserMailError::QuotaExceeded),
            Err(e) => Err(EndUserMailError::Failed(e.to_string())),
        }
    }

    async fn release(&self, slot: &MailSlot) -> Result<(), InfraError> {
        self.mail.release(slot.mail_id).await
    }

    fn send(
        &self,
        slot: MailSlot,
        to: &str,
        subject: &str,
        text: &str,
    ) -> Result<(), EndUserMailError> {
        let held = Held {
            mail_id: slot.mail_id,
            used: 0,
            reply_to: slot.reply_to,
            reply_to_name: slot.reply_to_name,
        };
        let request = MailRequest {
            to: to.to_owned(),
            subject: subject.to_owned(),
            text: text.to_owned(),
        };
        let mail = held
            .compose(&request)
            .map_err(|e| EndUserMailError::Failed(e.to_string()))?;
        self.dispatch.dispatch(mail);
        Ok(())
    }
}
