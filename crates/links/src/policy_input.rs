//! The two operations every service of a thing behind a link (pages, objects, URL links)
//! performs on its link's policy: build one from the raw fields of a create
//! ([`PolicyInput::validate`]), and apply the fields of an update to a link
//! ([`PolicyPatch::apply`]). The fields are checked by the [`crate::rules`]; a refusal is a
//! [`PolicyError`], which each service maps into its own use case's error.
//!
//! The order of the checks is part of what a client sees: a request with several bad fields
//! is told of the first one only. So a service's own checks that have always sat among the
//! policy's (a URL link's title, an object's alias being free) are handed in as a future that
//! runs right after the alias (it is never polled when an earlier field is refused), and a
//! create names where its allow list is checked ([`AllowOrder`]).

use std::future::Future;

use quire_kernel::InfraError;
use time::OffsetDateTime;

use crate::model::Link;
use crate::policy::{Access, AllowEntry, Policy};
use crate::ports::AccountDirectory;
use crate::rules::{self, AllowError, Invalid, PasswordChange};

/// Why a policy's fields were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// A field broke its rule; the message names it.
    #[error("{0}")]
    Invalid(Invalid),
    /// `password` access, and no password sent or kept.
    #[error("access is password, so a password is required")]
    PasswordRequired,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

impl From<Invalid> for PolicyError {
    fn from(e: Invalid) -> Self {
        PolicyError::Invalid(e)
    }
}

impl From<AllowError> for PolicyError {
    fn from(e: AllowError) -> Self {
        match e {
            AllowError::Invalid(i) => PolicyError::Invalid(i),
            AllowError::Infra(e) => PolicyError::Infra(e),
        }
    }
}

/// Where a create checks its allow list among the policy's fields. Both orders are kept
/// because each service has always answered in its own, and the first refusal of a request
/// with several bad fields depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllowOrder {
    /// access, expiresAt, maxViews, allow, alias, the service's own checks, password (URL
    /// links and objects).
    BeforeAlias,
    /// access, expiresAt, maxViews, alias, the service's own checks, password, allow (pages).
    AfterPassword,
}

/// The policy fields of a create, as JSON typed them.
#[derive(Debug, Clone, Default)]
pub struct PolicyInput {
    /// `None` is the service's default access.
    pub access: Option<String>,
    pub expires_at: Option<String>,
    pub max_views: Option<i128>,
    pub allow: Vec<String>,
    pub alias: Option<String>,
    /// An empty password is none.
    pub password: Option<String>,
}

/// A create's policy fields, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidPolicy {
    pub policy: Policy,
    pub alias: Option<String>,
    /// The new password, to be hashed into the link's `password_hash`; `None` for none.
    pub password: Option<String>,
}

/// The allow list of a create, before or after [`rules::resolve_allow`].
#[derive(Debug)]
enum Allow {
    Unchecked(Vec<String>),
    Resolved(Vec<AllowEntry>),
}

/// A create's fields checked up to its alias; its password (and, for pages, its allow list)
/// are checked after the service's own checks.
#[derive(Debug)]
struct CheckedToAlias {
    access: Access,
    expires_at: Option<OffsetDateTime>,
    max_views: Option<u64>,
    allow: Allow,
    alias: Option<String>,
    password: Option<String>,
}

impl PolicyInput {
    /// Checks the fields of a new link's policy, in the order `order` names; `default_access`
    /// stands for an access not sent.
    ///
    /// # Errors
    /// [`PolicyError::Invalid`] naming the first field refused, or
    /// [`PolicyError::PasswordRequired`], in that order; [`PolicyError::Infra`] when the
    /// allow list's handles cannot be looked up.
    pub async fn validate(
        self,
        now: OffsetDateTime,
        accounts: &dyn AccountDirectory,
        default_access: Access,
        order: AllowOrder,
    ) -> Result<ValidPolicy, PolicyError> {
        let (valid, ()) = self
            .validate_with(
                now,
                accounts,
                default_access,
                order,
                std::future::ready(Ok::<(), PolicyError>(())),
            )
            .await?;
        Ok(valid)
    }

