//! The shared fixtures (a directory with one account, the refusals' messages, a service's
//! own error) and the tests of a create: defaults, each field kept or refused, and where the
//! allow list and the service's own checks fall in the order.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use quire_kernel::{AccountId, Email, Handle};
use time::macros::datetime;

use super::*;

pub(super) const NOW: OffsetDateTime = datetime!(2030-01-01 00:00 UTC);

/// One account, `alice`; `down` fails every lookup.
#[derive(Debug)]
pub(super) struct Directory {
    pub(super) alice: AccountId,
    down: bool,
}

impl Directory {
    pub(super) fn up() -> Self {
        Self {
            alice: AccountId::new(),
            down: false,
        }
    }

    pub(super) fn down() -> Self {
        Self {
            down: true,
            ..Self::up()
        }
    }
}

#[async_trait]
impl AccountDirectory for Directory {
    async fn account_by_handle(&self, handle: &Handle) -> Result<Option<AccountId>, InfraError> {
        Ok(self
            .accounts_by_handles(std::slice::from_ref(handle))
            .await?
            .into_values()
            .next())
    }

    async fn accounts_by_handles(
        &self,
        handles: &[Handle],
    ) -> Result<HashMap<Handle, AccountId>, InfraError> {
        if self.down {
            return Err(InfraError::new("directory down"));
        }
        Ok(handles
            .iter()
            .filter(|h| h.as_str() == "alice")
            .map(|h| (h.clone(), self.alice))
            .collect())
    }

    async fn handle_and_email(&self, _: AccountId) -> Result<Option<(Handle, Email)>, InfraError> {
        Ok(None)
    }
}

pub(super) fn refused(message: &str) -> PolicyError {
    PolicyError::Invalid(Invalid(message.into()))
}

pub(super) const BAD_ACCESS: &str = "access must be private, password, allow_list or public";
pub(super) const BAD_ALIAS: &str = "alias must be 3-64 of A-Z, a-z, 0-9, _ and -";
pub(super) const SHORT_PASSWORD: &str = "password must be at least 8 characters";
pub(super) const NO_BOB: &str = "allow entry \"bob\": no account has that handle";

async fn validate(input: PolicyInput, order: AllowOrder) -> Result<ValidPolicy, PolicyError> {
    input
        .validate(NOW, &Directory::up(), Access::Private, order)
        .await
}

#[derive(Debug, PartialEq, Eq)]
pub(super) enum Site {
    Policy(PolicyError),
    Own,
}

impl From<PolicyError> for Site {
    fn from(e: PolicyError) -> Self {
        Site::Policy(e)
    }
}

#[tokio::test]
async fn an_empty_create_takes_the_default_access_and_nothing_else() {
    let valid = PolicyInput::default()
        .validate(
            NOW,
            &Directory::up(),
            Access::Public,
            AllowOrder::BeforeAlias,
        )
        .await
        .unwrap();
    assert_eq!(
        valid,
        ValidPolicy {
            policy: Policy {
                access: Access::Public,
                expires_at: None,
                max_views: None,
                allow: vec![],
            },
            alias: None,
            password: None,
        }
    );
}

#[tokio::test]
async fn a_create_with_every_field_is_checked_and_kept() {
    let directory = Directory::up();
    for order in [AllowOrder::BeforeAlias, AllowOrder::AfterPassword] {
        let valid = PolicyInput {
            access: Some("password".into()),
            expires_at: Some("2030-02-01T00:00:00.123456789Z".into()),
            max_views: Some(5),
            allow: vec!["alice".into(), "a@b.example".into(), "alice".into()],
            alias: Some("my-alias".into()),
            password: Some("correct horse".into()),
        }
        .validate(NOW, &directory, Access::Private, order)
        .await
        .unwrap();
        assert_eq!(valid.policy.access, Access::Password);
        assert_eq!(
            valid.policy.expires_at,
            Some(datetime!(2030-02-01 00:00:00.123456 UTC))
        );
        assert_eq!(valid.policy.max_views, Some(5));
        assert_eq!(
            valid.policy.allow,
            vec![
                AllowEntry::Account(directory.alice),
                AllowEntry::Email(Email::parse("a@b.example").unwrap()),
            ]
        );
        assert_eq!(valid.alias.as_deref(), Some("my-alias"));
        assert_eq!(valid.password.as_deref(), Some("correct horse"));
    }
}

