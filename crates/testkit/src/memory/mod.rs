//! In-memory implementations of every store port, one file per port.
//!
//! Every method first consults the failure switch: [`MemoryStore::fail`] makes the named
//! [`Op`] (or, with [`MemoryStore::fail_everything`], every operation) return an
//! infrastructure error without touching the state, so domain tests can prove that a failed
//! step leaves nothing behind.

mod accounts;
mod activation;
mod bundles;
mod databases;
mod device;
mod keys;
mod links;
mod mail;
mod oauth;
mod objects;
mod pages;
mod projects;
mod publish_requests;
mod sessions;
mod signup;

pub use activation::InvitedNumber;
pub use bundles::{Batch, MemoryBundles};
pub use objects::MemoryObjectBytes;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use quire_accounts::{Account, Session};
use quire_device_auth::DeviceGrant;
use quire_kernel::{AccountId, InfraError, LinkId, PageId};
use quire_keys::KeyRecord;
use quire_links::{AllowEntry, Link};
use quire_oauth::{Grant as OAuthGrant, OAuthClient, RefreshRecord, SigningKey};
use quire_pages::{FileEntry, Page};
use quire_projects::{Grant, Project};
use quire_signup::AccountToken;
use time::OffsetDateTime;

/// The port operations of the fakes, for their failure switches: a name that does not exist
/// does not compile (a misspelt string would never fire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    AccountByHandle,
    AccountById,
    AccountByLogin,
    Accounts,
    AddInvitations,
    AddViews,
    AssignResource,
    BindAndActivate,
    ChangePassword,
    Claim,
    Client,
    CreateAccount,
    CreateFirstAccount,
    DailyViews,
    DatabaseById,
    DatabaseBySlug,
    DatabasesDue,
    Decide,
    DefaultProjectOf,
    Delete,
    DeleteClient,
    DeleteDatabase,
    TouchClient,
    IdleDynamicClients,
    DeleteExpiredSessions,
    DeleteGrant,
    DeleteGrantsExpiredBefore,
    DeleteLink,
    DeleteLinkOfPage,
    DeleteOtherSessions,
    DeletePage,
    DeleteProject,
    DeleteSession,
    DeleteSigningKeys,
    EnrollTotp,
    Exists,
    Files,
    FindByHash,
    ForgetCaptchasBefore,
    ForgetLinksBefore,
    ForgetSendsBefore,
    ForgetWindowsBefore,
    Get,
    GrantByCode,
    GrantByDeviceHash,
    GrantByUserCode,
    GrantLevel,
    HandleAndEmail,
    HasAccounts,
    GiveBack,
    Hit,
    InsertClient,
    InsertDatabase,
    InsertGrant,
    InsertKey,
    InsertLink,
    InsertOAuthGrant,
    InsertPending,
    InsertObject,
    ObjectById,
    UpdateObject,
    DeleteObject,
    InsertProject,
    InsertSession,
    InsertSigningKey,
    Invitations,
    IssueLink,
    KeyAccount,
    KeyById,
    KeysOfAccount,
    LapsedSlugHolder,
    LiveDatabases,
    LeaseViews,
    LegacyTotpSecrets,
    LinkByCode,
    LinkById,
    LinkOfPage,
    LinkStats,
    UrlLinks,
    AddVisitNotes,
    LinksOfPages,
    LiveClients,
    LiveGrants,
    LiveLink,
    MarkDatabaseDeleting,
    MarkDatabaseReady,
    MarkMfaSatisfied,
    MarkReady,
    Page,
    PageBySlug,
    PageDetails,
    PageExists,
    Pages,
    ProjectPages,
    SharedPages,
    StoredBytes,
    ProjectById,
    ProjectDatabases,
    ProjectBySlug,
    ProjectsOfAccount,
    Put,
    PutFiles,
    ReplaceFiles,
    PutGrant,
    RecallRequest,
    RecordPoll,
    RememberRequest,
    ForgetRequestsBefore,
    RecoveryCodesLeft,
    RedeemCode,
    RefreshToken,
    ReleaseMail,
    RemoveInvitation,
    RemoveTotp,
    RenewLease,
    ReplaceRecoveryCodes,
    ResealTotp,
    ReserveMail,
    ResetPassword,
    Resources,
    RevokeKey,
    RevokeOAuthGrant,
    RotateJwtSecret,
    RotateRefresh,
    SessionByHash,
    SetActivated,
    SetClientSecret,
    SetDataApi,
    SetPasswordHash,
    SetPendingTotp,
    SettleLapsedLeases,
    SettleLease,
    SettlePending,
    SignUp,
    SigningKeys,
    SpendCaptcha,
    StalePending,
    SweepLeftovers,
    SwapContents,
    Take,
    TouchKey,
    UpdateLink,
    UpdatePage,
    UpdateProject,
    UseRecoveryCode,
    UseTotpStep,
    VerifyEmail,
}

