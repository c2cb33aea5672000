//! The verification of the access tokens the flow issues, step by step, each refusal with
//! the spec's exact description: shape, key and signature, kind, issuer and audience,
//! expiry, the client in the registry, the registry readable; then the account.

use crate::common;

use common::{Flow, Now, flow, refused};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use quire_bearer::SUBJECT_TTL;
use quire_kernel::{App, Apps};
use quire_keys::AuthError;
use quire_oauth::access_token::{AccessClaims, TokenSubject, issue};
use quire_oauth::{ClientStore, TokenAudience};
use quire_testkit::memory::Op;
use time::Duration;

fn sign(f: &Flow, header: &Header, claims: &AccessClaims) -> String {
    let key = f.w.store.snapshot().signing_keys[0].clone();
    jsonwebtoken::encode(
        header,
        claims,
        &EncodingKey::from_ed_der(&key.private_pkcs8),
    )
    .unwrap()
}

fn claims_of(token: &str) -> (Header, AccessClaims) {
    let header = jsonwebtoken::decode_header(token).unwrap();
    let payload = token.split('.').nth(1).unwrap();
    (
        header,
        serde_json::from_slice(&base64_decode(payload)).unwrap(),
    )
}

fn b64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn base64_decode(s: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s)
        .unwrap()
}

