//! A database's end users and their sessions, as GoTrue shows them.

use quire_kernel::secret::sha256_hex;
use serde_json::{Map, Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

/// A user of an owner's app, in the database's `auth.users`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndUser {
    pub id: Uuid,
    pub email: String,
    pub email_confirmed_at: Option<OffsetDateTime>,
    /// What the user may change (`data` on sign-up and `PUT user`).
    pub user_metadata: Value,
    /// What only the owner may change (with SQL): `provider`, `providers`, roles of their own.
    pub app_metadata: Value,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
    pub last_sign_in_at: Option<OffsetDateTime>,
}

fn rfc3339(t: OffsetDateTime) -> Value {
    t.format(&Rfc3339).map_or(Value::Null, Value::String)
}

impl EndUser {
    /// The user in GoTrue's JSON, as supabase-js and supabase-py parse it.
    #[must_use]
    pub fn to_json(&self) -> Value {
        let confirmed = self.email_confirmed_at.map_or(Value::Null, rfc3339);
        json!({
            "id": self.id,
            "aud": "authenticated",
            "role": "authenticated",
            "email": self.email,
            "phone": "",
            "email_confirmed_at": confirmed,
            "confirmed_at": confirmed,
            "last_sign_in_at": self.last_sign_in_at.map_or(Value::Null, rfc3339),
            "app_metadata": self.app_metadata,
            "user_metadata": self.user_metadata,
            "identities": [self.email_identity()],
            "created_at": rfc3339(self.created_at),
            "updated_at": rfc3339(self.updated_at),
            "is_anonymous": false,
        })
    }

    /// The user's one identity, GoTrue's `email` one: every user here signs in with their
    /// address. Its `identity_id` is derived from the user's id, so it stays the same
    /// without a table of its own.
    #[must_use]
    pub fn email_identity(&self) -> Value {
        let digest = sha256_hex(format!("quire email identity\n{}", self.id).as_bytes());
        let bytes = Uuid::parse_str(&digest[..32]).map_or([0; 16], |u| *u.as_bytes());
        let identity_id = uuid::Builder::from_random_bytes(bytes).into_uuid();
        json!({
            "identity_id": identity_id,
            "id": self.id,
            "user_id": self.id,
            "identity_data": {
                "email": self.email,
                "email_verified": self.email_confirmed_at.is_some(),
                "phone_verified": false,
                "sub": self.id,
            },
            "provider": "email",
            "last_sign_in_at": self.last_sign_in_at.map_or(Value::Null, rfc3339),
            "created_at": rfc3339(self.created_at),
            "updated_at": rfc3339(self.updated_at),
            "email": self.email,
        })
    }

    /// The claims of an access token of this user in session `session`, valid from `now`
    /// until `expires_at`, the session begun by `method` (`password`, `otp`): what
    /// `auth.uid()`, `auth.email()` and `auth.jwt()` read.
    #[must_use]
    pub fn access_claims(
        &self,
        issuer: &str,
        session: Uuid,
        method: &str,
        now: OffsetDateTime,
        expires_at: OffsetDateTime,
    ) -> Map<String, Value> {
        let claims = json!({
            "iss": issuer,
            "aud": "authenticated",
            "sub": self.id,
            "role": "authenticated",
            "email": self.email,
            "phone": "",
            "app_metadata": self.app_metadata,
            "user_metadata": self.user_metadata,
            "aal": "aal1",
            "amr": [{"method": method, "timestamp": now.unix_timestamp()}],
            "session_id": session,
            "is_anonymous": false,
            "iat": now.unix_timestamp(),
            "exp": expires_at.unix_timestamp(),
        });
        match claims {
            Value::Object(map) => map,
            _ => unreachable!("a json! object is an object"),
        }
    }
}

/// A user to store: the email already checked and lowercased, the password hashed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEndUser {
    pub id: Uuid,
    pub email: String,
    pub password_hash: String,
    pub user_metadata: Value,
    /// `None` until the address is confirmed (when the database asks for confirmation).
    pub email_confirmed_at: Option<OffsetDateTime>,
    /// The SHA-256 of the link's token that confirms it, then.
    pub confirmation_hash: Option<String>,
    pub now: OffsetDateTime,
}

/// What `PUT user` (and the admin API's `PUT admin/users/{id}`) changes; `None` leaves a
/// field as it is. New metadata is merged into the old at the top level, as GoTrue does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserChange {
    pub email: Option<String>,
    pub password_hash: Option<String>,
    pub user_metadata: Option<Map<String, Value>>,
    /// The owner's key only: merged into `app_metadata`.
    pub app_metadata: Option<Map<String, Value>>,
    /// The owner's key only: the address confirmed at this time, unless it was before.
    pub confirmed_at: Option<OffsetDateTime>,
}

/// A database's auth settings, one row of `auth.settings` that the owner changes with SQL.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AuthSettings {
    /// Nobody may sign up (users the owner inserts can still sign in).
    pub disable_signup: bool,
    /// A new user cannot sign in before their address is confirmed.
    pub confirm_email: bool,
    /// The owner's app (GoTrue's `SITE_URL`): where the links of recovery and sign-in
    /// mails lead, with `token_hash` and `type`. Without it, those mails hold a code only.
    pub site_url: Option<String>,
    /// Further addresses a request's `redirect_to` may name (GoTrue's `URI_ALLOW_LIST`):
    /// each exact, or ending in `*` to take any address it begins.
    pub uri_allow_list: Vec<String>,
}

/// Which sessions a sign-out ends (GoTrue's `scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SignOutScope {
    /// Every session of the user.
    #[default]
    Global,
    /// The token's session.
    Local,
    /// Every session but the token's.
    Others,
}

impl SignOutScope {
    #[must_use]
    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "global" => Some(Self::Global),
            "local" => Some(Self::Local),
            "others" => Some(Self::Others),
            _ => None,
        }
    }
}

/// A signed-in session, as the token endpoint answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthSession {
    pub access_token: String,
    pub refresh_token: String,
    pub expires_in: i64,
    pub expires_at: i64,
    pub user: EndUser,
}

impl AuthSession {
    /// GoTrue's session JSON.
    #[must_use]
    pub fn to_json(&self) -> Value {
        json!({
            "access_token": self.access_token,
            "token_type": "bearer",
            "expires_in": self.expires_in,
            "expires_at": self.expires_at,
            "refresh_token": self.refresh_token,
            "user": self.user.to_json(),
        })
    }
}
