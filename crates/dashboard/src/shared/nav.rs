//! The header of a signed-in page: who is signed in, whether the Admin section is theirs,
//! and which section the page belongs to (marked `aria-current="page"` in the navigation).
//!
//! A template's `signed_in_as` is a [`Who`], or a bare handle on the pages that belong to
//! no section; `base.html` asks either through [`Signed`]. A list page's project picker
//! offers [`project_slugs`].

use std::fmt;

use quire_accounts::Account;
use quire_edge::{ApiError, AppState};
use quire_kernel::Principal;

/// The slugs of the projects `principal` may list, for a list page's project picker.
///
/// # Errors
/// The project service's refusal.
pub(crate) async fn project_slugs(
    state: &AppState,
    principal: &Principal,
) -> Result<Vec<String>, ApiError> {
    Ok(state
        .projects
        .list(principal)
        .await
        .map_err(ApiError::from)?
        .into_iter()
        .map(|p| p.slug.as_str().to_owned())
        .collect())
}

/// A navigation section, as `base.html` names it.
pub(crate) mod section {
    pub(crate) const PAGES: &str = "pages";
    pub(crate) const LINKS: &str = "links";
    pub(crate) const FILES: &str = "files";
    pub(crate) const DATABASES: &str = "databases";
    pub(crate) const KEYS: &str = "keys";
    pub(crate) const PROJECTS: &str = "projects";
    pub(crate) const SECURITY: &str = "security";
    pub(crate) const AGENT: &str = "agent";
    pub(crate) const ADMIN: &str = "admin";
}

/// The signed-in person as the header shows them; displayed, their handle.
#[derive(Debug)]
pub(crate) struct Who {
    handle: String,
    admin: bool,
    section: &'static str,
}

impl Who {
    /// `account`, on a page of `section`.
    pub(crate) fn of(account: &Account, section: &'static str) -> Option<Who> {
        Some(Who {
            handle: account.handle.as_str().to_owned(),
            admin: account.is_platform_admin,
            section,
        })
    }

    /// The holder of `principal`, known here by `handle`, on a page of `section`.
    pub(crate) fn acting(
        principal: &Principal,
        handle: &str,
        section: &'static str,
    ) -> Option<Who> {
        Some(Who {
            handle: handle.to_owned(),
            admin: principal.is_platform_admin,
            section,
        })
    }
}

impl Who {
    /// The platform admin, known here by `handle`, on one of the admin's pages.
    pub(crate) fn platform_admin(handle: &str) -> Option<Who> {
        Some(Who {
            handle: handle.to_owned(),
            admin: true,
            section: section::ADMIN,
        })
    }
}

impl fmt::Display for Who {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.handle)
    }
}

/// What the header needs of whoever is signed in.
pub(crate) trait Signed {
    fn admin(&self) -> bool;
    fn section(&self) -> &str;
}

impl Signed for Who {
    fn admin(&self) -> bool {
        self.admin
    }
    fn section(&self) -> &str {
        self.section
    }
}

/// A bare handle: no Admin link (the pages that carry one are not the admin's tools), no
/// current section.
impl Signed for String {
    fn admin(&self) -> bool {
        false
    }
    fn section(&self) -> &str {
        ""
    }
}

/// Askama hands the functions below a reference to the binding, itself a reference.
impl<T: Signed + ?Sized> Signed for &T {
    fn admin(&self) -> bool {
        (**self).admin()
    }
    fn section(&self) -> &str {
        (**self).section()
    }
}

/// Whether the Admin section shows in the navigation.
pub(crate) fn admin(who: &impl Signed) -> bool {
    who.admin()
}

/// Whether the page belongs to `section` (its link carries `aria-current="page"`).
pub(crate) fn at(who: &impl Signed, section: &str) -> bool {
    who.section() == section
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_handle_has_no_section_and_no_admin() {
        let handle = String::from("ann");
        assert!(!admin(&handle));
        assert!(!at(&handle, section::PAGES));
        let who = Who {
            handle: "root".into(),
            admin: true,
            section: section::KEYS,
        };
        assert!(admin(&who) && at(&who, section::KEYS) && !at(&who, section::PAGES));
        assert_eq!(who.to_string(), "root");
    }
}