/// Which operations fail.
#[derive(Debug, Default)]
struct Failing {
    ops: HashSet<Op>,
    everything: bool,
}

impl Failing {
    fn covers(&self, op: Op) -> bool {
        self.everything || self.ops.contains(&op)
    }
}

/// Everything the fake holds; comparable, so a test can assert "unchanged".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct State {
    pub accounts: Vec<Account>,
    pub projects: Vec<Project>,
    pub keys: Vec<KeyRecord>,
    pub grants: Vec<Grant>,
    /// Pages with whether they are ready (visible).
    pub pages: Vec<(Page, bool)>,
    /// Objects with whether they are ready (visible).
    pub objects: Vec<(quire_objects::Object, bool)>,
    /// Database records in every state (the lease is on the record).
    pub databases: Vec<quire_databases::Database>,
    /// When the lease of each pending object ends.
    pub object_leases: HashMap<quire_kernel::ObjectId, OffsetDateTime>,
    /// When the lease of each pending page ends.
    pub leases: HashMap<PageId, OffsetDateTime>,
    pub files: HashMap<PageId, Vec<FileEntry>>,
    pub links: Vec<Link>,
    /// When each allow entry of each link was shared.
    pub shared_since: HashMap<(LinkId, AllowEntry), OffsetDateTime>,
    pub device_grants: Vec<DeviceGrant>,
    /// The OAuth client registry, tombstones included.
    pub oauth_clients: Vec<OAuthClient>,
    pub oauth_grants: Vec<OAuthGrant>,
    pub refresh_tokens: Vec<RefreshRecord>,
    pub signing_keys: Vec<SigningKey>,
    pub sessions: Vec<Session>,
    /// The last TOTP step accepted per account.
    pub totp_steps: HashMap<AccountId, u64>,
    /// Views of each budgeted link leased to replicas and not settled.
    pub views_leased: HashMap<LinkId, u64>,
    /// Each lease on a link's views: the views it holds, and when it lapses.
    pub view_leases: HashMap<(LinkId, quire_kernel::LeaseId), (u64, OffsetDateTime)>,
    /// Views per link and day.
    pub daily_views: HashMap<(LinkId, time::Date), u64>,
    /// Bot views per link and day.
    pub daily_bot_views: HashMap<(LinkId, time::Date), u64>,
    /// Referred views per link, day and referrer host.
    pub referrers: HashMap<(LinkId, time::Date, String), u64>,
    /// Recovery codes: (account, hash, used).
    pub recovery_codes: Vec<(AccountId, String, bool)>,
    /// (bucket, client) → when each allowed request was made (the sliding log), with the
    /// id of the slot when a budget's `take` made it.
    pub rate_events: HashMap<(String, String), Vec<(i64, OffsetDateTime)>>,
    /// The last slot id given out.
    pub rate_slots: i64,
    /// The email route's sends: (mail id, account, when).
    pub email_sends: Vec<(uuid::Uuid, AccountId, OffsetDateTime)>,
    pub invitations: Vec<InvitedNumber>,
    /// Spent captcha solutions: nonce hash → when their challenge expires.
    pub spent_captchas: HashMap<String, OffsetDateTime>,
    /// One-time links, with when each was used.
    pub account_links: Vec<(AccountToken, Option<OffsetDateTime>)>,
    /// Publish request ids: (caller, request id) → the page and when.
    pub publish_requests: HashMap<(String, String), (PageId, OffsetDateTime)>,
}

