//! The `TenantUsers` port in memory, with the rules of the tenant's `auth` schema as the
//! real adapter writes them: one user per address (any case), an unconfirmed sign-up
//! replaced by the next one of its address, confirmation links counted and spent, one-time
//! codes and links tried, counted and spent together, refresh tokens rotated with their
//! grace and a reuse ending the session, a user's sessions going with the user.

use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use quire_databases::{
    AuthSettings, CodeTry, ConfirmationTry, EndUser, NewEndUser, OneTimeHashes, Rotation,
    SignOutScope, TenantUsers, UserChange, UserWriteError,
};
use quire_kernel::InfraError;
use serde_json::{Map, Value, json};
use time::OffsetDateTime;
use uuid::Uuid;

mod one_time;

#[derive(Debug, Clone)]
struct Stored {
    user: EndUser,
    password_hash: String,
    confirmation_hash: Option<String>,
    confirmation_sent_at: Option<OffsetDateTime>,
    confirmation_tries: u32,
    one_time: Option<one_time::OneTime>,
}

impl Stored {
    fn new(user: EndUser, password_hash: String) -> Self {
        Self {
            user,
            password_hash,
            confirmation_hash: None,
            confirmation_sent_at: None,
            confirmation_tries: 0,
            one_time: None,
        }
    }
}

#[derive(Debug, Clone)]
struct Session {
    id: Uuid,
    user: Uuid,
}

#[derive(Debug, Clone)]
struct Token {
    hash: String,
    session: Uuid,
    parent: Option<String>,
    revoked_at: Option<OffsetDateTime>,
}

#[derive(Debug, Default)]
struct State {
    settings: AuthSettings,
    /// In the order they were stored.
    users: Vec<Stored>,
    sessions: Vec<Session>,
    tokens: Vec<Token>,
}

impl State {
    fn by_email(&self, email: &str) -> Option<usize> {
        let email = email.to_lowercase();
        self.users
            .iter()
            .position(|u| u.user.email.to_lowercase() == email)
    }

    fn end_sessions_where(&mut self, ended: impl Fn(&Session) -> bool) {
        let gone: Vec<Uuid> = self
            .sessions
            .iter()
            .filter(|s| ended(s))
            .map(|s| s.id)
            .collect();
        self.sessions.retain(|s| !gone.contains(&s.id));
        self.tokens.retain(|t| !gone.contains(&t.session));
    }

    /// The unconfirmed user whose link hashes to `token_hash`, sent after `since`.
    fn awaiting(&mut self, token_hash: &str, since: OffsetDateTime) -> Option<&mut Stored> {
        self.users.iter_mut().find(|u| {
            u.confirmation_hash.as_deref() == Some(token_hash)
                && u.user.email_confirmed_at.is_none()
                && u.confirmation_sent_at.is_some_and(|at| at > since)
        })
    }
}

/// A database's end users, sessions and refresh tokens, in memory.
#[derive(Debug, Default)]
pub struct MemoryUsers {
    state: Mutex<State>,
}

/// `into` with `merged`'s keys set, as jsonb's `||` sets them.
fn merge(into: &mut Value, merged: Option<&Map<String, Value>>) {
    let Some(merged) = merged else {
        return;
    };
    if let Value::Object(map) = into {
        map.extend(merged.clone());
    } else {
        *into = Value::Object(merged.clone());
    }
}

/// What a fresh `auth.users` row holds in `raw_app_meta_data`.
fn app_metadata() -> Value {
    json!({"provider": "email", "providers": ["email"]})
}

impl MemoryUsers {
    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        f(&mut self.state.lock().expect("users lock"))
    }

    /// What `auth.settings` now says (the owner's SQL, for the real adapter).
    pub fn set_settings(&self, settings: AuthSettings) {
        self.with(|s| s.settings = settings);
    }

    /// Stores `user` as it is, with `password_hash` (the owner's insert, for the real
    /// adapter).
    pub fn insert(&self, user: EndUser, password_hash: &str) {
        self.with(|s| s.users.push(Stored::new(user, password_hash.to_owned())));
    }

    /// Every user, in the order they were stored.
    #[must_use]
    pub fn all(&self) -> Vec<EndUser> {
        self.with(|s| s.users.iter().map(|u| u.user.clone()).collect())
    }
}

#[async_trait]
impl TenantUsers for MemoryUsers {
    async fn settings(&self) -> Result<AuthSettings, InfraError> {
        Ok(self.with(|s| s.settings.clone()))
    }