    /// [`PolicyInput::validate`], with the service's own checks `own` run right after the
    /// alias (and not at all when a field before it is refused); answers what `own` made.
    ///
    /// # Errors
    /// Those of [`PolicyInput::validate`], and `own`'s, each at its place.
    pub async fn validate_with<T, E: From<PolicyError>>(
        self,
        now: OffsetDateTime,
        accounts: &dyn AccountDirectory,
        default_access: Access,
        order: AllowOrder,
        own: impl Future<Output = Result<T, E>>,
    ) -> Result<(ValidPolicy, T), E> {
        let checked = self
            .check_to_alias(now, accounts, default_access, order)
            .await?;
        let own = own.await?;
        Ok((checked.finish(accounts).await?, own))
    }

    async fn check_to_alias(
        self,
        now: OffsetDateTime,
        accounts: &dyn AccountDirectory,
        default_access: Access,
        order: AllowOrder,
    ) -> Result<CheckedToAlias, PolicyError> {
        let access = self
            .access
            .as_deref()
            .map_or(Ok(default_access), rules::access)?;
        let expires_at = self
            .expires_at
            .as_deref()
            .map(|t| rules::expires_at(t, now))
            .transpose()?;
        let max_views = self.max_views.map(rules::max_views).transpose()?;
        let allow = match order {
            AllowOrder::BeforeAlias => {
                Allow::Resolved(rules::resolve_allow(accounts, &self.allow).await?)
            }
            AllowOrder::AfterPassword => Allow::Unchecked(self.allow),
        };
        let alias = self.alias.as_deref().map(rules::alias).transpose()?;
        Ok(CheckedToAlias {
            access,
            expires_at,
            max_views,
            allow,
            alias,
            password: self.password.filter(|p| !p.is_empty()),
        })
    }
}

impl CheckedToAlias {
    async fn finish(self, accounts: &dyn AccountDirectory) -> Result<ValidPolicy, PolicyError> {
        if self.access == Access::Password && self.password.is_none() {
            return Err(PolicyError::PasswordRequired);
        }
        if let Some(p) = &self.password {
            rules::page_password(p)?;
        }
        let allow = match self.allow {
            Allow::Resolved(allow) => allow,
            Allow::Unchecked(raw) => rules::resolve_allow(accounts, &raw).await?,
        };
        Ok(ValidPolicy {
            policy: Policy {
                access: self.access,
                expires_at: self.expires_at,
                max_views: self.max_views,
                allow,
            },
            alias: self.alias,
            password: self.password,
        })
    }
}

/// The policy fields of an update: `None` keeps a field; `Some(None)` clears a nullable one.
#[derive(Debug, Clone, Default)]
pub struct PolicyPatch {
    pub access: Option<String>,
    pub expires_at: Option<Option<String>>,
    pub max_views: Option<Option<i128>>,
    pub alias: Option<Option<String>>,
    pub allow: Option<Vec<String>>,
    /// `null` or `""` clears the password; a new one is checked by [`rules::page_password`].
    pub password: Option<Option<String>>,
}

/// An update's fields checked up to its alias.
#[derive(Debug)]
struct PatchToAlias {
    access: Option<Access>,
    expires_at: Option<Option<OffsetDateTime>>,
    max_views: Option<Option<u64>>,
    alias: Option<Option<String>>,
    allow: Option<Vec<String>>,
    password: Option<Option<String>>,
}

impl PolicyPatch {
    /// Applies the patch to `link` (its policy, alias and password), or on a refusal nothing
    /// at all. The fields are checked in this order: access, expiresAt, maxViews, alias,
    /// allow, password, then that `password` access is left with a password. A cleared
    /// password is gone from `link`; a new one is answered, to be hashed into its
    /// `password_hash`.
    ///
    /// # Errors
    /// [`PolicyError::Invalid`] naming the first field refused, or
    /// [`PolicyError::PasswordRequired`], in that order; [`PolicyError::Infra`] when the
    /// allow list's handles cannot be looked up.
    pub async fn apply(
        self,
        link: &mut Link,
        now: OffsetDateTime,
        accounts: &dyn AccountDirectory,
    ) -> Result<Option<String>, PolicyError> {
        let (password, ()) = self
            .apply_with(
                link,
                now,
                accounts,
                std::future::ready(Ok::<(), PolicyError>(())),
            )
            .await?;
        Ok(password)
    }