#[tokio::test]
async fn each_bad_create_field_is_refused_with_its_message() {
    let cases: Vec<(PolicyInput, PolicyError)> = vec![
        (
            PolicyInput {
                access: Some("friends".into()),
                ..PolicyInput::default()
            },
            refused(BAD_ACCESS),
        ),
        (
            PolicyInput {
                expires_at: Some("tomorrow".into()),
                ..PolicyInput::default()
            },
            refused("expiresAt must be an ISO 8601 (RFC 3339) time"),
        ),
        (
            PolicyInput {
                expires_at: Some("2029-12-31T23:59:59Z".into()),
                ..PolicyInput::default()
            },
            refused("expiresAt must be in the future"),
        ),
        (
            PolicyInput {
                max_views: Some(0),
                ..PolicyInput::default()
            },
            refused("maxViews must be a positive integer"),
        ),
        (
            PolicyInput {
                allow: vec!["bob".into()],
                ..PolicyInput::default()
            },
            refused(NO_BOB),
        ),
        (
            PolicyInput {
                alias: Some("a".into()),
                ..PolicyInput::default()
            },
            refused(BAD_ALIAS),
        ),
        (
            PolicyInput {
                access: Some("password".into()),
                ..PolicyInput::default()
            },
            PolicyError::PasswordRequired,
        ),
        (
            PolicyInput {
                access: Some("password".into()),
                password: Some(String::new()),
                ..PolicyInput::default()
            },
            PolicyError::PasswordRequired,
        ),
        (
            PolicyInput {
                password: Some("short".into()),
                ..PolicyInput::default()
            },
            refused(SHORT_PASSWORD),
        ),
    ];
    for (input, expected) in cases {
        for order in [AllowOrder::BeforeAlias, AllowOrder::AfterPassword] {
            assert_eq!(
                validate(input.clone(), order).await,
                Err(expected.clone()),
                "{input:?} {order:?}"
            );
        }
    }
    let down = PolicyInput {
        allow: vec!["alice".into()],
        ..PolicyInput::default()
    }
    .validate(
        NOW,
        &Directory::down(),
        Access::Private,
        AllowOrder::BeforeAlias,
    )
    .await;
    assert!(matches!(down, Err(PolicyError::Infra(_))), "{down:?}");
}

#[tokio::test]
async fn the_allow_list_is_checked_where_the_order_says() {
    let bad_alias = PolicyInput {
        allow: vec!["bob".into()],
        alias: Some("a".into()),
        ..PolicyInput::default()
    };
    assert_eq!(
        validate(bad_alias.clone(), AllowOrder::BeforeAlias).await,
        Err(refused(NO_BOB))
    );
    assert_eq!(
        validate(bad_alias, AllowOrder::AfterPassword).await,
        Err(refused(BAD_ALIAS))
    );
    let no_password = PolicyInput {
        access: Some("password".into()),
        allow: vec!["bob".into()],
        ..PolicyInput::default()
    };
    assert_eq!(
        validate(no_password.clone(), AllowOrder::BeforeAlias).await,
        Err(refused(NO_BOB))
    );
    assert_eq!(
        validate(no_password, AllowOrder::AfterPassword).await,
        Err(PolicyError::PasswordRequired)
    );
}

#[tokio::test]
async fn a_services_own_checks_run_after_the_alias_and_before_the_password() {
    let polled = AtomicBool::new(false);
    let own = async {
        polled.store(true, Ordering::SeqCst);
        Err::<(), Site>(Site::Own)
    };
    let bad_alias = PolicyInput {
        alias: Some("a".into()),
        access: Some("password".into()),
        ..PolicyInput::default()
    }
    .validate_with(
        NOW,
        &Directory::up(),
        Access::Private,
        AllowOrder::BeforeAlias,
        own,
    )
    .await;
    assert_eq!(bad_alias, Err(Site::Policy(refused(BAD_ALIAS))));
    assert!(!polled.load(Ordering::SeqCst), "own ran after a refusal");

    for order in [AllowOrder::BeforeAlias, AllowOrder::AfterPassword] {
        let no_password = PolicyInput {
            access: Some("password".into()),
            ..PolicyInput::default()
        }
        .validate_with(NOW, &Directory::up(), Access::Private, order, async {
            Err::<(), Site>(Site::Own)
        })
        .await;
        assert_eq!(no_password, Err(Site::Own));
    }
    let (valid, own) = PolicyInput::default()
        .validate_with(
            NOW,
            &Directory::up(),
            Access::Private,
            AllowOrder::BeforeAlias,
            async { Ok::<_, Site>(7) },
        )
        .await
        .unwrap();
    assert_eq!((valid.policy.access, own), (Access::Private, 7));
}
