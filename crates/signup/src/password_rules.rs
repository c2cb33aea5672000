//! The rules an account password must meet, after NIST SP 800-63B rev. 4: length, no
//! composition rules, and a blocklist of what is guessed first.

use quire_kernel::{InfraError, Offload, offloaded};

/// Shortest account password, in characters (the password may be the only factor).
pub const MIN_CHARS: usize = 15;
/// Longest account password, in characters; nothing is truncated.
pub const MAX_CHARS: usize = 128;

/// Long passwords that lists of leaked passwords put first, compared case-insensitively
/// after spaces are taken out.
const BLOCKLIST: &[&str] = &[
    "123456789012345",
    "1234567890123456",
    "12345678901234567890",
    "abcdefghijklmnop",
    "abcdefghijklmnopqrstuvwxyz",
    "correcthorsebatterystaple",
    "iloveyouiloveyou",
    "letmeinletmein",
    "passwordpassword",
    "password12345678",
    "password123456789",
    "qwertyuiopasdfgh",
    "qwertyuiopasdfghjkl",
    "qwertyuiopasdfghjklzxcvbnm",
    "1q2w3e4r5t6y7u8i",
    "zaq12wsxcde34rfv",
    "changemechangeme",
    "welcomewelcome",
    "quirequirequire",
];

/// Why a password is refused; the text is shown to the person choosing it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PasswordRule {
    #[error("the password must be {MIN_CHARS} to {MAX_CHARS} characters long")]
    Length,
    #[error("that password is among the first ones guessed; choose another")]
    Blocklisted,
    #[error("the password must not contain your handle or email address")]
    ContainsIdentity,
}

/// Checks `password` for the account with `handle` and `email`.
///
/// # Errors
/// The first rule it breaks.
pub fn check(password: &str, handle: &str, email: &str) -> Result<(), PasswordRule> {
    let chars = password.chars().count();
    if !(MIN_CHARS..=MAX_CHARS).contains(&chars) {
        return Err(PasswordRule::Length);
    }
    let folded: String = password
        .chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect();
    let one_repeated = folded.chars().all(|c| folded.starts_with(c));
    if one_repeated || BLOCKLIST.contains(&folded.as_str()) {
        return Err(PasswordRule::Blocklisted);
    }
    let local_part = email.split('@').next().unwrap_or_default();
    for identity in [handle, email, local_part] {
        if identity.chars().count() >= 4 && folded.contains(&identity.to_lowercase()) {
            return Err(PasswordRule::ContainsIdentity);
        }
    }
    Ok(())
}

/// The argon2id hash of a password that passed [`check`] (at most 512 bytes, within the
/// hasher's bound), made on `offload`: tens of milliseconds of CPU that no async worker
/// should spend.
pub(crate) async fn hash(offload: &dyn Offload, password: &str) -> Result<String, InfraError> {
    let password = password.to_owned();
    offloaded(offload, move || {
        quire_kernel::password::hash_password_unchecked(&password)
    })
    .await?
    .map_err(|e| InfraError::new(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifteen_to_a_hundred_and_twenty_eight_characters() {
        assert_eq!(
            check(&"a1".repeat(7), "ann", "ann@example.com"),
            Err(PasswordRule::Length)
        );
        assert_eq!(
            check("tall-tower-fifteen", "ann", "ann@example.com"),
            Ok(())
        );
        // Characters, not bytes: fifteen non-ASCII letters are enough.
        assert_eq!(
            check("ŝŭńŝĥíńé-ĝŕàšš", "ann", "ann@example.com"),
            Err(PasswordRule::Length)
        );
        assert_eq!(check("ŝŭńŝĥíńé-ĝŕàšš!", "ann", "ann@example.com"), Ok(()));
        let longest: String = "ab3".repeat(42) + "xy";
        assert_eq!(longest.chars().count(), MAX_CHARS);
        assert_eq!(check(&longest, "ann", "ann@example.com"), Ok(()));
        assert_eq!(
            check(&format!("{longest}z"), "ann", "ann@example.com"),
            Err(PasswordRule::Length)
        );
    }

    #[test]
    fn the_blocklist_ignores_case_and_spaces() {
        for weak in [
            "PasswordPassword",
            "correct horse battery staple",
            "aaaaaaaaaaaaaaaa",
        ] {
            assert_eq!(
                check(weak, "ann", "ann@example.com"),
                Err(PasswordRule::Blocklisted),
                "{weak}"
            );
        }
    }

    #[test]
    fn no_handle_or_address_inside() {
        assert_eq!(
            check("my-name-is-annabel-ok", "annabel", "a@example.com"),
            Err(PasswordRule::ContainsIdentity)
        );
        assert_eq!(
            check("hello-Bob.Smith-world", "bsmith", "bob.smith@example.com"),
            Err(PasswordRule::ContainsIdentity)
        );
        // Short identities would refuse too much.
        assert_eq!(
            check("annual-report-2026", "ann", "ann@example.com"),
            Ok(())
        );
    }
}