    /// [`PolicyPatch::apply`], with the service's own checks `own` run right after the alias
    /// (and not at all when a field before it is refused); answers what `own` made. `link`
    /// is changed only when `own` succeeds too.
    ///
    /// # Errors
    /// Those of [`PolicyPatch::apply`], and `own`'s, each at its place.
    pub async fn apply_with<T, E: From<PolicyError>>(
        self,
        link: &mut Link,
        now: OffsetDateTime,
        accounts: &dyn AccountDirectory,
        own: impl Future<Output = Result<T, E>>,
    ) -> Result<(Option<String>, T), E> {
        let checked = self.check_to_alias(now)?;
        let own = own.await?;
        Ok((checked.finish(link, accounts).await?, own))
    }

    fn check_to_alias(self, now: OffsetDateTime) -> Result<PatchToAlias, PolicyError> {
        Ok(PatchToAlias {
            access: self.access.as_deref().map(rules::access).transpose()?,
            expires_at: self
                .expires_at
                .map(|e| e.as_deref().map(|t| rules::expires_at(t, now)).transpose())
                .transpose()?,
            max_views: self
                .max_views
                .map(|m| m.map(rules::max_views).transpose())
                .transpose()?,
            alias: self
                .alias
                .map(|a| a.as_deref().map(rules::alias).transpose())
                .transpose()?,
            allow: self.allow,
            password: self.password,
        })
    }
}

