//! Where published pages live.
//!
//! Each owner's pages are served on an origin of their own (`https://{handle}.pages.example.net`),
//! so a script in one owner's page runs in another origin than every other owner's pages and
//! the browser keeps them apart: no reads, no frames, no cookies in common. Handles hold `_`,
//! which host names cannot; handles never hold `-`, so `_` is written `-` in the host and the
//! mapping stays one-to-one. Short links live on the bare pages domain
//! (`https://pages.example.net/s/{code}`), which no handle can take.
//!
//! A pages URL without `{handle}` puts every page under one origin (`/{handle}/{slug}/`): only
//! for a single-tenant server, where there is no other owner to be isolated from.

use std::borrow::Cow;

use quire_kernel::Handle;

/// The placeholder that names the owner in `QUIRE_PAGES_URL`.
pub const HANDLE_PLACEHOLDER: &str = "{handle}";

/// The origins of published pages and short links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageOrigins {
    https: bool,
    layout: Layout,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Layout {
    /// `{scheme}://{label}{host_suffix}{port}`.
    PerOwner {
        /// `.pages.example.net`, lower case, with its leading dot.
        host_suffix: String,
        /// `:8081` or empty.
        port: String,
    },
    /// One origin for every page, `http://host:port` (no trailing slash).
    Shared { origin: String },
}

/// Who a request's `Host` names on a per-owner pages domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostOwner<'a> {
    /// An owner's origin; the handle, valid in form (the owner may not exist).
    Owner(Cow<'a, str>),
    /// The bare pages domain: short links.
    Links,
    /// Another host.
    Unknown,
}

impl PageOrigins {
    /// Parses `QUIRE_PAGES_URL`: `http(s)://{handle}.domain[:port]` for per-owner origins, or
    /// `http(s)://host[:port]` for one shared origin.
    ///
    /// # Errors
    /// A message naming what is wrong: another scheme, a path, query or fragment, or a
    /// `{handle}` anywhere but as the first label of the host.
    pub fn parse(url: &str) -> Result<Self, String> {
        let url = url.trim().trim_end_matches('/');
        let (https, rest) = if let Some(r) = url.strip_prefix("https://") {
            (true, r)
        } else if let Some(r) = url.strip_prefix("http://") {
            (false, r)
        } else {
            return Err("must start with http:// or https://".into());
        };
        if rest.contains(['/', '?', '#', '@', ' ']) {
            return Err("must be an origin: no path, query, fragment or user".into());
        }
        if rest.is_empty() {
            return Err("has no host".into());
        }
        let Some(after) = rest.strip_prefix(HANDLE_PLACEHOLDER) else {
            if rest.contains(['{', '}']) {
                return Err("may hold {handle} only as the first label of the host".into());
            }
            return Ok(Self {
                https,
                layout: Layout::Shared {
                    origin: url.to_ascii_lowercase(),
                },
            });
        };
        let (host, port) = match after.rsplit_once(':') {
            Some((h, p)) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
                (h, format!(":{p}"))
            }
            Some(_) => return Err("has a port that is not a number".into()),
            None => (after, String::new()),
        };
        let valid_host = host.len() > 1
            && host.starts_with('.')
            && host[1..].split('.').all(|label| {
                !label.is_empty()
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-')
            });
        if !valid_host {
            return Err(
                "needs a domain after {handle}. (e.g. https://{handle}.pages.example.net)".into(),
            );
        }
        Ok(Self {
            https,
            layout: Layout::PerOwner {
                host_suffix: host.to_ascii_lowercase(),
                port,
            },
        })
    }

    /// Each owner on an origin of their own.
    #[must_use]
    pub fn per_owner(&self) -> bool {
        matches!(self.layout, Layout::PerOwner { .. })
    }

    #[must_use]
    pub fn https(&self) -> bool {
        self.https
    }

    fn scheme(&self) -> &'static str {
        if self.https { "https" } else { "http" }
    }

    /// The origin that serves `handle`'s pages.
    #[must_use]
    pub fn owner_origin(&self, handle: &str) -> String {
        match &self.layout {
            Layout::PerOwner { host_suffix, port } => format!(
                "{}://{}{host_suffix}{port}",
                self.scheme(),
                handle.replace('_', "-")
            ),
            Layout::Shared { origin } => origin.clone(),
        }
    }

    /// The path of a page on its origin: `/{slug}/`, or `/{handle}/{slug}/` when shared.
    #[must_use]
    pub fn base_path(&self, handle: &str, slug: &str) -> String {
        match &self.layout {
            Layout::PerOwner { .. } => format!("/{slug}/"),
            Layout::Shared { .. } => format!("/{handle}/{slug}/"),
        }
    }

    /// The public URL of a page.
    #[must_use]
    pub fn page_url(&self, handle: &str, slug: &str) -> String {
        format!(
            "{}{}",
            self.owner_origin(handle),
            self.base_path(handle, slug)
        )
    }

    /// The public URL of an object: a file, so no trailing slash.
    #[must_use]
    pub fn object_url(&self, handle: &str, slug: &str) -> String {
        let page = self.page_url(handle, slug);
        page.strip_suffix('/').unwrap_or(&page).to_owned()
    }

    /// The origin of short links: the bare pages domain, or the shared origin.
    #[must_use]
    pub fn links_origin(&self) -> String {
        match &self.layout {
            Layout::PerOwner { host_suffix, port } => {
                format!("{}://{}{port}", self.scheme(), &host_suffix[1..])
            }
            Layout::Shared { origin } => origin.clone(),
        }
    }

    /// The URL of a short link.
    #[must_use]
    pub fn short_url(&self, code: &str) -> String {
        format!("{}/s/{code}", self.links_origin())
    }

    /// A CSP source matching every pages origin (`https://*.pages.example.net`).
    #[must_use]
    pub fn csp_source(&self) -> String {
        match &self.layout {
            Layout::PerOwner { host_suffix, port } => {
                format!("{}://*{host_suffix}{port}", self.scheme())
            }
            Layout::Shared { origin } => origin.clone(),
        }
    }

    /// Whose origin a request's `Host` header (name and optional port) is. Always
    /// [`HostOwner::Unknown`] for a shared origin, where the path names the owner.
    #[must_use]
    pub fn host_owner<'a>(&self, host: &'a str) -> HostOwner<'a> {
        let Layout::PerOwner { host_suffix, .. } = &self.layout else {
            return HostOwner::Unknown;
        };
        let name = match host.rsplit_once(':') {
            Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
            _ => host,
        };
        let name = name.strip_suffix('.').unwrap_or(name);
        if name.eq_ignore_ascii_case(&host_suffix[1..]) {
            return HostOwner::Links;
        }
        let Some(cut) = name.len().checked_sub(host_suffix.len()) else {
            return HostOwner::Unknown;
        };
        if cut == 0 || !name.is_char_boundary(cut) || !name[cut..].eq_ignore_ascii_case(host_suffix)
        {
            return HostOwner::Unknown;
        }
        let label = &name[..cut];
        if !label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        {
            return HostOwner::Unknown;
        }
        let handle: Cow<'a, str> = if label
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        {
            Cow::Borrowed(label)
        } else {
            Cow::Owned(label.to_ascii_lowercase().replace('-', "_"))
        };
        if Handle::is_valid(&handle) {
            HostOwner::Owner(handle)
        } else {
            HostOwner::Unknown
        }
    }
}

