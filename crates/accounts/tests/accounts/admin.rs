//! The platform admin's account management, against the in-memory fakes: only the platform
//! admin's full-scope principal lists and (de)activates accounts, never its own account off.

use std::sync::Arc;

use quire_accounts::{AccountService, AdminAccountsError, CreateAccount};
use quire_kernel::{AccountId, Clock};
use quire_testkit::fixtures::{app_key, master, new_account};
use quire_testkit::memory::Op;
use quire_testkit::{FixedClock, MemoryStore, ThreadOffload};
use time::Duration;

#[tokio::test]
async fn only_the_platform_admin_lists_and_activates_accounts() {
    let store = Arc::new(MemoryStore::new());
    let clock = Arc::new(FixedClock::new());
    let accounts = AccountService::new(store.clone(), clock.clone(), Arc::new(ThreadOffload));
    let root = accounts
        .create(CreateAccount {
            platform_admin: true,
            ..new_account("root")
        })
        .await
        .unwrap();
    clock.advance(Duration::seconds(1));
    let ann = accounts
        .create(CreateAccount {
            activated: false,
            ..new_account("ann")
        })
        .await
        .unwrap();
    let admin = quire_kernel::Principal {
        is_platform_admin: true,
        ..master(root.account.id, root.project.id)
    };
    let ordinary = master(ann.account.id, ann.project.id);
    let admin_app_key = quire_kernel::Principal {
        is_platform_admin: true,
        ..app_key(
            root.account.id,
            quire_kernel::KeyId::new(),
            root.project.id,
            &[quire_kernel::App::Page],
        )
    };

    for who in [&ordinary, &admin_app_key] {
        assert_eq!(
            accounts.list(who).await.unwrap_err(),
            AdminAccountsError::Forbidden
        );
        assert_eq!(
            accounts
                .set_activated_by_admin(who, ann.account.id, true)
                .await
                .unwrap_err(),
            AdminAccountsError::Forbidden
        );
    }
    let handles: Vec<String> = accounts
        .list(&admin)
        .await
        .unwrap()
        .iter()
        .map(|a| a.handle.as_str().to_owned())
        .collect();
    assert_eq!(handles, ["root", "ann"]);

    let activated = accounts
        .set_activated_by_admin(&admin, ann.account.id, true)
        .await
        .unwrap();
    let at = activated.activated_at.unwrap();
    assert_eq!(at, clock.now());
    clock.advance(Duration::hours(1));
    let again = accounts
        .set_activated_by_admin(&admin, ann.account.id, true)
        .await
        .unwrap();
    assert_eq!(
        again.activated_at,
        Some(at),
        "the first activation time stays"
    );
    assert_eq!(
        accounts
            .set_activated_by_admin(&admin, root.account.id, false)
            .await
            .unwrap_err(),
        AdminAccountsError::OwnAccount
    );
    assert_eq!(
        accounts
            .set_activated_by_admin(&admin, AccountId::new(), true)
            .await
            .unwrap_err(),
        AdminAccountsError::NotFound
    );

    store.fail(Op::SetActivated);
    assert!(matches!(
        accounts
            .set_activated_by_admin(&admin, ann.account.id, false)
            .await
            .unwrap_err(),
        AdminAccountsError::Infra(_)
    ));
    store.heal();
    assert!(store.snapshot().accounts[1].activated_at.is_some());
    let off = accounts
        .set_activated_by_admin(&admin, ann.account.id, false)
        .await
        .unwrap();
    assert_eq!(off.activated_at, None);
    assert_eq!(store.snapshot().accounts[1].activated_at, None);
}
