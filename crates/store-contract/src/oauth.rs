//! The OAuth client registry: ids unique for ever, live listing, secret rotation, and a
//! delete that leaves a tombstone, detaches the client from every project and revokes its
//! grants at once. Grants: a pending request decided once by its own session, a code
//! redeemed once, refresh tokens rotated within their reuse window only, revocation.
//! Signing keys: stored, listed and deleted with their key material intact. Dynamic clients:
//! their registration and last use kept, and the idle ones found for the janitor.

use std::sync::Arc;

use quire_accounts::AccountStore;
use quire_kernel::Clock;
use quire_oauth::grant::CodeChallenge;
use quire_oauth::{
    Approval, ClientId, ClientStore, Grant, GrantStage, GrantStore, InsertClientError,
    RefreshRecord, SigningKey, SigningKeyStore,
};
use quire_projects::ProjectStore;
use time::Duration;

use super::support::{client_of, project_of, seed};
use quire_testkit::fixtures::FixedClock;

pub(super) async fn idle_dynamic_clients_are_found_by_last_use<S: ClientStore + 'static>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let admin = client_of("Admin", &clock);
    let mut never_used = client_of("Never used", &clock);
    never_used.registration = quire_oauth::Registration::Dynamic;
    let mut used = client_of("Used", &clock);
    used.registration = quire_oauth::Registration::Dynamic;
    for c in [&admin, &never_used, &used] {
        s.insert_client(c).await.unwrap();
    }
    assert_eq!(s.client(&used.id).await.unwrap().unwrap(), used);
    clock.advance(Duration::days(31));
    let touched_at = clock.now();
    s.touch_client(&used.id, touched_at).await.unwrap();
    let read = s.client(&used.id).await.unwrap().unwrap();
    assert_eq!(read.last_used_at, Some(touched_at));
    assert_eq!(read.registration, quire_oauth::Registration::Dynamic);
    // Idle since before a day ago: the dynamic client never used; not the admin's, not the
    // one used just now.
    let idle = s
        .idle_dynamic_clients(clock.now() - Duration::days(1))
        .await
        .unwrap();
    assert_eq!(idle, vec![never_used.id.clone()]);
    assert!(s.delete_client(&never_used.id, clock.now()).await.unwrap());
    let idle = s
        .idle_dynamic_clients(clock.now() + Duration::days(1))
        .await
        .unwrap();
    assert_eq!(idle, vec![used.id.clone()]);
}

pub(super) async fn clients_are_listed_rotated_and_deleted_as_tombstones<
    S: AccountStore + ClientStore + ProjectStore + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let bob = seed(&s, &clock, "bob").await;
    let first = client_of("First", &clock);
    let mut second = client_of("Second", &clock);
    second.redirect_uris = vec![
        quire_oauth::RedirectUri::stored("http://127.0.0.1/cb"),
        quire_oauth::RedirectUri::stored("https://b.example/cb?x=1"),
    ];
    second.secret_hash = None;
    s.insert_client(&second).await.unwrap();
    s.insert_client(&first).await.unwrap();
    assert_eq!(
        s.insert_client(&first).await.unwrap_err(),
        InsertClientError::IdTaken
    );
    // Oldest first, every field as stored, loopback URIs still matching any port.
    let live = s.live_clients().await.unwrap();
    assert_eq!(live, vec![first.clone(), second.clone()]);
    let read = s.client(&second.id).await.unwrap().unwrap();
    assert!(read.redirect_uris[0].matches("http://127.0.0.1:49152/cb"));
    assert_eq!(s.client(&ClientId::generate()).await.unwrap(), None);

    assert!(s.set_client_secret(&first.id, "ab").await.unwrap());
    assert_eq!(
        s.client(&first.id)
            .await
            .unwrap()
            .unwrap()
            .secret_hash
            .as_deref(),
        Some("ab")
    );

    let mut home_of_ann = project_of(&ann.account, "ann_app", &clock);
    home_of_ann.oauth_client_id = Some(first.id.as_str().to_owned());
    s.insert_project(&home_of_ann).await.unwrap();
    let mut home_of_bob = project_of(&bob.account, "bob_app", &clock);
    home_of_bob.oauth_client_id = Some(first.id.as_str().to_owned());
    s.insert_project(&home_of_bob).await.unwrap();

    clock.advance(time::Duration::seconds(5));
    let at = clock.now();
    assert!(s.delete_client(&first.id, at).await.unwrap());
    let tomb = s.client(&first.id).await.unwrap().unwrap();
    assert_eq!(tomb.deleted_at, Some(at));
    assert!(!tomb.is_live());
    assert_eq!(s.live_clients().await.unwrap(), vec![second.clone()]);
    for p in [home_of_ann.id, home_of_bob.id] {
        let p = s.project_by_id(p).await.unwrap().unwrap();
        assert_eq!(p.oauth_client_id, None, "{}", p.slug.as_str());
    }
    // A tombstone is deleted once, rotates nothing, keeps its id, and cannot be attached.
    assert!(!s.delete_client(&first.id, at).await.unwrap());
    assert!(!s.set_client_secret(&first.id, "cd").await.unwrap());
    assert_eq!(
        s.insert_client(&first).await.unwrap_err(),
        InsertClientError::IdTaken
    );
    assert_eq!(
        s.update_project(&home_of_ann).await.unwrap_err(),
        quire_projects::ProjectWriteError::UnknownClient
    );
}

