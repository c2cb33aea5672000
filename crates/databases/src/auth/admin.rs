//! The admin API (`/admin/users`, `/admin/generate_link`), for the database's
//! `service_role` alone, as GoTrue's is for its admin roles: what supabase-js's and
//! supabase-py's `auth.admin` call from an app's server. The anon key, an end user's token
//! or none are refused before anything is read ([`TenantAuth::admin`]).
//!
//! GoTrue's fields that mean nothing here are refused rather than dropped, so a caller
//! never believes a user banned, given a role or a phone: `phone`, `role` (but
//! `authenticated`), `ban_duration` (but `none`), `password_hash`, a soft delete.

use serde::Deserialize;
use serde_json::{Map, Value, json};
use uuid::Uuid;

use super::redirect::{destination, with_token};
use super::{
    AuthError, EndUser, MAX_METADATA_BYTES, NewEndUser, SignOutScope, TenantAuth, UserChange,
    checked_email, checked_metadata, email_exists,
};
use crate::keys::KeyRole;
use crate::ports::UserWriteError;
use crate::service::{Acting, GatewayError};

/// Most users a page of the admin list holds.
pub const MAX_PER_PAGE: u64 = 1_000;
/// A page's users when `per_page` is not given (GoTrue's).
pub const DEFAULT_PER_PAGE: u64 = 50;

/// The admin API's use cases on one database, for a `service_role` credential.
#[derive(Debug, Clone, Copy)]
pub struct Admin<'a> {
    auth: &'a TenantAuth,
}

/// A user's fields as the admin API takes them (`POST admin/users`, `PUT
/// admin/users/{id}`): GoTrue's `AdminUserParams`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct AdminUser {
    pub id: Option<String>,
    pub email: Option<String>,
    pub password: Option<String>,
    pub email_confirm: bool,
    pub user_metadata: Option<Value>,
    pub app_metadata: Option<Value>,
    pub phone: Option<String>,
    pub role: Option<String>,
    pub ban_duration: Option<String>,
    pub password_hash: Option<String>,
}

/// `POST admin/generate_link`'s body (`redirect_to` may come in the query as well).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct LinkRequest {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub email: Option<String>,
    pub password: Option<String>,
    pub data: Option<Value>,
    pub redirect_to: Option<String>,
}

/// A link made for the owner's own mail: nothing is sent and no quota spent.
#[derive(Debug, Clone)]
pub struct GeneratedLink {
    pub user: EndUser,
    /// The sign-up's confirmation page; or the owner's app with `token_hash` and `type`,
    /// empty without a site.
    pub action_link: String,
    /// The 6-digit code (none for a sign-up, which its page confirms).
    pub email_otp: String,
    /// What `POST verify` takes as `token_hash`.
    pub hashed_token: String,
    pub verification_type: String,
    pub redirect_to: String,
}

impl GeneratedLink {
    /// GoTrue's answer: the user's fields and the link's, in one object.
    #[must_use]
    pub fn to_json(&self) -> Value {
        let mut body = self.user.to_json();
        if let Value::Object(map) = &mut body {
            for (name, value) in [
                ("action_link", &self.action_link),
                ("email_otp", &self.email_otp),
                ("hashed_token", &self.hashed_token),
                ("verification_type", &self.verification_type),
                ("redirect_to", &self.redirect_to),
            ] {
                map.insert(name.to_owned(), json!(value));
            }
        }
        body
    }
}

/// One page of the admin list, and how many users there are.
#[derive(Debug, Clone)]
pub struct UsersPage {
    pub users: Vec<EndUser>,
    pub total: u64,
    pub page: u64,
    pub per_page: u64,
}

impl UsersPage {
    /// How many pages of `per_page` the users fill (at least one).
    #[must_use]
    pub fn last_page(&self) -> u64 {
        self.total.div_ceil(self.per_page).max(1)
    }
}