impl PatchToAlias {
    async fn finish(
        self,
        link: &mut Link,
        accounts: &dyn AccountDirectory,
    ) -> Result<Option<String>, PolicyError> {
        let allow = match &self.allow {
            Some(raw) => Some(rules::resolve_allow(accounts, raw).await?),
            None => None,
        };
        let password = PasswordChange::of_patch(self.password)?;
        let access = self.access.unwrap_or(link.policy.access);
        if access == Access::Password && !password.leaves_password(link.has_password()) {
            return Err(PolicyError::PasswordRequired);
        }
        // Every field passed: only now is the link touched.
        link.policy.access = access;
        if let Some(e) = self.expires_at {
            link.policy.expires_at = e;
        }
        if let Some(m) = self.max_views {
            link.policy.max_views = m;
        }
        if let Some(a) = self.alias {
            link.alias = a;
        }
        if let Some(a) = allow {
            link.policy.allow = a;
        }
        Ok(match password {
            PasswordChange::Keep => None,
            PasswordChange::Clear => {
                link.password_hash = None;
                None
            }
            PasswordChange::Set(p) => Some(p),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicBool, Ordering};

    use async_trait::async_trait;
    use quire_kernel::{AccountId, Email, Handle, PageId, ProjectId};
    use time::macros::datetime;

    use super::*;

    const NOW: OffsetDateTime = datetime!(2030-01-01 00:00 UTC);

    /// One account, `alice`; `down` fails every lookup.
    #[derive(Debug)]
    struct Directory {
        alice: AccountId,
        down: bool,
    }

    impl Directory {
        fn up() -> Self {
            Self {
                alice: AccountId::new(),
                down: false,
            }
        }

        fn down() -> Self {
            Self {
                down: true,
                ..Self::up()
            }
        }
    }

    #[async_trait]
    impl AccountDirectory for Directory {
        async fn account_by_handle(
            &self,
            handle: &Handle,
        ) -> Result<Option<AccountId>, InfraError> {
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

        async fn handle_and_email(
            &self,
            _: AccountId,
        ) -> Result<Option<(Handle, Email)>, InfraError> {
            Ok(None)
        }
    }

    fn refused(message: &str) -> PolicyError {
        PolicyError::Invalid(Invalid(message.into()))
    }

    const BAD_ACCESS: &str = "access must be private, password, allow_list or public";
    const BAD_ALIAS: &str = "alias must be 3-64 of A-Z, a-z, 0-9, _ and -";
    const SHORT_PASSWORD: &str = "password must be at least 8 characters";
    const NO_BOB: &str = "allow entry \"bob\": no account has that handle";

    async fn validate(input: PolicyInput, order: AllowOrder) -> Result<ValidPolicy, PolicyError> {
        input
            .validate(NOW, &Directory::up(), Access::Private, order)
            .await
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

    #[derive(Debug, PartialEq, Eq)]
    enum Site {
        Policy(PolicyError),
        Own,
    }

    impl From<PolicyError> for Site {
        fn from(e: PolicyError) -> Self {
            Site::Policy(e)
        }
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

    fn link(access: Access, password_hash: Option<&str>) -> Link {
        Link {
            alias: Some("old-alias".into()),
            password_hash: password_hash.map(str::to_owned),
            ..Link::of_page(
                PageId::new(),
                AccountId::new(),
                ProjectId::new(),
                "abcdefghij".into(),
                Policy {
                    access,
                    expires_at: Some(datetime!(2030-06-01 00:00 UTC)),
                    max_views: Some(10),
                    allow: vec![AllowEntry::Email(Email::parse("x@y.example").unwrap())],
                },
                NOW,
            )
        }
    }

    #[tokio::test]
    async fn an_empty_patch_changes_nothing() {
        let before = link(Access::Password, Some("$hash"));
        let mut after = before.clone();
        let password = PolicyPatch::default()
            .apply(&mut after, NOW, &Directory::up())
            .await
            .unwrap();
        assert_eq!((password, after), (None, before));
    }

    #[tokio::test]
    async fn a_patch_sets_and_clears_each_field() {
        let directory = Directory::up();
        let mut l = link(Access::Public, Some("$hash"));
        let password = PolicyPatch {
            access: Some("allow_list".into()),
            expires_at: Some(Some("2031-01-01T00:00:00Z".into())),
            max_views: Some(Some(3)),
            alias: Some(Some("new-alias".into())),
            allow: Some(vec!["alice".into()]),
            password: Some(Some("correct horse".into())),
        }
        .apply(&mut l, NOW, &directory)
        .await
        .unwrap();
        assert_eq!(password.as_deref(), Some("correct horse"));
        assert_eq!(
            l.policy,
            Policy {
                access: Access::AllowList,
                expires_at: Some(datetime!(2031-01-01 00:00 UTC)),
                max_views: Some(3),
                allow: vec![AllowEntry::Account(directory.alice)],
            }
        );
        assert_eq!(l.alias.as_deref(), Some("new-alias"));
        // The new password is the caller's to hash: the old hash stays until then.
        assert_eq!(l.password_hash.as_deref(), Some("$hash"));

        let password = PolicyPatch {
            expires_at: Some(None),
            max_views: Some(None),
            alias: Some(None),
            allow: Some(vec![]),
            password: Some(None),
            ..PolicyPatch::default()
        }
        .apply(&mut l, NOW, &directory)
        .await
        .unwrap();
        assert_eq!(password, None);
        assert_eq!(
            (l.policy.expires_at, l.policy.max_views, &l.policy.allow),
            (None, None, &vec![])
        );
        assert_eq!((l.alias, l.password_hash), (None, None));
    }

    #[tokio::test]
    async fn an_empty_password_clears_it() {
        let mut l = link(Access::Public, Some("$hash"));
        PolicyPatch {
            password: Some(Some(String::new())),
            ..PolicyPatch::default()
        }
        .apply(&mut l, NOW, &Directory::up())
        .await
        .unwrap();
        assert_eq!(l.password_hash, None);
    }

    #[tokio::test]
    async fn password_access_keeps_a_password() {
        let directory = Directory::up();
        // Its stored password is kept.
        let mut l = link(Access::Public, Some("$hash"));
        let kept = PolicyPatch {
            access: Some("password".into()),
            ..PolicyPatch::default()
        }
        .apply(&mut l, NOW, &directory)
        .await;
        assert_eq!(kept, Ok(None));
        assert_eq!(l.policy.access, Access::Password);
        // None to keep, none sent; cleared while access stays password.
        for (access, hash, patch) in [
            (
                Access::Public,
                None,
                PolicyPatch {
                    access: Some("password".into()),
                    ..PolicyPatch::default()
                },
            ),
            (
                Access::Password,
                Some("$hash"),
                PolicyPatch {
                    password: Some(None),
                    ..PolicyPatch::default()
                },
            ),
        ] {
            let before = link(access, hash);
            let mut after = before.clone();
            let refused = patch.apply(&mut after, NOW, &directory).await;
            assert_eq!(refused, Err(PolicyError::PasswordRequired));
            assert_eq!(after, before);
        }
    }

    #[tokio::test]
    async fn a_refused_patch_changes_nothing() {
        let good = PolicyPatch {
            access: Some("public".into()),
            expires_at: Some(None),
            max_views: Some(Some(99)),
            alias: Some(Some("new-alias".into())),
            allow: Some(vec!["alice".into()]),
            password: Some(None),
        };
        let cases = [
            (
                PolicyPatch {
                    access: Some("friends".into()),
                    ..good.clone()
                },
                refused(BAD_ACCESS),
            ),
            (
                PolicyPatch {
                    expires_at: Some(Some("2020-01-01T00:00:00Z".into())),
                    ..good.clone()
                },
                refused("expiresAt must be in the future"),
            ),
            (
                PolicyPatch {
                    max_views: Some(Some(-1)),
                    ..good.clone()
                },
                refused("maxViews must be a positive integer"),
            ),
            (
                PolicyPatch {
                    alias: Some(Some("no spaces".into())),
                    ..good.clone()
                },
                refused(BAD_ALIAS),
            ),
            (
                PolicyPatch {
                    allow: Some(vec!["bob".into()]),
                    ..good.clone()
                },
                refused(NO_BOB),
            ),
            (
                PolicyPatch {
                    password: Some(Some("short".into())),
                    ..good.clone()
                },
                refused(SHORT_PASSWORD),
            ),
        ];
        for (patch, expected) in cases {
            let before = link(Access::Password, Some("$hash"));
            let mut after = before.clone();
            let result = patch.clone().apply(&mut after, NOW, &Directory::up()).await;
            assert_eq!(result, Err(expected), "{patch:?}");
            assert_eq!(after, before, "{patch:?}");
        }
        let before = link(Access::Public, None);
        let mut after = before.clone();
        let down = good.apply(&mut after, NOW, &Directory::down()).await;
        assert!(matches!(down, Err(PolicyError::Infra(_))), "{down:?}");
        assert_eq!(after, before);
    }

    #[tokio::test]
    async fn a_patch_is_checked_in_field_order_with_the_own_checks_after_the_alias() {
        let directory = Directory::up();
        let before = link(Access::Public, None);
        let all_bad = PolicyPatch {
            alias: Some(Some("a".into())),
            allow: Some(vec!["bob".into()]),
            password: Some(Some("short".into())),
            ..PolicyPatch::default()
        };
        let mut after = before.clone();
        let polled = AtomicBool::new(false);
        let first = all_bad
            .clone()
            .apply_with(&mut after, NOW, &directory, async {
                polled.store(true, Ordering::SeqCst);
                Err::<(), Site>(Site::Own)
            })
            .await;
        assert_eq!(first, Err(Site::Policy(refused(BAD_ALIAS))));
        assert!(!polled.load(Ordering::SeqCst), "own ran after a refusal");

        let own_first = PolicyPatch {
            alias: None,
            ..all_bad.clone()
        }
        .apply_with(&mut after, NOW, &directory, async {
            Err::<(), Site>(Site::Own)
        })
        .await;
        assert_eq!(own_first, Err(Site::Own));

        let allow_next = PolicyPatch {
            alias: None,
            ..all_bad
        }
        .apply(&mut after, NOW, &directory)
        .await;
        assert_eq!(allow_next, Err(refused(NO_BOB)));
        assert_eq!(after, before);

        let (password, own) = PolicyPatch {
            alias: Some(Some("new-alias".into())),
            ..PolicyPatch::default()
        }
        .apply_with(&mut after, NOW, &directory, async { Ok::<_, Site>("own") })
        .await
        .unwrap();
        assert_eq!((password, own), (None, "own"));
        assert_eq!(after.alias.as_deref(), Some("new-alias"));
    }
}
