//! The device login use cases: start, poll, look up and decide.

use std::sync::Arc;
use std::time::Duration;

use quire_kernel::{AccountId, Clock, InfraError, KeyId, Tier};
use quire_keys::{PlaintextKey, new_key};
use uuid::Uuid;

use crate::codes::{DeviceCode, UserCode};
use crate::model::{DeviceGrant, GrantState};
use crate::ports::{DeviceGrantStore, InsertGrantError, RateLimiter};

/// Lifetime of a device code.
pub const EXPIRES_IN_SECS: u32 = 600;
/// Polling interval handed out at the start.
pub const INTERVAL_SECS: u32 = 3;
/// What `slow_down` adds to the interval.
pub const SLOW_DOWN_STEP_SECS: u32 = 5;
/// The RFC 8628 grant type.
pub const DEVICE_CODE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";
/// Rate limits per client IP, per 15 minutes.
pub const START_LIMIT: u32 = 10;
pub const POLL_LIMIT: u32 = 600;
pub const RATE_WINDOW: Duration = Duration::from_secs(15 * 60);
/// Codes one dashboard session may enter on the consent screen per [`RATE_WINDOW`].
pub const CODE_LOOKUPS_PER_SESSION: u32 = 30;
/// Codes all sessions of one account may enter per [`RATE_WINDOW`]: right passwords do not
/// count against sign-in, so sessions alone would not bound guessing.
pub const CODE_LOOKUPS_PER_ACCOUNT: u32 = 300;
/// Longest client name.
pub const MAX_CLIENT_NAME_CHARS: usize = 60;