fn user_id(raw: &str) -> Result<Uuid, AuthError> {
    Uuid::parse_str(raw).map_err(|_| AuthError::UserIdInvalid)
}

fn checked_app_metadata(data: Option<Value>) -> Result<Option<Map<String, Value>>, AuthError> {
    checked_metadata(data).map_err(|_| {
        AuthError::Validation(format!(
            "app_metadata must be a JSON object of at most {MAX_METADATA_BYTES} bytes"
        ))
    })
}

/// GoTrue's fields with no meaning here, refused.
fn refuse_unoffered(user: &AdminUser) -> Result<(), AuthError> {
    let given = |v: &Option<String>| v.as_deref().filter(|v| !v.is_empty()).map(str::to_owned);
    if given(&user.phone).is_some() {
        return Err(AuthError::Validation(
            "Phone numbers are not offered".into(),
        ));
    }
    if given(&user.role).is_some_and(|r| r != "authenticated") {
        return Err(AuthError::Validation(
            "Every user has the authenticated role".into(),
        ));
    }
    if given(&user.ban_duration).is_some_and(|b| b != "none") {
        return Err(AuthError::Validation(
            "Banning users is not offered: delete the user".into(),
        ));
    }
    if given(&user.password_hash).is_some() {
        return Err(AuthError::Validation(
            "password_hash is not offered: send the password".into(),
        ));
    }
    Ok(())
}

impl TenantAuth {
    /// The admin API for a request whose bearer token acts as `bearer` (the gateway's
    /// reading of it, `None` when there is none): the database's `service_role` key, or a
    /// Quire key that may act as it.
    ///
    /// # Errors
    /// `NoAuthorization` without a bearer; `BadJwt` for one that does not verify;
    /// `NotAdmin` for any other role (the anon key, an end user's token, a Quire key that
    /// may not act for the database).
    pub fn admin(
        &self,
        bearer: Option<Result<Acting, GatewayError>>,
    ) -> Result<Admin<'_>, AuthError> {
        match bearer.ok_or(AuthError::NoAuthorization)? {
            Ok(acting) if acting.role == KeyRole::ServiceRole => Ok(Admin { auth: self }),
            Ok(_) | Err(GatewayError::InvalidApiKey | GatewayError::NoApiKey) => {
                Err(AuthError::NotAdmin)
            }
            Err(GatewayError::Rest(e)) if e.code == "PGRST303" => {
                Err(AuthError::BadJwt("token is expired"))
            }
            Err(GatewayError::Rest(_)) => Err(AuthError::BadJwt("signature is invalid")),
            Err(e) => Err(AuthError::Infra(quire_kernel::InfraError::new(format!(
                "reading the admin API's credential: {e}"
            )))),
        }
    }
}