fn pending(client: &ClientId, account: quire_kernel::AccountId, clock: &FixedClock) -> Grant {
    Grant {
        id: quire_kernel::secret::random_url_token(),
        client_id: client.clone(),
        account_id: account,
        // A read-only scope and the agent endpoint's resource, which the store must keep.
        scopes: quire_kernel::Scopes::from_words(["page:read", "link"]).expect("known words"),
        project_id: None,
        resource: quire_kernel::Resource::Mcp,
        redirect_uri: "https://app.example/cb".into(),
        state: Some("xyz".into()),
        code_challenge: CodeChallenge::parse(&"c".repeat(43)).expect("43 characters"),
        stage: GrantStage::Pending {
            request_hash: quire_kernel::secret::random_url_token(),
            session_hash: "session-a".into(),
            expires_at: clock.now() + Duration::minutes(10),
        },
        created_at: clock.now(),
        revoked_at: None,
    }
}

/// Approving `grant` with `code`, in `project`, with its requested scopes.
fn approval_of(
    grant: &Grant,
    code: &str,
    expires: time::OffsetDateTime,
    project: quire_kernel::ProjectId,
) -> Approval {
    Approval {
        code_hash: code.to_owned(),
        code_expires_at: expires,
        project_id: project,
        scopes: grant.scopes.clone(),
    }
}

fn request_hash(g: &Grant) -> String {
    match &g.stage {
        GrantStage::Pending { request_hash, .. } => request_hash.clone(),
        other => panic!("not pending: {other:?}"),
    }
}

