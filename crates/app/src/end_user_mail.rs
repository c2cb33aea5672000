//! The database service's email to end users, through the mail use case: on behalf of the
//! database's account and within its daily quota.

use async_trait::async_trait;
use quire_databases::{EndUserMail, EndUserMailError};
use quire_kernel::AccountId;
use quire_mail::{MailError, MailRequest, MailService};

/// [`EndUserMail`] over [`MailService`].
#[derive(Debug, Clone)]
pub(crate) struct AccountMail(pub MailService);

#[async_trait]
impl EndUserMail for AccountMail {
    async fn send(
        &self,
        account: AccountId,
        to: &str,
        subject: &str,
        text: &str,
    ) -> Result<(), EndUserMailError> {
        let request = MailRequest {
            to: to.to_owned(),
            subject: subject.to_owned(),
            text: text.to_owned(),
        };
        match self.0.send_for_account(account, &request).await {
            Ok(_) => Ok(()),
            Err(MailError::QuotaExceeded { .. }) => Err(EndUserMailError::QuotaExceeded),
            Err(e) => Err(EndUserMailError::Failed(e.to_string())),
        }
    }
}