#[derive(Debug, Default)]
pub struct MemoryStore {
    state: Mutex<State>,
    failing: Mutex<Failing>,
    /// The operations called since [`MemoryStore::record_calls`], when recording.
    calls: Mutex<Option<Vec<Op>>>,
    /// Calls that wait for each other once their work is done.
    rendezvous: Mutex<Vec<Rendezvous>>,
}

/// The next `left` calls of `ops`, each waiting at `barrier` once its write is done.
#[derive(Debug)]
struct Rendezvous {
    ops: Vec<Op>,
    left: usize,
    barrier: Arc<tokio::sync::Barrier>,
}

impl MemoryStore {
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes the port operation `op` fail until [`heal`].
    ///
    /// [`heal`]: MemoryStore::heal
    pub fn fail(&self, op: Op) {
        self.failing.lock().expect("lock").ops.insert(op);
    }

    /// Makes every operation fail until [`heal`].
    ///
    /// [`heal`]: MemoryStore::heal
    pub fn fail_everything(&self) {
        self.failing.lock().expect("lock").everything = true;
    }

    /// Clears every failure switch.
    pub fn heal(&self) {
        *self.failing.lock().expect("lock") = Failing::default();
    }

    /// A copy of the whole state.
    #[must_use]
    pub fn snapshot(&self) -> State {
        self.state.lock().expect("lock").clone()
    }

    /// Changes the state directly, for a condition no port operation makes (an account
    /// that loses its activation).
    pub fn alter(&self, change: impl FnOnce(&mut State)) {
        change(&mut self.state.lock().expect("lock"));
    }

    /// Starts (or restarts) recording which port operations are called, in order.
    pub fn record_calls(&self) {
        *self.calls.lock().expect("lock") = Some(Vec::new());
    }

    /// The operations called since [`MemoryStore::record_calls`] (empty when not recording).
    #[must_use]
    pub fn calls(&self) -> Vec<Op> {
        self.calls.lock().expect("lock").clone().unwrap_or_default()
    }

    /// Makes the next `parties` calls of `ops` each wait, once its work is done, until all
    /// of them have come: a race interleaved at that point every time (two uploads both
    /// ready before either counts its account's bytes again), not only when the scheduler
    /// happens to. Several may be set at once, for different points. The calls that wait:
    /// [`Op::MarkReady`], [`Op::SwapContents`] and [`Op::StoredBytes`].
    pub fn rendezvous(&self, ops: &[Op], parties: usize) {
        self.rendezvous.lock().expect("lock").push(Rendezvous {
            ops: ops.to_vec(),
            left: parties,
            barrier: Arc::new(tokio::sync::Barrier::new(parties)),
        });
    }

    /// Waits for the other calls of the first [`MemoryStore::rendezvous`] that `op` is one
    /// of.
    async fn meet(&self, op: Op) {
        let barrier = {
            let mut all = self.rendezvous.lock().expect("lock");
            let Some(at) = all.iter().position(|m| m.ops.contains(&op)) else {
                return;
            };
            let meeting = &mut all[at];
            meeting.left = meeting.left.saturating_sub(1);
            let barrier = meeting.barrier.clone();
            if meeting.left == 0 {
                all.remove(at);
            }
            barrier
        };
        barrier.wait().await;
    }

    fn check(&self, op: Op) -> Result<(), InfraError> {
        if let Some(calls) = self.calls.lock().expect("lock").as_mut() {
            calls.push(op);
        }
        if self.failing.lock().expect("lock").covers(op) {
            Err(InfraError::new(format!("injected failure in {op:?}")))
        } else {
            Ok(())
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        f(&mut self.state.lock().expect("lock"))
    }
}
