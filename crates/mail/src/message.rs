//! A message as the relay receives it, and the checks its fields pass first.

use uuid::Uuid;

/// Longest recipient address (RFC 5321 §4.5.3.1.3's path limit, less the brackets).
pub const MAX_TO_CHARS: usize = 254;
/// Longest subject, in characters.
pub const MAX_SUBJECT_CHARS: usize = 200;
/// Largest body, in bytes of UTF-8.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;

/// One recipient address: ASCII, strictly parsed (no display name, no domain literal, a
/// dotted domain), at most 254 characters. Its case is kept: only the domain is
/// case-insensitive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recipient(String);

impl Recipient {
    /// # Errors
    /// Why `raw` is not one plain address, in words for the `to` field.
    pub fn parse(raw: &str) -> Result<Self, String> {
        if raw.is_empty() {
            return Err("to must not be empty".into());
        }
        if raw.chars().count() > MAX_TO_CHARS {
            return Err(format!("to must be at most {MAX_TO_CHARS} characters"));
        }
        if !raw.is_ascii() {
            return Err(
                "to must be an ASCII address (internationalised addresses are not supported)"
                    .into(),
            );
        }
        if raw.bytes().any(|b| b.is_ascii_control() || b == b' ') {
            return Err("to must not contain spaces or control characters".into());
        }
        if raw.contains(',') || raw.contains(';') {
            return Err("to must be exactly one address".into());
        }
        let options = email_address::Options {
            minimum_sub_domains: 2,
            allow_domain_literal: false,
            allow_display_text: false,
        };
        email_address::EmailAddress::parse_with_options(raw, options)
            .map_err(|e| format!("to is not a valid address: {e}"))?;
        Ok(Self(raw.to_owned()))
    }

    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Checks a subject: 1-200 characters, no control characters (a CR or LF would start a
/// new header).
///
/// # Errors
/// Why, in words for the `subject` field.
pub fn check_subject(raw: &str) -> Result<String, String> {
    let n = raw.chars().count();
    if raw.trim().is_empty() || n > MAX_SUBJECT_CHARS {
        return Err(format!("subject must be 1-{MAX_SUBJECT_CHARS} characters"));
    }
    if raw.chars().any(char::is_control) {
        return Err("subject must not contain control characters (no line breaks)".into());
    }
    Ok(raw.to_owned())
}

/// Checks a body: not empty, at most 64 KiB, no NUL.
///
/// # Errors
/// Why, in words for the `text` field.
pub fn check_text(raw: &str) -> Result<String, String> {
    if raw.trim().is_empty() {
        return Err("text must not be empty".into());
    }
    if raw.len() > MAX_TEXT_BYTES {
        return Err(format!("text must be at most {MAX_TEXT_BYTES} bytes"));
    }
    if raw.contains('\0') {
        return Err("text must not contain NUL characters".into());
    }
    Ok(raw.to_owned())
}

/// A checked message, addressed: what a [`crate::ports::Mailer`] sends.
#[derive(Clone, PartialEq, Eq)]
pub struct OutboundMail {
    /// Quire's id of the message; the `Message-ID` is built from it.
    pub mail_id: Uuid,
    pub to: Recipient,
    /// The caller's account address and handle, for Reply-To.
    pub reply_to: String,
    pub reply_to_name: String,
    pub subject: String,
    pub text: String,
}

impl std::fmt::Debug for OutboundMail {
    /// Without the text: it is the account holder's, and stays out of every log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutboundMail")
            .field("mail_id", &self.mail_id)
            .field("to", &self.to)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recipients_are_one_plain_ascii_address() {
        for good in [
            "ann@example.com",
            "Ann.Smith+news@mail.example.org",
            "x@a.co",
            "o'brien@example.ie",
        ] {
            assert_eq!(
                Recipient::parse(good).map(|r| r.0),
                Ok(good.to_owned()),
                "{good}"
            );
        }
        let long_local = format!("{}@example.com", "a".repeat(65));
        let too_long = format!("{}@{}.com", "a".repeat(60), "b".repeat(200));
        for bad in [
            "",
            "ann",
            "ann@",
            "@example.com",
            "ann@localhost",
            "ann@[127.0.0.1]",
            "Ann <ann@example.com>",
            "ann@example.com, bob@example.com",
            "ann@example.com;bob@example.com",
            "ann@example.com\r\nRCPT TO:<evil@example.com>",
            "ann@example.com\n",
            " ann@example.com",
            "ann smith@example.com",
            "anné@example.com",
            "ann@exämple.com",
            "ann@@example.com",
            "ann@example..com",
            &long_local,
            &too_long,
        ] {
            assert!(Recipient::parse(bad).is_err(), "{bad:?} must be refused");
        }
    }

    #[test]
    fn subjects_cannot_break_the_header_and_texts_are_bounded() {
        assert!(check_subject("Your report").is_ok());
        assert!(check_subject(&"é".repeat(200)).is_ok());
        for bad in [
            "",
            "   ",
            "Hi\r\nBcc: evil@example.com",
            "Hi\nthere",
            "tab\there",
            &"x".repeat(201),
        ] {
            assert!(check_subject(bad).is_err(), "{bad:?}");
        }
        assert!(check_text("hello\n\nbye").is_ok());
        assert!(check_text(&"x".repeat(MAX_TEXT_BYTES)).is_ok());
        for bad in ["", "\n \n", "nul\0inside", &"x".repeat(MAX_TEXT_BYTES + 1)] {
            assert!(check_text(bad).is_err(), "{:?}", &bad[..bad.len().min(20)]);
        }
    }
}