/// A started grant, as the agent receives it.
#[derive(Debug, Clone)]
pub struct Started {
    pub device_code: DeviceCode,
    pub user_code: UserCode,
    pub verification_uri: String,
    pub verification_uri_complete: String,
    pub expires_in: u32,
    pub interval: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StartError {
    #[error("{0}")]
    InvalidRequest(String),
    #[error("too many device authorization requests from this address")]
    RateLimited,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// Why a poll did not return a key (RFC 8628 §3.5 names).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PollError {
    #[error("grant_type must be {DEVICE_CODE_GRANT}")]
    UnsupportedGrantType,
    #[error("{0}")]
    InvalidRequest(String),
    #[error("unknown or already used device code")]
    InvalidGrant,
    #[error("the request was denied")]
    AccessDenied,
    #[error("the device code has expired")]
    ExpiredToken,
    #[error("waiting for approval")]
    AuthorizationPending,
    #[error("polling too fast; wait {interval} s between polls")]
    SlowDown { interval: u32 },
    #[error("too many token requests from this address")]
    RateLimited,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// The key handed out on the first poll after approval.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub access_token: PlaintextKey,
    pub key_id: KeyId,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecideError {
    #[error("that is not a code of the form XXXX-XXXX")]
    Malformed,
    #[error("no sign-in request has that code")]
    Unknown,
    #[error("that sign-in request has expired")]
    Expired,
    #[error("that sign-in request was already decided")]
    AlreadyDecided,
    #[error("too many codes entered; wait a few minutes")]
    Throttled,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// The device login.
#[derive(Debug, Clone)]
pub struct DeviceAuthService {
    grants: Arc<dyn DeviceGrantStore>,
    limiter: Arc<dyn RateLimiter>,
    clock: Arc<dyn Clock>,
    base_url: String,
}

impl DeviceAuthService {
    pub fn new(
        grants: Arc<dyn DeviceGrantStore>,
        limiter: Arc<dyn RateLimiter>,
        clock: Arc<dyn Clock>,
        base_url: impl Into<String>,
    ) -> Self {
        Self {
            grants,
            limiter,
            clock,
            base_url: base_url.into().trim_end_matches('/').to_owned(),
        }
    }

    /// Starts a grant for an agent calling from `client_ip`.
    ///
    /// # Errors
    /// `RateLimited` past 10 starts per 15 minutes from the address; `InvalidRequest` for a
    /// client name that is blank, too long or has control characters.
    pub async fn start(
        &self,
        client_name: Option<&str>,
        client_ip: &str,
    ) -> Result<Started, StartError> {
        let now = self.clock.now();
        if !self
            .limiter
            .hit(
                "device_authorization",
                client_ip,
                RATE_WINDOW,
                START_LIMIT,
                now,
            )
            .await?
        {
            return Err(StartError::RateLimited);
        }
        let sent = client_name.unwrap_or("agent");
        let name = sent.trim();
        if name.is_empty()
            || sent.chars().count() > MAX_CLIENT_NAME_CHARS
            || name.chars().any(char::is_control)
        {
            return Err(StartError::InvalidRequest(format!(
                "client_name must be 1-{MAX_CLIENT_NAME_CHARS} printable characters"
            )));
        }
        let device_code = DeviceCode::generate();
        for _ in 0..5 {
            let user_code = UserCode::generate();
            let grant = DeviceGrant {
                id: Uuid::new_v4(),
                device_code_hash: device_code.hash(),
                user_code: user_code.as_str().to_owned(),
                client_name: name.to_owned(),
                state: GrantState::Pending,
                created_at: now,
                expires_at: now + time::Duration::seconds(i64::from(EXPIRES_IN_SECS)),
                interval_secs: INTERVAL_SECS,
                last_polled_at: None,
                decided_at: None,
            };
            match self.grants.insert_grant(&grant).await {
                Ok(()) => {
                    let uri = format!("{}/authorize-agent", self.base_url);
                    return Ok(Started {
                        verification_uri_complete: format!("{uri}?code={}", user_code.display()),
                        verification_uri: uri,
                        device_code,
                        user_code,
                        expires_in: EXPIRES_IN_SECS,
                        interval: INTERVAL_SECS,
                    });
                }
                Err(InsertGrantError::UserCodeTaken) => {}
                Err(InsertGrantError::Infra(e)) => return Err(e.into()),
            }
        }
        Err(StartError::Infra(InfraError::new(
            "no free user code after 5 tries",
        )))
    }

    /// One poll of the token endpoint. Only the device code can claim; the user code never can.
    ///
    /// # Errors
    /// See [`PollError`]; the order of checks is rate limit, grant type, device code, state.
    pub async fn poll(
        &self,
        grant_type: Option<&str>,
        device_code: Option<&str>,
        client_ip: &str,
    ) -> Result<Claimed, PollError> {
        let now = self.clock.now();
        if !self
            .limiter
            .hit("token", client_ip, RATE_WINDOW, POLL_LIMIT, now)
            .await?
        {
            return Err(PollError::RateLimited);
        }
        match grant_type {
            Some(DEVICE_CODE_GRANT) => {}
            Some(_) => return Err(PollError::UnsupportedGrantType),
            None => return Err(PollError::InvalidRequest("grant_type is required".into())),
        }
        let code = device_code
            .filter(|c| !c.is_empty())
            .ok_or_else(|| PollError::InvalidRequest("device_code is required".into()))?;
        let grant = self
            .grants
            .grant_by_device_hash(&DeviceCode::received(code).hash())
            .await?
            .ok_or(PollError::InvalidGrant)?;
        match grant.state {
            GrantState::Claimed { .. } => Err(PollError::InvalidGrant),
            GrantState::Denied => Err(PollError::AccessDenied),
            _ if now >= grant.expires_at => Err(PollError::ExpiredToken),
            GrantState::Pending => {
                let too_fast = grant.last_polled_at.is_some_and(|last| {
                    now - last < time::Duration::seconds(i64::from(grant.interval_secs))
                });
                let interval = if too_fast {
                    grant.interval_secs + SLOW_DOWN_STEP_SECS
                } else {
                    grant.interval_secs
                };
                self.grants.record_poll(grant.id, now, interval).await?;
                if too_fast {
                    Err(PollError::SlowDown { interval })
                } else {
                    Err(PollError::AuthorizationPending)
                }
            }
            GrantState::Approved { account } => {
                let (plaintext, record) = new_key(
                    account,
                    format!("agent: {}", grant.client_name),
                    Tier::Master,
                    None,
                    now,
                );
                if self.grants.claim(grant.id, &record).await? {
                    Ok(Claimed {
                        access_token: plaintext,
                        key_id: record.id,
                    })
                } else {
                    Err(PollError::InvalidGrant)
                }
            }
        }
    }

    /// The pending grant a person typed the code of (for the consent screen).
    ///
    /// # Errors
    /// `Malformed`, `Unknown`, `Expired`, `AlreadyDecided`.
    pub async fn pending(&self, typed_code: &str) -> Result<DeviceGrant, DecideError> {
        let code = UserCode::parse(typed_code).ok_or(DecideError::Malformed)?;
        let grant = self
            .grants
            .grant_by_user_code(code.as_str())
            .await?
            .ok_or(DecideError::Unknown)?;
        if grant.state != GrantState::Pending {
            return Err(DecideError::AlreadyDecided);
        }
        if self.clock.now() >= grant.expires_at {
            return Err(DecideError::Expired);
        }
        Ok(grant)
    }

    /// Counts one code entered on the consent screen by the dashboard session `session_key`
    /// of `account` (every lookup counts, right or wrong, so guessing codes is bounded per
    /// session and per account).
    ///
    /// # Errors
    /// `Throttled` past [`CODE_LOOKUPS_PER_SESSION`] for the session or
    /// [`CODE_LOOKUPS_PER_ACCOUNT`] for the account in [`RATE_WINDOW`].
    pub async fn count_code_lookup(
        &self,
        session_key: &str,
        account: AccountId,
    ) -> Result<(), DecideError> {
        let now = self.clock.now();
        let allowed = self
            .limiter
            .hit(
                "consent_code",
                session_key,
                RATE_WINDOW,
                CODE_LOOKUPS_PER_SESSION,
                now,
            )
            .await?
            && self
                .limiter
                .hit(
                    "consent_code_account",
                    &account.0.to_string(),
                    RATE_WINDOW,
                    CODE_LOOKUPS_PER_ACCOUNT,
                    now,
                )
                .await?;
        if allowed {
            Ok(())
        } else {
            Err(DecideError::Throttled)
        }
    }

    /// Removes grants expired for over a day (freeing their user codes) and rate-limit
    /// windows over a day old: the janitor's work. Returns (grants, windows) removed.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    pub async fn sweep(&self) -> Result<(u64, u64), InfraError> {
        let cutoff = self.clock.now() - time::Duration::days(1);
        let grants = self.grants.delete_grants_expired_before(cutoff).await?;
        let windows = self.limiter.forget_windows_before(cutoff).await?;
        Ok((grants, windows))
    }

    /// Approves (for `account`) or denies the pending grant with the typed user code.
    ///
    /// # Errors
    /// As [`DeviceAuthService::pending`]; `AlreadyDecided` when another decision won a race.
    pub async fn decide(
        &self,
        typed_code: &str,
        account: AccountId,
        approve: bool,
    ) -> Result<DeviceGrant, DecideError> {
        let grant = self.pending(typed_code).await?;
        let state = if approve {
            GrantState::Approved { account }
        } else {
            GrantState::Denied
        };
        if self
            .grants
            .decide(grant.id, state, self.clock.now())
            .await?
        {
            Ok(DeviceGrant { state, ..grant })
        } else {
            Err(DecideError::AlreadyDecided)
        }
    }
}
