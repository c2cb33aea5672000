//! Every row of the spec's device authorization state table, with a clock the test moves.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::sync::Arc;

use quire_device_auth::{
    DEVICE_CODE_GRANT, DecideError, DeviceAuthService, EXPIRES_IN_SECS, GrantState, INTERVAL_SECS,
    POLL_LIMIT, PollError, START_LIMIT, StartError,
};
use quire_kernel::{AccountId, Tier};
use quire_keys::KeyService;
use quire_testkit::{FixedClock, MemoryStore};
use time::Duration;

const IP: &str = "192.0.2.7";

struct World {
    store: Arc<MemoryStore>,
    clock: Arc<FixedClock>,
    auth: DeviceAuthService,
    keys: KeyService,
    account: quire_kernel::AccountId,
}

async fn world() -> World {
    let w = quire_testkit::World::builder()
        .accounts(&["ann"])
        .base_url("https://quire.example/")
        .build()
        .await;
    World {
        account: w.account("ann").account.id,
        auth: w.services.device_auth,
        keys: w.services.keys,
        store: w.store,
        clock: w.clock,
    }
}

fn wait(w: &World, secs: i64) {
    w.clock.advance(Duration::seconds(secs));
}

async fn poll(w: &World, code: &str) -> Result<quire_device_auth::Claimed, PollError> {
    w.auth.poll(Some(DEVICE_CODE_GRANT), Some(code), IP).await
}

#[tokio::test]
async fn start_returns_codes_urls_and_timings() {
    let w = world().await;
    let s = w.auth.start(Some("my laptop"), IP).await.unwrap();
    assert_eq!((s.expires_in, s.interval), (600, 3));
    assert_eq!(s.verification_uri, "https://quire.example/authorize-agent");
    assert_eq!(
        s.verification_uri_complete,
        format!(
            "https://quire.example/authorize-agent?code={}",
            s.user_code.display()
        )
    );
    let stored = &w.store.snapshot().device_grants[0];
    assert_eq!(stored.client_name, "my laptop");
    assert_ne!(
        stored.device_code_hash,
        s.device_code.expose(),
        "device codes are stored hashed"
    );
    w.auth.start(None, IP).await.unwrap();
    let grants = w.store.snapshot().device_grants;
    assert_eq!(grants[1].client_name, "agent");
    assert_ne!(grants[1].user_code, grants[0].user_code);
    let long = "n".repeat(61);
    for bad in ["", "   ", long.as_str(), "line\nbreak", "tab\tname"] {
        assert!(
            matches!(
                w.auth.start(Some(bad), IP).await,
                Err(StartError::InvalidRequest(_))
            ),
            "{bad:?}"
        );
    }
}

#[tokio::test]
async fn pending_then_slow_down_then_pending_again() {
    let w = world().await;
    let s = w.auth.start(None, IP).await.unwrap();
    let code = s.device_code.expose();
    assert_eq!(
        poll(&w, code).await.unwrap_err(),
        PollError::AuthorizationPending
    );
    wait(&w, 1);
    assert_eq!(
        poll(&w, code).await.unwrap_err(),
        PollError::SlowDown {
            interval: INTERVAL_SECS + 5
        }
    );
    // The grown interval now applies: 7 s is still too fast, 8 s is fine.
    wait(&w, 7);
    assert_eq!(
        poll(&w, code).await.unwrap_err(),
        PollError::SlowDown {
            interval: INTERVAL_SECS + 10
        }
    );
    wait(&w, 13);
    assert_eq!(
        poll(&w, code).await.unwrap_err(),
        PollError::AuthorizationPending
    );
}