impl Default for PageOrigins {
    /// `http://{handle}.localhost:8081`: browsers and curl resolve `*.localhost` to loopback,
    /// and it is another site than the dashboard's `127.0.0.1`.
    fn default() -> Self {
        Self {
            https: false,
            layout: Layout::PerOwner {
                host_suffix: ".localhost".into(),
                port: ":8081".into(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_owner_urls_write_underscores_as_dashes() {
        let o = PageOrigins::parse("https://{handle}.pages.example.net/").unwrap();
        assert!(o.per_owner() && o.https());
        assert_eq!(
            o.page_url("ann_b", "site"),
            "https://ann-b.pages.example.net/site/"
        );
        assert_eq!(o.short_url("abc"), "https://pages.example.net/s/abc");
        assert_eq!(o.csp_source(), "https://*.pages.example.net");
        let local = PageOrigins::parse("http://{handle}.localhost:8081").unwrap();
        assert_eq!(local, PageOrigins::default());
        assert_eq!(local.owner_origin("ann"), "http://ann.localhost:8081");
        assert_eq!(local.links_origin(), "http://localhost:8081");
    }

    #[test]
    fn hosts_map_back_to_handles() {
        let o = PageOrigins::parse("http://{handle}.localhost:8081").unwrap();
        assert_eq!(
            o.host_owner("ann-b.localhost:8081"),
            HostOwner::Owner("ann_b".into())
        );
        assert_eq!(
            o.host_owner("ANN.Localhost"),
            HostOwner::Owner("ann".into())
        );
        assert_eq!(o.host_owner("localhost:8081"), HostOwner::Links);
        for other in [
            "ann_b.localhost",
            "a.b.localhost",
            "evil.example:8081",
            "xlocalhost",
            "ab.localhost",
            ".localhost",
            "",
        ] {
            assert_eq!(o.host_owner(other), HostOwner::Unknown, "{other}");
        }
    }

    #[test]
    fn shared_origin_keeps_handles_in_the_path() {
        let o = PageOrigins::parse("http://127.0.0.1:8081").unwrap();
        assert!(!o.per_owner());
        assert_eq!(o.page_url("ann", "site"), "http://127.0.0.1:8081/ann/site/");
        assert_eq!(o.short_url("abc"), "http://127.0.0.1:8081/s/abc");
        assert_eq!(o.host_owner("ann.127.0.0.1"), HostOwner::Unknown);
    }

    #[test]
    fn malformed_urls_are_refused() {
        for bad in [
            "ftp://{handle}.x",
            "https://{handle}",
            "https://{handle}.",
            "https://x.{handle}.net",
            "https://{handle}.x.net/pages",
            "https://{handle}.x.net:port",
            "https://",
        ] {
            assert!(PageOrigins::parse(bad).is_err(), "{bad}");
        }
    }
}
