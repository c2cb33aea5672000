//! The budget of wrong second-factor codes: spent per account and address, an owner
//! signing in from elsewhere still let in, and right codes (app or recovery) never counted.

use quire_accounts::SecondFactorError;
use quire_kernel::Clock;
use time::Duration;

use super::{IP, PASSWORD, World};

#[tokio::test]
async fn wrong_codes_are_throttled_per_account_and_address() {
    let w = World::new().await;
    let secret = w.enroll().await;
    let signed = w.sign_in().await;
    let (session, account) = w.sessions.current(&signed.token).await.unwrap().unwrap();
    for _ in 0..10 {
        assert_eq!(
            w.sessions
                .give_second_factor(&session, &account, "999999", IP)
                .await
                .unwrap_err(),
            SecondFactorError::WrongCode
        );
    }
    let right = secret.code_at(w.clock.now());
    assert_eq!(
        w.sessions
            .give_second_factor(&session, &account, &right, IP)
            .await
            .unwrap_err(),
        SecondFactorError::Throttled,
        "past 10 wrong codes the address that gave them waits, even with the right one"
    );
    assert!(!w.satisfied(&signed).await);
    // The window passes and the address may try again.
    w.clock.advance(Duration::minutes(15));
    let right = secret.code_at(w.clock.now());
    w.sessions
        .give_second_factor(&session, &account, &right, IP)
        .await
        .unwrap();
}

#[tokio::test]
async fn wrong_codes_from_one_sign_in_do_not_keep_the_owner_out() {
    const GUESSER: &str = "198.51.100.7";
    const OWNER: &str = "203.0.113.9";
    let w = World::new().await;
    let (secret, recovery) = w.enroll_with_codes().await;
    // Someone who knows the password spends the account's budget from a sign-in of theirs.
    let theirs = w.sessions.sign_in("ann", PASSWORD, GUESSER).await.unwrap();
    let (their_session, account) = w.sessions.current(&theirs.token).await.unwrap().unwrap();
    for _ in 0..10 {
        assert_eq!(
            w.sessions
                .give_second_factor(&their_session, &account, "999999", GUESSER)
                .await
                .unwrap_err(),
            SecondFactorError::WrongCode
        );
    }
    assert_eq!(
        w.sessions
            .give_second_factor(&their_session, &account, "999999", GUESSER)
            .await
            .unwrap_err(),
        SecondFactorError::Throttled
    );

    // The owner, signing in from elsewhere, still gets in with the right code...
    let owners = w.sessions.sign_in("ann", PASSWORD, OWNER).await.unwrap();
    let (session, account) = w.sessions.current(&owners.token).await.unwrap().unwrap();
    w.sessions
        .give_second_factor(&session, &account, &secret.code_at(w.clock.now()), OWNER)
        .await
        .unwrap();
    assert!(w.satisfied(&owners).await);
    // ...and with a recovery code too, again and again: right codes give their slots back.
    for code in &recovery[..3] {
        let again = w.sessions.sign_in("ann", PASSWORD, OWNER).await.unwrap();
        let (session, account) = w.sessions.current(&again.token).await.unwrap().unwrap();
        w.sessions
            .give_second_factor(&session, &account, code, OWNER)
            .await
            .unwrap();
        assert!(w.satisfied(&again).await);
    }
    // The guesser is still refused; an address failing past the spent budget gets one try.
    assert_eq!(
        w.sessions
            .give_second_factor(&their_session, &account, "999999", GUESSER)
            .await
            .unwrap_err(),
        SecondFactorError::Throttled
    );
    let other = "192.0.2.200";
    assert_eq!(
        w.sessions
            .give_second_factor(&their_session, &account, "999999", other)
            .await
            .unwrap_err(),
        SecondFactorError::WrongCode
    );
    assert_eq!(
        w.sessions
            .give_second_factor(&their_session, &account, "999999", other)
            .await
            .unwrap_err(),
        SecondFactorError::Throttled
    );
    assert!(!w.satisfied(&theirs).await);
}

#[tokio::test]
async fn right_codes_never_count() {
    let w = World::new().await;
    let (secret, recovery) = w.enroll_with_codes().await;
    // More right codes than the budget holds, all in one window, from one address.
    for i in 0..12 {
        let signed = w.sign_in().await;
        let (session, account) = w.sessions.current(&signed.token).await.unwrap().unwrap();
        let code = if i % 4 == 3 {
            recovery[i / 4].clone()
        } else {
            secret.code_at(w.clock.now())
        };
        w.sessions
            .give_second_factor(&session, &account, &code, IP)
            .await
            .unwrap();
        w.clock.advance(Duration::seconds(30));
    }
    let account = w.ann().await;
    w.sessions
        .new_recovery_codes(&account, &secret.code_at(w.clock.now()), IP)
        .await
        .unwrap();
    // The whole budget of wrong codes is still there.
    let signed = w.sign_in().await;
    let (session, account) = w.sessions.current(&signed.token).await.unwrap().unwrap();
    for _ in 0..10 {
        assert_eq!(
            w.sessions
                .give_second_factor(&session, &account, "999999", IP)
                .await
                .unwrap_err(),
            SecondFactorError::WrongCode
        );
    }
    assert_eq!(
        w.sessions
            .give_second_factor(&session, &account, "999999", IP)
            .await
            .unwrap_err(),
        SecondFactorError::Throttled
    );
}