#[tokio::test]
async fn approval_mints_a_master_key_once_at_the_first_poll() {
    let w = world().await;
    let s = w.auth.start(Some("ci runner"), IP).await.unwrap();
    let code = s.device_code.expose().to_owned();
    let decided = w
        .auth
        .decide(&s.user_code.display().to_lowercase(), w.account, true)
        .await
        .unwrap();
    assert_eq!(decided.state, GrantState::Approved { account: w.account });
    let keys_before = w.store.snapshot().keys.len();
    let claimed = poll(&w, &code).await.unwrap();
    assert!(claimed.access_token.expose().starts_with("qk_"));
    let keys = w.store.snapshot().keys;
    assert_eq!(keys.len(), keys_before + 1);
    let minted = keys.last().unwrap();
    assert_eq!(minted.tier, Tier::Master);
    assert_eq!(minted.name, "agent: ci runner");
    assert_eq!(minted.account_id, w.account);
    // The key works.
    let principal = w
        .keys
        .authenticate(Some(&format!("Bearer {}", claimed.access_token.expose())))
        .await
        .unwrap();
    assert!(principal.is_master());
    // Claimed: the same device code never yields another key.
    assert_eq!(poll(&w, &code).await.unwrap_err(), PollError::InvalidGrant);
    assert_eq!(w.store.snapshot().keys.len(), keys_before + 1);
}

#[tokio::test]
async fn denial_is_access_denied_on_every_poll() {
    let w = world().await;
    let s = w.auth.start(None, IP).await.unwrap();
    w.auth
        .decide(&s.user_code.display(), w.account, false)
        .await
        .unwrap();
    for _ in 0..2 {
        assert_eq!(
            poll(&w, s.device_code.expose()).await.unwrap_err(),
            PollError::AccessDenied
        );
        wait(&w, 5);
    }
    assert_eq!(
        w.auth
            .decide(&s.user_code.display(), w.account, true)
            .await
            .unwrap_err(),
        DecideError::AlreadyDecided
    );
}

#[tokio::test]
async fn grants_expire_at_exactly_600_seconds() {
    let w = world().await;
    let s = w.auth.start(None, IP).await.unwrap();
    wait(&w, i64::from(EXPIRES_IN_SECS) - 1);
    assert_eq!(
        poll(&w, s.device_code.expose()).await.unwrap_err(),
        PollError::AuthorizationPending
    );
    wait(&w, 1);
    assert_eq!(
        poll(&w, s.device_code.expose()).await.unwrap_err(),
        PollError::ExpiredToken
    );
    assert_eq!(
        w.auth
            .decide(&s.user_code.display(), w.account, true)
            .await
            .unwrap_err(),
        DecideError::Expired
    );
    // An approval that is not claimed before expiry cannot be claimed after it.
    let late = w.auth.start(None, IP).await.unwrap();
    w.auth
        .decide(&late.user_code.display(), w.account, true)
        .await
        .unwrap();
    wait(&w, i64::from(EXPIRES_IN_SECS));
    assert_eq!(
        poll(&w, late.device_code.expose()).await.unwrap_err(),
        PollError::ExpiredToken
    );
}

#[tokio::test]
async fn the_user_code_never_claims_and_bad_requests_are_named() {
    let w = world().await;
    let s = w.auth.start(None, IP).await.unwrap();
    w.auth
        .decide(&s.user_code.display(), w.account, true)
        .await
        .unwrap();
    for guess in [s.user_code.display(), s.user_code.as_str().to_owned()] {
        assert_eq!(poll(&w, &guess).await.unwrap_err(), PollError::InvalidGrant);
    }
    assert_eq!(
        poll(&w, "no-such-code").await.unwrap_err(),
        PollError::InvalidGrant
    );
    assert_eq!(
        w.auth
            .poll(Some("authorization_code"), Some(s.device_code.expose()), IP)
            .await
            .unwrap_err(),
        PollError::UnsupportedGrantType
    );
    assert!(matches!(
        w.auth.poll(None, Some(s.device_code.expose()), IP).await,
        Err(PollError::InvalidRequest(_))
    ));
    assert!(matches!(
        w.auth.poll(Some(DEVICE_CODE_GRANT), None, IP).await,
        Err(PollError::InvalidRequest(_))
    ));
    assert!(matches!(
        w.auth.poll(Some(DEVICE_CODE_GRANT), Some(""), IP).await,
        Err(PollError::InvalidRequest(_))
    ));
    assert_eq!(
        w.auth
            .decide("nonsense", w.account, true)
            .await
            .unwrap_err(),
        DecideError::Malformed
    );
    assert_eq!(
        w.auth
            .decide("BCDF-GHJK", w.account, true)
            .await
            .unwrap_err(),
        DecideError::Unknown
    );
    // After all that, the device code still claims.
    assert!(poll(&w, s.device_code.expose()).await.is_ok());
}

