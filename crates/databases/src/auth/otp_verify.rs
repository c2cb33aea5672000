//! `POST verify` with JSON: a mailed code with its address, or a link's token, spent for a
//! session (supabase-js's `verifyOtp`). The types of the mails here (`recovery`,
//! `magiclink`, `email`, `invite`) are one another's, as GoTrue's recovery and magic link
//! are: each spends the user's one code and link. A sign-up is confirmed on its link's page
//! instead, with its password (`signup`).

use quire_kernel::secret::sha256_hex;

use super::{
    AuthError, AuthSession, CODES_PER_5_MIN, FIVE_MINUTES, ONE_TIME_LIFETIME, ONE_TIME_TRIES,
    TenantAuth, lookup_email, plausible_link_token,
};
use crate::ports::CodeTry;

/// `value` unless it is empty.
fn given(value: Option<&str>) -> Option<&str> {
    value.filter(|v| !v.is_empty())
}

/// `POST verify` with JSON (supabase-js's `verifyOtp`): a mailed code with its address, or
/// a link's token, as GoTrue reads them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OtpVerification {
    Code { email: String, code: String },
    Link { token: String },
}

impl OtpVerification {
    /// The request of `POST verify`'s fields, checked as GoTrue checks them. The types of
    /// the mails here (`recovery`, `magiclink`, `email`, `invite`) are one another's: each
    /// spends the user's one code and link.
    ///
    /// # Errors
    /// `Validation` for a missing or unknown type, a token and a token hash both or
    /// neither, a token without an address, a token hash with one; a sign-up's type (its
    /// link's page confirms it) or a phone's. `TokenInvalid` for an address change, which
    /// is never pending here.
    pub fn parse(
        kind: Option<&str>,
        token: Option<&str>,
        token_hash: Option<&str>,
        email: Option<&str>,
        phone: Option<&str>,
    ) -> Result<Self, AuthError> {
        let (token, token_hash, email) = (given(token), given(token_hash), given(email));
        let Some(kind) = given(kind) else {
            return Err(AuthError::Validation(
                "Verify requires a verification type".into(),
            ));
        };
        if token.is_some() == token_hash.is_some() {
            return Err(AuthError::Validation(
                "Verify requires either a token or a token hash".into(),
            ));
        }
        match kind {
            "recovery" | "magiclink" | "email" | "invite" => {}
            "signup" => {
                return Err(AuthError::Validation(
                    "A sign-up is confirmed with the button of its email's link, with the \
                     password chosen at sign-up"
                        .into(),
                ));
            }
            "email_change" => return Err(AuthError::TokenInvalid),
            "sms" | "phone_change" => {
                return Err(AuthError::Validation(
                    "Phone numbers are not offered".into(),
                ));
            }
            _ => {
                return Err(AuthError::Validation(
                    "Unsupported verification type".into(),
                ));
            }
        }
        match (token, token_hash) {
            (Some(code), _) => {
                if given(phone).is_some() || email.is_none() {
                    return Err(AuthError::Validation(
                        "Only an email address or phone number should be provided on verify".into(),
                    ));
                }
                Ok(Self::Code {
                    email: email.unwrap_or_default().to_owned(),
                    code: code.to_owned(),
                })
            }
            (None, Some(hash)) => {
                if email.is_some() || given(phone).is_some() {
                    return Err(AuthError::Validation(
                        "Only the token_hash and type should be provided".into(),
                    ));
                }
                Ok(Self::Link {
                    token: hash.to_owned(),
                })
            }
            (None, None) => unreachable!("one of the two, checked above"),
        }
    }
}

fn is_code(code: &str) -> bool {
    code.len() == 6 && code.bytes().all(|b| b.is_ascii_digit())
}

impl TenantAuth {
    /// `POST verify` (JSON): a mailed code with its address, or a link's token; when it is
    /// the user's latest, unspent, within 24 hours and its tries not used up, it is spent,
    /// the address confirmed, and a session begins. Codes and tokens presented are counted
    /// per client address, and a code's tries against it.
    ///
    /// # Errors
    /// `RateLimited`; `Validation` for an address that cannot be one; `TokenInvalid` for a
    /// code that is not the address's (or none awaits), `LinkInvalid` for a token.
    pub async fn verify_otp(
        &self,
        client: &str,
        verification: OtpVerification,
    ) -> Result<AuthSession, AuthError> {
        self.admit("code", client, FIVE_MINUTES, CODES_PER_5_MIN)
            .await?;
        let now = self.clock.now();
        let user = match verification {
            OtpVerification::Code { email, code } => {
                let email = lookup_email(&email)?;
                if !is_code(&code) {
                    return Err(AuthError::TokenInvalid);
                }
                let tried = self
                    .users()
                    .try_code(
                        &email,
                        &self.code_mac(&email, &code),
                        now,
                        ONE_TIME_LIFETIME,
                        ONE_TIME_TRIES,
                    )
                    .await?;
                match tried {
                    CodeTry::Verified(user) => user,
                    CodeTry::Wrong { .. } | CodeTry::Unknown => {
                        return Err(AuthError::TokenInvalid);
                    }
                }
            }
            OtpVerification::Link { token } => {
                if !plausible_link_token(&token) {
                    return Err(AuthError::LinkInvalid);
                }
                self.users()
                    .spend_link(
                        &sha256_hex(token.as_bytes()),
                        now,
                        ONE_TIME_LIFETIME,
                        ONE_TIME_TRIES,
                    )
                    .await?
                    .ok_or(AuthError::LinkInvalid)?
            }
        };
        self.open_session(&user, "otp").await
    }
}
