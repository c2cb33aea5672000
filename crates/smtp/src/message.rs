//! The message both adapters send.

use mail_send::mail_builder::MessageBuilder;
use quire_mail::OutboundMail;

/// The message for `mail`, sent from `from`.
#[must_use]
pub fn build<'a>(mail: &'a OutboundMail, from: &'a str) -> MessageBuilder<'a> {
    let domain = from.rsplit_once('@').map_or("quire.invalid", |(_, d)| d);
    MessageBuilder::new()
        .from(("Quire", from))
        .to(mail.to.as_str())
        .reply_to((mail.reply_to_name.as_str(), mail.reply_to.as_str()))
        .subject(mail.subject.as_str())
        .message_id(format!("{}@{domain}", mail.mail_id))
        .text_body(mail.text.as_str())
}
