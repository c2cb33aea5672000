//! The refresh-token grant: a token is rotated on every use to its successor, and a token
//! rotated before is a reuse that ends its session, but for the one just rotated, within
//! the grace, which gets its successor again (a lost answer; tabs refreshing at once).
//!
//! Only hashes are stored, so the successor is derived from the token (HMAC-SHA256 under
//! the database's secret): every presentation of one token names the same successor, and
//! however many race, each answer is the session's one current token. Without the secret,
//! a token says nothing of its successor.

use jsonwebtoken::{Algorithm, EncodingKey};
use quire_kernel::secret::sha256_hex;

use super::{AuthError, AuthSession, FIVE_MINUTES, REFRESH_GRANTS_PER_5_MIN, TenantAuth};
use crate::auth::REFRESH_REUSE_GRACE;
use crate::ports::Rotation;

/// What the successor's MAC covers besides the token, so that no other use of the secret
/// (a JWT's signature) ever equals one.
const SUCCESSOR_CONTEXT: &str = "quire refresh token successor\n";

/// The successor of refresh token `token` under `secret`: 43 characters of base64url, the
/// shape of the first token of a session.
#[must_use]
pub fn successor(secret: &str, token: &str) -> String {
    let message = format!("{SUCCESSOR_CONTEXT}{token}");
    jsonwebtoken::crypto::sign(
        message.as_bytes(),
        &EncodingKey::from_secret(secret.as_bytes()),
        Algorithm::HS256,
    )
    .unwrap_or_else(|_| unreachable!("HS256 signs any message"))
}

impl TenantAuth {
    /// `POST token?grant_type=refresh_token`: the token rotated, a new access token.
    ///
    /// # Errors
    /// `RateLimited`, `RefreshTokenNotFound`, `RefreshTokenReused` (the session is ended).
    pub async fn refresh_grant(
        &self,
        client: &str,
        refresh_token: &str,
    ) -> Result<AuthSession, AuthError> {
        self.admit("refresh", client, FIVE_MINUTES, REFRESH_GRANTS_PER_5_MIN)
            .await?;
        if refresh_token.is_empty() || refresh_token.len() > 256 {
            return Err(AuthError::RefreshTokenNotFound);
        }
        let next = successor(&self.instance.target().jwt_secret, refresh_token);
        let now = self.clock.now();
        match self
            .users()
            .rotate(
                &sha256_hex(refresh_token.as_bytes()),
                &sha256_hex(next.as_bytes()),
                now,
                REFRESH_REUSE_GRACE,
            )
            .await?
        {
            Rotation::Rotated { user, session } => {
                Ok(self.session(user, session, "password", next, now))
            }
            Rotation::Unknown => Err(AuthError::RefreshTokenNotFound),
            Rotation::Reused => Err(AuthError::RefreshTokenReused),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_successor_is_one_per_token_and_secret_and_shaped_as_a_token() {
        let one = successor("secret-a", "token-1");
        assert_eq!(one, successor("secret-a", "token-1"));
        assert_ne!(one, successor("secret-a", "token-2"));
        assert_ne!(one, successor("secret-b", "token-1"));
        assert_ne!(successor("secret-a", &one), one);
        assert_eq!(one.len(), 43);
        assert!(
            one.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
    }
}
