//! Password hashing with argon2id (the crate's default algorithm and parameters: 19 MiB,
//! 2 passes, 1 lane), each hash with its own random salt, stored as a PHC string.

use argon2::{Argon2, PasswordHasher, PasswordVerifier};

/// Shortest accepted password, in characters.
pub const MIN_PASSWORD_CHARS: usize = 8;
/// Longest accepted password, in bytes (bounds the hashing cost of hostile input).
pub const MAX_PASSWORD_BYTES: usize = 1024;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PasswordError {
    #[error("password must be {MIN_PASSWORD_CHARS} to {MAX_PASSWORD_BYTES} bytes long")]
    BadLength,
    #[error("password hashing failed: {0}")]
    Hashing(String),
}

/// Hashes a password for storage.
///
/// # Errors
/// [`PasswordError::BadLength`] outside the length bounds; [`PasswordError::Hashing`] if
/// the hasher fails.
pub fn hash_password(password: &str) -> Result<String, PasswordError> {
    if password.chars().count() < MIN_PASSWORD_CHARS {
        return Err(PasswordError::BadLength);
    }
    hash_password_unchecked(password)
}

/// Hashes any non-empty password of at most [`MAX_PASSWORD_BYTES`] (page passwords, whose
/// length the page owner chooses).
///
/// # Errors
/// [`PasswordError::BadLength`] when empty or too long; [`PasswordError::Hashing`] if the
/// hasher fails.
pub fn hash_password_unchecked(password: &str) -> Result<String, PasswordError> {
    if password.is_empty() || password.len() > MAX_PASSWORD_BYTES {
        return Err(PasswordError::BadLength);
    }
    Argon2::default()
        .hash_password(password.as_bytes())
        .map(|h| h.to_string())
        .map_err(|e| PasswordError::Hashing(e.to_string()))
}

/// Whether `password` matches the stored PHC string (argon2 compares in constant time).
#[must_use]
pub fn verify_password(password: &str, stored: &str) -> bool {
    password.len() <= MAX_PASSWORD_BYTES
        && Argon2::default()
            .verify_password(password.as_bytes(), stored)
            .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_argon2id_salted_and_verify() {
        let a = hash_password("correct horse").unwrap();
        let b = hash_password("correct horse").unwrap();
        assert!(a.starts_with("$argon2id$"), "{a}");
        assert_ne!(a, b, "each hash has its own salt");
        assert!(verify_password("correct horse", &a));
        assert!(!verify_password("correct horsf", &a));
        assert!(!verify_password("correct horse", "not a phc string"));
    }

    #[test]
    fn length_bounds() {
        assert_eq!(hash_password("short"), Err(PasswordError::BadLength));
        assert_eq!(
            hash_password(&"x".repeat(MAX_PASSWORD_BYTES + 1)),
            Err(PasswordError::BadLength)
        );
    }
}