#[tokio::test]
async fn each_verification_failure_answers_its_own_description_in_order() {
    let f = flow().await;
    let tokens = f.exchange(&f.code().await).await.unwrap();
    let good = tokens.access_token.clone();
    let (header, claims) = claims_of(&good);
    assert_eq!(header.typ.as_deref(), Some("at+jwt"));
    assert_eq!(header.alg, Algorithm::EdDSA);
    assert_eq!(claims.iss, "https://quire.test");
    assert_eq!(claims.aud, "https://quire.test/api");
    assert_eq!(claims.exp - claims.iat, 900);

    // 1. Not a JWT, or JSON that is not, or another algorithm.
    let parts: Vec<&str> = good.split('.').collect();
    let hs256 = b64(br#"{"alg":"HS256","typ":"at+jwt","kid":"k"}"#);
    let no_kid = b64(br#"{"alg":"EdDSA","typ":"at+jwt"}"#);
    for malformed in [
        "a.b.c".to_owned(),
        format!("{}.{}.{}", b64(b"not json"), parts[1], parts[2]),
        format!("{}.{}.{}", parts[0], b64(b"[1,2]"), parts[2]),
        format!("{hs256}.{}.{}", parts[1], parts[2]),
        format!("{no_kid}.{}.{}", parts[1], parts[2]),
    ] {
        assert_eq!(
            f.authenticate(&malformed).await.unwrap_err(),
            refused("malformed bearer token"),
            "{malformed}"
        );
    }
    // 2. A signature that does not verify, or a key we never had.
    // One signature character changed, in the middle (the last one carries padding bits).
    let mut chars: Vec<char> = good.chars().collect();
    let at = chars.len() - 10;
    chars[at] = if chars[at] == 'A' { 'B' } else { 'A' };
    let tampered: String = chars.into_iter().collect();
    assert_eq!(
        f.authenticate(&tampered).await.unwrap_err(),
        refused("unknown signing key")
    );
    let foreign = Header {
        kid: Some("no-such-key".into()),
        ..header.clone()
    };
    assert_eq!(
        f.authenticate(&sign(&f, &foreign, &claims))
            .await
            .unwrap_err(),
        refused("unknown signing key")
    );
    // 3. Signed by us, but not an access token.
    let other_kind = Header {
        typ: Some("JWT".into()),
        ..header.clone()
    };
    assert_eq!(
        f.authenticate(&sign(&f, &other_kind, &claims))
            .await
            .unwrap_err(),
        refused("not an OAuth-obtained token")
    );
    // 4. Another issuer or audience.
    let elsewhere = AccessClaims {
        aud: "https://other.example/api".into(),
        ..claims.clone()
    };
    assert_eq!(
        f.authenticate(&sign(&f, &header, &elsewhere))
            .await
            .unwrap_err(),
        refused("token issuer or audience mismatch")
    );
    // 5. Expired: 900 s plus 30 s of leeway.
    f.w.clock.advance(Duration::seconds(929));
    assert!(f.authenticate(&good).await.is_ok());
    f.w.clock.advance(Duration::seconds(1));
    assert_eq!(
        f.authenticate(&good).await.unwrap_err(),
        refused("token expired")
    );
}

#[tokio::test]
async fn a_deleted_client_and_an_unreadable_registry_are_refused() {
    let f = flow().await;
    let tokens = f.exchange(&f.code().await).await.unwrap();
    // 7. The registry cannot be read (first lookup of this client): fail closed.
    f.w.store.fail(Op::Client);
    assert_eq!(
        f.authenticate(&tokens.access_token).await.unwrap_err(),
        refused("client registry unavailable")
    );
    f.w.store.heal();

    // 6. A deleted client, on a replica that never saw the token before.
    let replica = f.w.replica();
    let now = f.w.clock_now();
    f.w.store.delete_client(&f.client.id, now).await.unwrap();
    assert_eq!(
        replica
            .keys
            .authenticate(Some(&format!("Bearer {}", tokens.access_token)))
            .await
            .unwrap_err(),
        refused("unknown or deleted client")
    );
    // Its refresh tokens were revoked with it.
    assert!(
        f.w.store
            .snapshot()
            .oauth_grants
            .iter()
            .all(|g| g.revoked_at.is_some())
    );
}

#[tokio::test]
async fn a_bearer_of_an_account_not_activated_is_refused() {
    let f = flow().await;
    let ann = f.w.account("ann").account.id;
    let audience = TokenAudience::for_base_url("https://quire.test");
    let key =
        f.w.services
            .oauth_tokens
            .signing_key(f.w.clock_now())
            .await
            .unwrap();
    let scopes = Apps::new([App::Page]).unwrap().into();
    let subject = TokenSubject {
        account: ann,
        client: &f.client.id,
        scopes: &scopes,
        project: None,
    };
    let token = issue(&key, &audience, subject, f.w.clock_now()).unwrap();
    assert!(f.authenticate(&token).await.is_ok());
    f.w.store.alter(|s| s.accounts[0].activated_at = None);
    // A replica that never saw the account refuses at once; one that did, within the
    // lookup's lifetime (as for API keys).
    assert_eq!(
        f.w.replica()
            .keys
            .authenticate(Some(&format!("Bearer {token}")))
            .await
            .unwrap_err(),
        AuthError::NotActivated
    );
    f.w.clock
        .advance(Duration::try_from(SUBJECT_TTL).unwrap() + Duration::milliseconds(100));
    assert_eq!(
        f.authenticate(&token).await.unwrap_err(),
        AuthError::NotActivated
    );
}

#[tokio::test]
async fn a_bearer_seen_within_the_lookup_lifetime_reads_nothing() {
    let f = flow().await;
    let tokens = f.exchange(&f.code().await).await.unwrap();
    let first = f.authenticate(&tokens.access_token).await.unwrap();
    f.w.store.record_calls();
    let again = f.authenticate(&tokens.access_token).await.unwrap();
    assert_eq!(again, first);
    assert_eq!(
        f.w.store.calls(),
        Vec::<Op>::new(),
        "signature checked in memory; key set, client, account and home project held"
    );
}

#[tokio::test]
async fn a_held_token_whose_key_left_the_set_is_checked_again_and_refused() {
    let f = flow().await;
    let tokens = f.exchange(&f.code().await).await.unwrap();
    assert!(f.authenticate(&tokens.access_token).await.is_ok());
    let (header, claims) = claims_of(&tokens.access_token);
    let unknown_kid = sign(
        &f,
        &Header {
            kid: Some("no-such-key".into()),
            ..header
        },
        &claims,
    );
    // The signing key is withdrawn; a token naming a key not held makes the set reload.
    f.w.store.alter(|s| s.signing_keys.clear());
    assert_eq!(
        f.authenticate(&unknown_kid).await.unwrap_err(),
        refused("unknown signing key")
    );
    assert_eq!(
        f.authenticate(&tokens.access_token).await.unwrap_err(),
        refused("unknown signing key"),
        "held as verified, but its key is no longer in the set"
    );
}