#[tokio::test]
async fn rate_limits_per_address_and_window() {
    let w = world().await;
    for _ in 0..START_LIMIT {
        w.auth.start(None, IP).await.unwrap();
    }
    assert_eq!(
        w.auth.start(None, IP).await.unwrap_err(),
        StartError::RateLimited
    );
    assert!(
        w.auth.start(None, "198.51.100.1").await.is_ok(),
        "another address has its own budget"
    );
    wait(&w, 15 * 60);
    assert!(
        w.auth.start(None, IP).await.is_ok(),
        "a new window starts afresh"
    );

    let code = "whatever";
    for _ in 0..POLL_LIMIT {
        assert_ne!(poll(&w, code).await.unwrap_err(), PollError::RateLimited);
    }
    assert_eq!(poll(&w, code).await.unwrap_err(), PollError::RateLimited);
}

#[tokio::test]
async fn code_lookups_are_counted_per_session_and_per_account() {
    let w = world().await;
    let (ann, bob) = (AccountId::new(), AccountId::new());
    for _ in 0..quire_device_auth::CODE_LOOKUPS_PER_SESSION {
        w.auth.count_code_lookup("session-a", ann).await.unwrap();
    }
    assert_eq!(
        w.auth
            .count_code_lookup("session-a", ann)
            .await
            .unwrap_err(),
        DecideError::Throttled
    );
    w.auth.count_code_lookup("session-b", ann).await.unwrap();
    wait(&w, 15 * 60);
    w.auth.count_code_lookup("session-a", ann).await.unwrap();
    // However many sessions an account signs in (right passwords cost nothing at sign-in),
    // its sessions together enter at most so many codes.
    let sessions =
        quire_device_auth::CODE_LOOKUPS_PER_ACCOUNT / quire_device_auth::CODE_LOOKUPS_PER_SESSION;
    for s in 0..sessions {
        for _ in 0..quire_device_auth::CODE_LOOKUPS_PER_SESSION {
            w.auth
                .count_code_lookup(&format!("bob-{s}"), bob)
                .await
                .unwrap();
        }
    }
    assert_eq!(
        w.auth.count_code_lookup("bob-new", bob).await.unwrap_err(),
        DecideError::Throttled
    );
    w.auth.count_code_lookup("ann-new", ann).await.unwrap();
}

#[tokio::test]
async fn the_sweep_frees_codes_a_day_after_expiry_and_keeps_live_grants() {
    let w = world().await;
    let old = w.auth.start(Some("old"), IP).await.unwrap();
    wait(&w, i64::from(EXPIRES_IN_SECS) + 24 * 3600 - 1);
    let live = w.auth.start(Some("live"), "192.0.2.8").await.unwrap();
    assert_eq!(
        w.auth.sweep().await.unwrap(),
        (0, 1),
        "the grant is not yet a day past expiry; its start's rate window is over a day old"
    );
    wait(&w, 2);
    assert_eq!(w.auth.sweep().await.unwrap(), (1, 0));
    assert!(matches!(
        poll(&w, old.device_code.expose()).await,
        Err(PollError::InvalidGrant)
    ));
    assert!(matches!(
        poll(&w, live.device_code.expose()).await,
        Err(PollError::AuthorizationPending)
    ));
}