pub(super) async fn grants_are_decided_redeemed_and_rotated_once<
    S: AccountStore + ClientStore + GrantStore + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let client = client_of("Notes", &clock);
    s.insert_client(&client).await.unwrap();
    let now = clock.now();

    // A pending request: only its own session decides it, once, before it expires.
    let approved = pending(&client.id, ann.account.id, &clock);
    s.insert_oauth_grant(&approved).await.unwrap();
    let hash = request_hash(&approved);
    let code_expiry = now + Duration::seconds(60);
    // Approving stores the project picked and the scopes approved (here narrowed).
    let approved_with = Approval {
        scopes: quire_kernel::Scopes::from_words(["page:read"]).expect("a known word"),
        ..approval_of(&approved, "code-1", code_expiry, ann.project.id)
    };
    let approval = Some(&approved_with);
    assert_eq!(
        s.pending_grant(&hash, "session-b", now).await.unwrap(),
        None
    );
    assert_eq!(
        s.pending_grant(&hash, "session-a", now).await.unwrap(),
        Some(approved.clone())
    );
    assert_eq!(
        s.settle_pending(&hash, "session-b", now, approval)
            .await
            .unwrap(),
        None
    );
    let late = now + Duration::minutes(10);
    assert_eq!(
        s.settle_pending(&hash, "session-a", late, approval)
            .await
            .unwrap(),
        None
    );
    let settled = s
        .settle_pending(&hash, "session-a", now, approval)
        .await
        .unwrap();
    assert_eq!(settled, Some(approved.clone()));
    assert_eq!(
        s.settle_pending(&hash, "session-a", now, approval)
            .await
            .unwrap(),
        None
    );
    let by_code = s.grant_by_code("code-1").await.unwrap().unwrap();
    assert_eq!(
        by_code.stage,
        GrantStage::Approved {
            code_hash: "code-1".into(),
            code_expires_at: code_expiry
        }
    );
    assert_eq!(by_code.state.as_deref(), Some("xyz"));
    assert_eq!(by_code.project_id, Some(ann.project.id));
    assert_eq!(by_code.scopes.to_scope_string(), "page:read");
    assert_eq!(
        s.pending_grant(&hash, "session-a", now).await.unwrap(),
        None
    );

    // A denied request is gone.
    let denied = pending(&client.id, ann.account.id, &clock);
    s.insert_oauth_grant(&denied).await.unwrap();
    let gone = s
        .settle_pending(&request_hash(&denied), "session-a", now, None)
        .await
        .unwrap();
    assert_eq!(gone.map(|g| g.id), Some(denied.id.clone()));
    assert_eq!(
        s.settle_pending(&request_hash(&denied), "session-a", now, None)
            .await
            .unwrap(),
        None
    );

    // The code is redeemed once, with its first refresh token.
    let (_, first) = RefreshRecord::issue(&by_code, now);
    assert!(s.redeem_code(&by_code.id, now, &first).await.unwrap());
    let (_, other) = RefreshRecord::issue(&by_code, now);
    assert!(!s.redeem_code(&by_code.id, now, &other).await.unwrap());
    assert_eq!(s.refresh_token(&other.token_hash).await.unwrap(), None);
    let (found, grant) = s.refresh_token(&first.token_hash).await.unwrap().unwrap();
    assert_eq!(found, first);
    assert!(matches!(grant.stage, GrantStage::Redeemed { redeemed_at, .. } if redeemed_at == now));

    // Rotation: once, again within the window (keeping the first time), never after.
    let (_, second) = RefreshRecord::issue(&grant, now);
    let window = now - Duration::seconds(10);
    assert!(
        s.rotate_refresh(&first.token_hash, now, window, &second)
            .await
            .unwrap()
    );
    let retry_at = now + Duration::seconds(5);
    let (_, retry) = RefreshRecord::issue(&grant, retry_at);
    let retry_window = retry_at - Duration::seconds(10);
    assert!(
        s.rotate_refresh(&first.token_hash, retry_at, retry_window, &retry)
            .await
            .unwrap()
    );
    let (old, _) = s.refresh_token(&first.token_hash).await.unwrap().unwrap();
    assert_eq!(old.rotated_at, Some(now));
    let after = now + Duration::seconds(11);
    let (_, stolen) = RefreshRecord::issue(&grant, after);
    let after_window = after - Duration::seconds(10);
    assert!(
        !s.rotate_refresh(&first.token_hash, after, after_window, &stolen)
            .await
            .unwrap()
    );
    assert_eq!(s.refresh_token(&stolen.token_hash).await.unwrap(), None);

    // Revoking the grant ends the family: no rotation of any of its tokens.
    s.revoke_grant(&grant.id, after).await.unwrap();
    s.revoke_grant(&grant.id, after + Duration::seconds(1))
        .await
        .unwrap();
    let (_, revoked) = s.refresh_token(&second.token_hash).await.unwrap().unwrap();
    assert_eq!(revoked.revoked_at, Some(after));
    let (_, next) = RefreshRecord::issue(&grant, after);
    assert!(
        !s.rotate_refresh(&second.token_hash, after, after_window, &next)
            .await
            .unwrap()
    );

    // Deleting the client revokes its other grants too.
    let live = pending(&client.id, ann.account.id, &clock);
    s.insert_oauth_grant(&live).await.unwrap();
    s.settle_pending(
        &request_hash(&live),
        "session-a",
        now,
        Some(&approval_of(&live, "code-2", code_expiry, ann.project.id)),
    )
    .await
    .unwrap();
    assert!(s.delete_client(&client.id, after).await.unwrap());
    let ended = s.grant_by_code("code-2").await.unwrap().unwrap();
    assert_eq!(ended.revoked_at, Some(after));
}

/// `grant` approved with `code` in `project` and redeemed at `now` with its first refresh
/// token.
async fn redeemed<S: GrantStore + 'static>(
    s: &Arc<S>,
    (grant, project): (&Grant, quire_kernel::ProjectId),
    code: &str,
    now: time::OffsetDateTime,
) -> RefreshRecord {
    s.insert_oauth_grant(grant).await.unwrap();
    s.settle_pending(
        &request_hash(grant),
        "session-a",
        now,
        Some(&approval_of(
            grant,
            code,
            now + Duration::seconds(60),
            project,
        )),
    )
    .await
    .unwrap()
    .unwrap();
    let (_, first) = RefreshRecord::issue(grant, now);
    assert!(s.redeem_code(&grant.id, now, &first).await.unwrap());
    first
}