    async fn sign_up_user(&self, new: &NewEndUser) -> Result<EndUser, UserWriteError> {
        self.with(|s| {
            if let Some(hash) = &new.confirmation_hash
                && s.users
                    .iter()
                    .any(|u| u.confirmation_hash.as_ref() == Some(hash))
            {
                return Err(UserWriteError::EmailTaken);
            }
            let sent_at = new.confirmation_hash.as_ref().map(|_| new.now);
            let Some(i) = s.by_email(&new.email) else {
                let user = EndUser {
                    id: new.id,
                    email: new.email.clone(),
                    email_confirmed_at: new.email_confirmed_at,
                    user_metadata: new.user_metadata.clone(),
                    app_metadata: app_metadata(),
                    created_at: new.now,
                    updated_at: new.now,
                    last_sign_in_at: None,
                };
                s.users.push(Stored {
                    confirmation_hash: new.confirmation_hash.clone(),
                    confirmation_sent_at: sent_at,
                    ..Stored::new(user.clone(), new.password_hash.clone())
                });
                return Ok(user);
            };
            if s.users[i].user.email_confirmed_at.is_some() {
                return Err(UserWriteError::EmailTaken);
            }
            let stored = &mut s.users[i];
            let user = &mut stored.user;
            user.email.clone_from(&new.email);
            user.email_confirmed_at = new.email_confirmed_at;
            user.user_metadata = new.user_metadata.clone();
            user.created_at = new.now;
            user.updated_at = new.now;
            user.last_sign_in_at = None;
            stored.password_hash.clone_from(&new.password_hash);
            stored.confirmation_hash.clone_from(&new.confirmation_hash);
            stored.confirmation_sent_at = sent_at;
            stored.confirmation_tries = 0;
            stored.one_time = None;
            let replaced = stored.user.clone();
            s.end_sessions_where(|session| session.user == replaced.id);
            Ok(replaced)
        })
    }

    async fn user_by_email(&self, email: &str) -> Result<Option<(EndUser, String)>, InfraError> {
        Ok(self.with(|s| {
            s.by_email(email)
                .map(|i| (s.users[i].user.clone(), s.users[i].password_hash.clone()))
        }))
    }

    async fn user(&self, id: Uuid) -> Result<Option<EndUser>, InfraError> {
        Ok(self.with(|s| {
            s.users
                .iter()
                .find(|u| u.user.id == id)
                .map(|u| u.user.clone())
        }))
    }

    async fn confirmation_pending(
        &self,
        token_hash: &str,
        now: OffsetDateTime,
        within: Duration,
        tries: u32,
    ) -> Result<bool, InfraError> {
        Ok(self.with(|s| {
            s.awaiting(token_hash, now - within)
                .is_some_and(|u| u.confirmation_tries < tries)
        }))
    }

    async fn try_confirmation(
        &self,
        token_hash: &str,
        now: OffsetDateTime,
        within: Duration,
        tries: u32,
    ) -> Result<Option<ConfirmationTry>, InfraError> {
        Ok(self.with(|s| {
            let u = s
                .awaiting(token_hash, now - within)
                .filter(|u| u.confirmation_tries < tries)?;
            u.confirmation_tries += 1;
            Some(ConfirmationTry {
                password_hash: u.password_hash.clone(),
                tries_left: tries - u.confirmation_tries,
            })
        }))
    }

    async fn confirm_email(
        &self,
        token_hash: &str,
        password_hash: &str,
        now: OffsetDateTime,
        within: Duration,
    ) -> Result<Option<EndUser>, InfraError> {
        Ok(self.with(|s| {
            let u = s
                .awaiting(token_hash, now - within)
                .filter(|u| u.password_hash == password_hash)?;
            u.user.email_confirmed_at = Some(now);
            u.user.updated_at = now;
            u.confirmation_hash = None;
            Some(u.user.clone())
        }))
    }

    async fn update_user(
        &self,
        id: Uuid,
        change: &UserChange,
        now: OffsetDateTime,
    ) -> Result<Option<EndUser>, UserWriteError> {
        self.with(|s| {
            if let Some(email) = &change.email
                && s.by_email(email).is_some_and(|i| s.users[i].user.id != id)
            {
                return Err(UserWriteError::EmailTaken);
            }
            let Some(u) = s.users.iter_mut().find(|u| u.user.id == id) else {
                return Ok(None);
            };
            if let Some(email) = &change.email {
                u.user.email.clone_from(email);
            }
            if let Some(hash) = &change.password_hash {
                u.password_hash.clone_from(hash);
                u.one_time = None;
                u.confirmation_hash = None;
            }
            merge(&mut u.user.user_metadata, change.user_metadata.as_ref());
            merge(&mut u.user.app_metadata, change.app_metadata.as_ref());
            if u.user.email_confirmed_at.is_none() {
                u.user.email_confirmed_at = change.confirmed_at;
            }
            u.user.updated_at = now;
            Ok(Some(u.user.clone()))
        })
    }

    async fn insert_user(
        &self,
        new: &NewEndUser,
        app: Option<&Map<String, Value>>,
    ) -> Result<EndUser, UserWriteError> {
        self.with(|s| {
            if s.by_email(&new.email).is_some() {
                return Err(UserWriteError::EmailTaken);
            }
            if s.users.iter().any(|u| u.user.id == new.id) {
                return Err(UserWriteError::Infra(InfraError::new(
                    "inserting a user: the id is another user's",
                )));
            }
            let mut app_metadata = app_metadata();
            merge(&mut app_metadata, app);
            let user = EndUser {
                id: new.id,
                email: new.email.clone(),
                email_confirmed_at: new.email_confirmed_at,
                user_metadata: new.user_metadata.clone(),
                app_metadata,
                created_at: new.now,
                updated_at: new.now,
                last_sign_in_at: None,
            };
            s.users
                .push(Stored::new(user.clone(), new.password_hash.clone()));
            Ok(user)
        })
    }