impl Admin<'_> {
    /// `GET admin/users?page=&per_page=`: newest first.
    ///
    /// # Errors
    /// `Validation` for a page below 1 or a page size outside 1 to [`MAX_PER_PAGE`].
    pub async fn list(
        &self,
        page: Option<u64>,
        per_page: Option<u64>,
    ) -> Result<UsersPage, AuthError> {
        let page = page.unwrap_or(1);
        let per_page = per_page.unwrap_or(DEFAULT_PER_PAGE);
        if page == 0 || per_page == 0 || per_page > MAX_PER_PAGE {
            return Err(AuthError::Validation(format!(
                "Bad Pagination Parameters: page from 1, per_page from 1 to {MAX_PER_PAGE}"
            )));
        }
        let limit = u32::try_from(per_page).unwrap_or(u32::MAX);
        let offset = (page - 1).saturating_mul(per_page);
        let (users, total) = self.auth.users().list_users(offset, limit).await?;
        Ok(UsersPage {
            users,
            total,
            page,
            per_page,
        })
    }

    /// `GET admin/users/{id}`.
    ///
    /// # Errors
    /// `UserIdInvalid`, `NoSuchUser`.
    pub async fn get(&self, id: &str) -> Result<EndUser, AuthError> {
        self.auth
            .users()
            .user(user_id(id)?)
            .await?
            .ok_or(AuthError::NoSuchUser("User not found"))
    }

    /// `POST admin/users`: a user of any address no user has, with the password given
    /// (none: they sign in by a mailed code until they set one), confirmed when
    /// `email_confirm`.
    ///
    /// # Errors
    /// `Validation` (no address, or one the mailer refuses; an id that is no UUID;
    /// metadata; what is not offered), `WeakPassword`, `EmailExists`.
    pub async fn create(&self, attributes: AdminUser) -> Result<EndUser, AuthError> {
        refuse_unoffered(&attributes)?;
        let Some(email) = attributes.email.as_deref().filter(|e| !e.is_empty()) else {
            return Err(AuthError::Validation(
                "Cannot create a user without either an email or phone".into(),
            ));
        };
        let email = checked_email(email)?;
        let id = match attributes.id.as_deref().filter(|i| !i.is_empty()) {
            None => Uuid::new_v4(),
            Some(raw) => match Uuid::parse_str(raw) {
                Ok(id) if id.is_nil() => {
                    return Err(AuthError::Validation("ID cannot be a nil uuid".into()));
                }
                Ok(id) => id,
                Err(_) => {
                    return Err(AuthError::Validation(
                        "ID must conform to the uuid v4 format".into(),
                    ));
                }
            },
        };
        let user_metadata =
            Value::Object(checked_metadata(attributes.user_metadata)?.unwrap_or_default());
        let app_metadata = checked_app_metadata(attributes.app_metadata)?;
        let password_hash = match attributes.password.filter(|p| !p.is_empty()) {
            Some(password) => self.auth.hash(password).await?,
            None => String::new(),
        };
        let now = self.auth.clock.now();
        self.auth
            .users()
            .insert_user(
                &NewEndUser {
                    id,
                    email,
                    password_hash,
                    user_metadata,
                    email_confirmed_at: attributes.email_confirm.then_some(now),
                    confirmation_hash: None,
                    now,
                },
                app_metadata.as_ref(),
            )
            .await
            .map_err(email_exists)
    }

    /// `PUT admin/users/{id}`: a new address (no other user's), password (which ends every
    /// session of the user and spends their links and codes), metadata merged, the address
    /// confirmed when `email_confirm`.
    ///
    /// # Errors
    /// As [`Self::create`]; `UserIdInvalid`, `NoSuchUser`.
    pub async fn update(&self, id: &str, attributes: AdminUser) -> Result<EndUser, AuthError> {
        refuse_unoffered(&attributes)?;
        let id = user_id(id)?;
        let email = attributes
            .email
            .as_deref()
            .filter(|e| !e.is_empty())
            .map(checked_email)
            .transpose()?;
        let user_metadata = checked_metadata(attributes.user_metadata)?;
        let app_metadata = checked_app_metadata(attributes.app_metadata)?;
        let password_hash = match attributes.password.filter(|p| !p.is_empty()) {
            Some(password) => Some(self.auth.hash(password).await?),
            None => None,
        };
        let new_password = password_hash.is_some();
        let now = self.auth.clock.now();
        let change = UserChange {
            email,
            password_hash,
            user_metadata,
            app_metadata,
            confirmed_at: attributes.email_confirm.then_some(now),
        };
        let user = self
            .auth
            .users()
            .update_user(id, &change, now)
            .await
            .map_err(email_exists)?
            .ok_or(AuthError::NoSuchUser("User not found"))?;
        if new_password {
            self.auth
                .users()
                .end_sessions(id, Uuid::nil(), SignOutScope::Global)
                .await?;
        }
        Ok(user)
    }

    /// `DELETE admin/users/{id}`: the user, their sessions and refresh tokens.
    ///
    /// # Errors
    /// `Validation` for a soft delete; `UserIdInvalid`, `NoSuchUser`.
    pub async fn delete(&self, id: &str, soft: bool) -> Result<(), AuthError> {
        if soft {
            return Err(AuthError::Validation(
                "Soft deletion is not offered: the user is deleted".into(),
            ));
        }
        if self.auth.users().delete_user(user_id(id)?).await? {
            Ok(())
        } else {
            Err(AuthError::NoSuchUser("User not found"))
        }
    }

    /// `POST admin/generate_link`: a link (and code) as a mail would hold, for the owner to
    /// send themselves. `signup` makes (or replaces) an unconfirmed user with the password
    /// given and answers its confirmation page; `magiclink` and `invite` make an
    /// unconfirmed user without password for an unknown address (`invite` refuses a
    /// confirmed one); `recovery` needs a user.
    ///
    /// # Errors
    /// `Validation` (the type, the address, the password of a sign-up, metadata),
    /// `WeakPassword`, `EmailExists`, `NoSuchUser`.
    pub async fn generate_link(
        &self,
        request: LinkRequest,
        redirect_to: Option<&str>,
    ) -> Result<GeneratedLink, AuthError> {
        let kind = request.kind.unwrap_or_default();
        if !matches!(
            kind.as_str(),
            "signup" | "magiclink" | "recovery" | "invite"
        ) {
            return Err(AuthError::Validation(format!(
                "Invalid email action link type requested: {kind}"
            )));
        }
        let email = checked_email(request.email.as_deref().unwrap_or_default())?;
        let metadata = Value::Object(checked_metadata(request.data)?.unwrap_or_default());
        let settings = self.auth.users().settings().await?;
        let to = destination(&settings, redirect_to.or(request.redirect_to.as_deref()));
        let redirect_to = to.clone().unwrap_or_default();
        if kind == "signup" {
            let password = request
                .password
                .filter(|p| !p.is_empty())
                .ok_or_else(|| AuthError::Validation("Signup requires a valid password".into()))?;
            let (user, token) = self.auth.pending_sign_up(email, password, metadata).await?;
            return Ok(GeneratedLink {
                user,
                action_link: format!("{}/verify?token={token}&type=signup", self.auth.issuer),
                email_otp: String::new(),
                hashed_token: token,
                verification_type: kind,
                redirect_to,
            });
        }
        let found = self
            .auth
            .users()
            .user_by_email(&email)
            .await?
            .map(|(u, _)| u);
        let user = match (found, kind.as_str()) {
            (Some(user), "invite") if user.email_confirmed_at.is_some() => {
                return Err(AuthError::EmailExists);
            }
            (Some(user), _) => user,
            (None, "recovery") => {
                return Err(AuthError::NoSuchUser("User with this email not found"));
            }
            (None, _) => self.auth.passwordless_user(email, metadata).await?,
        };
        let made = self
            .auth
            .new_one_time(&user)
            .await?
            .ok_or(AuthError::NoSuchUser("User not found"))?;
        Ok(GeneratedLink {
            user,
            action_link: to
                .as_deref()
                .map_or_else(String::new, |to| with_token(to, &made.token, &kind)),
            email_otp: made.code,
            hashed_token: made.token,
            verification_type: kind,
            redirect_to,
        })
    }
}

impl TenantAuth {
    /// An unconfirmed user of `email` with no password, for a mailed code to confirm.
    async fn passwordless_user(
        &self,
        email: String,
        metadata: Value,
    ) -> Result<EndUser, AuthError> {
        self.users()
            .sign_up_user(&NewEndUser {
                id: Uuid::new_v4(),
                email,
                password_hash: String::new(),
                user_metadata: metadata,
                email_confirmed_at: None,
                confirmation_hash: None,
                now: self.clock.now(),
            })
            .await
            .map_err(|e| match e {
                UserWriteError::EmailTaken => AuthError::EmailExists,
                other => other.into(),
            })
    }
}