pub(super) async fn live_grants_are_redeemed_unrevoked_with_a_live_refresh_token<
    S: AccountStore + ClientStore + GrantStore + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let bob = seed(&s, &clock, "bob").await;
    let client = client_of("Notes", &clock);
    s.insert_client(&client).await.unwrap();
    let now = clock.now();
    let account = ann.account.id;
    assert_eq!(s.live_grants(account, now).await.unwrap(), vec![]);

    // Pending and approved-only grants are not live; nor is bob's.
    s.insert_oauth_grant(&pending(&client.id, account, &clock))
        .await
        .unwrap();
    let approved = pending(&client.id, account, &clock);
    s.insert_oauth_grant(&approved).await.unwrap();
    s.settle_pending(
        &request_hash(&approved),
        "session-a",
        now,
        Some(&approval_of(
            &approved,
            "code-a",
            now + Duration::seconds(60),
            ann.project.id,
        )),
    )
    .await
    .unwrap();
    redeemed(
        &s,
        (&pending(&client.id, bob.account.id, &clock), bob.project.id),
        "code-b",
        now,
    )
    .await;
    assert_eq!(s.live_grants(account, now).await.unwrap(), vec![]);

    // A redeemed grant is live, with its refresh token's issue time; after a rotation (and
    // a retried one within the window), the newest token's.
    let grant = pending(&client.id, account, &clock);
    let first = redeemed(&s, (&grant, ann.project.id), "code-1", now).await;
    let mut stored = s.grant_by_code("code-1").await.unwrap().unwrap();
    let live = s.live_grants(account, now).await.unwrap();
    assert_eq!(
        live,
        vec![quire_oauth::LiveGrant {
            grant: stored.clone(),
            last_issued_at: now
        }]
    );
    let later = now + Duration::minutes(20);
    let (_, second) = RefreshRecord::issue(&stored, later);
    assert!(
        s.rotate_refresh(
            &first.token_hash,
            later,
            later - Duration::seconds(10),
            &second
        )
        .await
        .unwrap()
    );
    let retry = later + Duration::seconds(2);
    let (_, third) = RefreshRecord::issue(&stored, retry);
    assert!(
        s.rotate_refresh(
            &first.token_hash,
            retry,
            retry - Duration::seconds(10),
            &third
        )
        .await
        .unwrap()
    );
    let live = s.live_grants(account, retry).await.unwrap();
    assert_eq!(live.len(), 1);
    assert_eq!(live[0].last_issued_at, retry);

    // Its refresh tokens expired: not live. Revoked: not live.
    assert_eq!(
        s.live_grants(account, third.expires_at).await.unwrap(),
        vec![]
    );
    s.revoke_grant(&grant.id, retry).await.unwrap();
    assert_eq!(s.live_grants(account, retry).await.unwrap(), vec![]);
    stored.revoked_at = Some(retry);
    assert_eq!(
        s.grant_by_code("code-1").await.unwrap().unwrap().revoked_at,
        stored.revoked_at
    );
}

pub(super) async fn a_grant_acts_in_its_project_until_the_project_is_deleted<
    S: AccountStore + ClientStore + GrantStore + ProjectStore + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let client = client_of("Notes", &clock);
    s.insert_client(&client).await.unwrap();
    let side = project_of(&ann.account, "side", &clock);
    s.insert_project(&side).await.unwrap();
    let now = clock.now();
    let in_side = pending(&client.id, ann.account.id, &clock);
    let first = redeemed(&s, (&in_side, side.id), "code-side", now).await;
    let in_home = pending(&client.id, ann.account.id, &clock);
    redeemed(&s, (&in_home, ann.project.id), "code-home", now).await;
    let (_, grant) = s.refresh_token(&first.token_hash).await.unwrap().unwrap();
    assert_eq!(grant.project_id, Some(side.id));

    // Deleting the project ends the grants acting in it, refresh tokens included; the
    // others stay.
    s.delete_project(&side, None).await.unwrap();
    assert_eq!(s.grant_by_code("code-side").await.unwrap(), None);
    assert_eq!(s.refresh_token(&first.token_hash).await.unwrap(), None);
    let live = s.live_grants(ann.account.id, now).await.unwrap();
    assert_eq!(live.len(), 1);
    assert_eq!(live[0].grant.project_id, Some(ann.project.id));
}

pub(super) async fn signing_keys_keep_their_material<S: SigningKeyStore + 'static>(s: Arc<S>) {
    let clock = FixedClock::new();
    let now = clock.now();
    let first = SigningKey::generate(now, now).unwrap();
    let second = SigningKey::generate(now, now + Duration::days(30)).unwrap();
    s.insert_signing_key(&second).await.unwrap();
    s.insert_signing_key(&first).await.unwrap();
    let mut keys = s.signing_keys().await.unwrap();
    keys.sort_by_key(|k| k.activates_at);
    assert_eq!(keys, vec![first.clone(), second.clone()]);
    s.delete_signing_keys(&[first.kid.clone(), "unknown".into()])
        .await
        .unwrap();
    assert_eq!(s.signing_keys().await.unwrap(), vec![second]);
}
