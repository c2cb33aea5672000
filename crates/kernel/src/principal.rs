//! Who is calling: the result of authenticating a credential.

use std::collections::BTreeSet;

use crate::ids::{AccountId, KeyId, ProjectId};
use crate::scopes::Scopes;

/// The services an app key may be scoped to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum App {
    Page,
    Serve,
    Link,
    Base,
}

impl App {
    pub const ALL: [App; 4] = [App::Page, App::Serve, App::Link, App::Base];

    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            App::Page => "page",
            App::Serve => "serve",
            App::Link => "link",
            App::Base => "base",
        }
    }

    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == s)
    }
}

/// A non-empty, duplicate-free set of apps, in canonical order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Apps(BTreeSet<App>);

impl Apps {
    /// `None` when `apps` is empty.
    #[must_use]
    pub fn new(apps: impl IntoIterator<Item = App>) -> Option<Self> {
        let set: BTreeSet<App> = apps.into_iter().collect();
        (!set.is_empty()).then_some(Self(set))
    }

    #[must_use]
    pub fn contains(&self, app: App) -> bool {
        self.0.contains(&app)
    }

    pub fn iter(&self) -> impl Iterator<Item = App> + '_ {
        self.0.iter().copied()
    }

    /// Comma-separated, as stored.
    #[must_use]
    pub fn to_csv(&self) -> String {
        self.iter().map(App::as_str).collect::<Vec<_>>().join(",")
    }

    /// Parses the stored comma-separated form.
    #[must_use]
    pub fn from_csv(s: &str) -> Option<Self> {
        let apps: Option<Vec<App>> = s.split(',').map(App::parse).collect();
        Self::new(apps?)
    }
}

/// The protected resource a credential is presented to. An OAuth access token is minted
/// for one of them (its `aud`) and verified only by it; API keys are good at both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Resource {
    /// The REST API (`{base}/api/...`): audience `{base}/api`.
    Api,
    /// The hosted agent endpoint (`{base}/mcp`): audience `{base}/mcp`.
    Mcp,
}

/// A key's tier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tier {
    /// Full account scope.
    Master,
    /// Scoped to some apps and one home project.
    App(Apps),
}

impl Tier {
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Tier::Master => "master",
            Tier::App(_) => "app",
        }
    }
}

/// How the caller proved who it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrincipalKind {
    /// An API key (`qk_…`).
    Key { key_id: KeyId, tier: Tier },
    /// A bearer token issued to an OAuth client, with the scopes the account holder
    /// approved (an app may be read-only: `page:read`). Such a principal may list projects
    /// but can never create or revoke grants, nor mint keys.
    OAuthClient { client_id: String, scopes: Scopes },
    /// The account holder in the dashboard, with a full session (second factor given when
    /// enrolled): a master key's scope, without a key.
    Dashboard,
}

/// An authenticated caller of an activated account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub account_id: AccountId,
    pub kind: PrincipalKind,
    /// The project a request addresses when it names none: an app key's own project, and
    /// for a master key (or a bearer token) the account's default project.
    pub home_project_id: ProjectId,
    pub is_platform_admin: bool,
}

impl Principal {
    /// A master key: full account scope.
    #[must_use]
    pub fn is_master(&self) -> bool {
        matches!(
            self.kind,
            PrincipalKind::Key {
                tier: Tier::Master,
                ..
            } | PrincipalKind::Dashboard
        )
    }

    /// The key that authenticated the call, if it was a key.
    #[must_use]
    pub fn key_id(&self) -> Option<KeyId> {
        match self.kind {
            PrincipalKind::Key { key_id, .. } => Some(key_id),
            PrincipalKind::OAuthClient { .. } | PrincipalKind::Dashboard => None,
        }
    }

    /// Whether the credential may use `app` (master keys always may; a bearer token if its
    /// scopes name it).
    #[must_use]
    pub fn has_app(&self, app: App) -> bool {
        match &self.kind {
            PrincipalKind::Key {
                tier: Tier::Master, ..
            }
            | PrincipalKind::Dashboard => true,
            PrincipalKind::Key {
                tier: Tier::App(apps),
                ..
            } => apps.contains(app),
            PrincipalKind::OAuthClient { scopes, .. } => scopes.contains(app),
        }
    }

    /// Whether the credential may change things in `app`, not only read them. Only a
    /// bearer token granted the read-only `page:read` scope can read without writing.
    #[must_use]
    pub fn can_write(&self, app: App) -> bool {
        match &self.kind {
            PrincipalKind::OAuthClient { scopes, .. } => scopes.can_write(app),
            PrincipalKind::Key { .. } | PrincipalKind::Dashboard => self.has_app(app),
        }
    }

    #[must_use]
    pub fn is_oauth_client(&self) -> bool {
        matches!(self.kind, PrincipalKind::OAuthClient { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn principal(kind: PrincipalKind) -> Principal {
        Principal {
            account_id: AccountId::new(),
            kind,
            home_project_id: ProjectId::new(),
            is_platform_admin: false,
        }
    }

    #[test]
    fn master_keys_have_every_app_and_app_keys_only_theirs() {
        let master = principal(PrincipalKind::Key {
            key_id: KeyId::new(),
            tier: Tier::Master,
        });
        assert!(master.is_master());
        assert!(App::ALL.iter().all(|a| master.has_app(*a)));

        let apps = Apps::new([App::Page, App::Link]).unwrap();
        let app = principal(PrincipalKind::Key {
            key_id: KeyId::new(),
            tier: Tier::App(apps),
        });
        assert!(!app.is_master());
        assert!(app.has_app(App::Page) && app.has_app(App::Link));
        assert!(!app.has_app(App::Serve) && !app.has_app(App::Base));

        let bearer = principal(PrincipalKind::OAuthClient {
            client_id: "c1".into(),
            scopes: Apps::new([App::Page]).unwrap().into(),
        });
        assert!(bearer.can_write(App::Page) && !bearer.can_write(App::Link));
        let read_only = principal(PrincipalKind::OAuthClient {
            client_id: "c1".into(),
            scopes: Scopes::from_words(["page:read"]).unwrap(),
        });
        assert!(read_only.has_app(App::Page) && !read_only.can_write(App::Page));
        assert!(master.can_write(App::Page));
        assert!(bearer.is_oauth_client() && !bearer.is_master() && bearer.key_id().is_none());
        let dashboard = principal(PrincipalKind::Dashboard);
        assert!(dashboard.can_write(App::Base));
        assert!(dashboard.is_master() && dashboard.has_app(App::Base));
        assert!(!dashboard.is_oauth_client() && dashboard.key_id().is_none());
        assert!(bearer.has_app(App::Page) && !bearer.has_app(App::Link));
    }

    #[test]
    fn apps_round_trip_through_csv_and_refuse_empty_or_unknown() {
        let apps = Apps::new([App::Base, App::Page, App::Page]).unwrap();
        assert_eq!(apps.to_csv(), "page,base");
        assert_eq!(Apps::from_csv("page,base"), Some(apps));
        assert_eq!(Apps::new([]), None);
        assert_eq!(Apps::from_csv("page,nope"), None);
        assert_eq!(Apps::from_csv(""), None);
    }
}