    async fn set_one_time(
        &self,
        user: Uuid,
        hashes: &OneTimeHashes,
        now: OffsetDateTime,
    ) -> Result<bool, InfraError> {
        Ok(self.with(|s| s.set_one_time(user, hashes, now)))
    }

    async fn try_code(
        &self,
        email: &str,
        code_hash: &str,
        now: OffsetDateTime,
        within: Duration,
        tries: u32,
    ) -> Result<CodeTry, InfraError> {
        Ok(self.with(|s| s.try_code(email, code_hash, now, now - within, tries)))
    }

    async fn spend_link(
        &self,
        token_hash: &str,
        now: OffsetDateTime,
        within: Duration,
        tries: u32,
    ) -> Result<Option<EndUser>, InfraError> {
        Ok(self.with(|s| s.spend_link(token_hash, now, now - within, tries)))
    }

    async fn renew_confirmation(
        &self,
        email: &str,
        token_hash: &str,
        now: OffsetDateTime,
    ) -> Result<Option<EndUser>, InfraError> {
        Ok(self.with(|s| s.renew_confirmation(email, token_hash, now)))
    }

    async fn start_session(
        &self,
        user: Uuid,
        session: Uuid,
        token_hash: &str,
        now: OffsetDateTime,
    ) -> Result<EndUser, InfraError> {
        self.with(|s| {
            let Some(u) = s.users.iter_mut().find(|u| u.user.id == user) else {
                return Err(InfraError::new("starting a session: no such user"));
            };
            u.user.last_sign_in_at = Some(now);
            let signed_in = u.user.clone();
            s.sessions.push(Session { id: session, user });
            s.tokens.push(Token {
                hash: token_hash.to_owned(),
                session,
                parent: None,
                revoked_at: None,
            });
            Ok(signed_in)
        })
    }

    async fn rotate(
        &self,
        presented: &str,
        successor: &str,
        now: OffsetDateTime,
        grace: Duration,
    ) -> Result<Rotation, InfraError> {
        Ok(self.with(|s| {
            let Some(token) = s.tokens.iter().find(|t| t.hash == presented).cloned() else {
                return Rotation::Unknown;
            };
            let Some(user) = s
                .sessions
                .iter()
                .find(|x| x.id == token.session)
                .map(|x| x.user)
            else {
                return Rotation::Unknown;
            };
            if let Some(at) = token.revoked_at {
                let current = s
                    .tokens
                    .iter()
                    .find(|t| t.parent.as_deref() == Some(presented) && t.revoked_at.is_none());
                match current {
                    Some(current) if at > now - grace => {
                        if current.hash != successor {
                            return Rotation::Unknown;
                        }
                    }
                    _ => {
                        s.end_sessions_where(|x| x.id == token.session);
                        return Rotation::Reused;
                    }
                }
            } else {
                if let Some(t) = s.tokens.iter_mut().find(|t| t.hash == presented) {
                    t.revoked_at = Some(now);
                }
                s.tokens.push(Token {
                    hash: successor.to_owned(),
                    session: token.session,
                    parent: Some(presented.to_owned()),
                    revoked_at: None,
                });
            }
            match s.users.iter().find(|u| u.user.id == user) {
                Some(u) => Rotation::Rotated {
                    user: u.user.clone(),
                    session: token.session,
                },
                None => Rotation::Unknown,
            }
        }))
    }

    async fn session_open(&self, session: Uuid) -> Result<bool, InfraError> {
        Ok(self.with(|s| s.sessions.iter().any(|x| x.id == session)))
    }

    async fn end_sessions(
        &self,
        user: Uuid,
        session: Uuid,
        scope: SignOutScope,
    ) -> Result<(), InfraError> {
        self.with(|s| {
            s.end_sessions_where(|x| {
                x.user == user
                    && match scope {
                        SignOutScope::Global => true,
                        SignOutScope::Local => x.id == session,
                        SignOutScope::Others => x.id != session,
                    }
            });
        });
        Ok(())
    }

    async fn list_users(&self, offset: u64, limit: u32) -> Result<(Vec<EndUser>, u64), InfraError> {
        Ok(self.with(|s| {
            let mut users: Vec<EndUser> = s.users.iter().map(|u| u.user.clone()).collect();
            users.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(a.id.cmp(&b.id)));
            let total = users.len() as u64;
            let users = users
                .into_iter()
                .skip(usize::try_from(offset).unwrap_or(usize::MAX))
                .take(limit as usize)
                .collect();
            (users, total)
        }))
    }

    async fn delete_user(&self, id: Uuid) -> Result<bool, InfraError> {
        Ok(self.with(|s| {
            let before = s.users.len();
            s.users.retain(|u| u.user.id != id);
            s.end_sessions_where(|x| x.user == id);
            s.users.len() < before
        }))
    }
}
