//! Where the links of recovery and sign-in mails lead: the owner's app, never this
//! service, so nothing here redirects. A request's `redirect_to` is taken when the owner
//! allows it (the origin of `auth.settings.site_url`, or an entry of `uri_allow_list`, as
//! GoTrue's `SITE_URL` and `URI_ALLOW_LIST`), else the site itself; with neither, a mail
//! holds its code alone. The link carries `token_hash` and `type` in its query, what
//! supabase-js's `verifyOtp({token_hash, type})` takes (the "token hash" links of
//! Supabase's guides).

use super::AuthSettings;

/// An address's scheme and authority, lower-cased; `None` for what is not an absolute
/// address of a plain form (no spaces, controls or backslashes, no user info).
fn origin(url: &str) -> Option<(String, String)> {
    if url.len() > 2048
        || url
            .chars()
            .any(|c| c.is_control() || c.is_whitespace() || c == '\\')
    {
        return None;
    }
    let (scheme, rest) = url.split_once("://")?;
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if !scheme_ok || authority.is_empty() || authority.contains('@') {
        return None;
    }
    Some((scheme.to_ascii_lowercase(), authority.to_ascii_lowercase()))
}

fn is_web((scheme, _): &(String, String)) -> bool {
    scheme == "http" || scheme == "https"
}

/// Whether `entry` of the allow list takes `url`: equal to it, or, ending in `*`, the
/// beginning of it, where that beginning names at least a whole host and the `/` after it
/// (so `https://app.example.com/*` never takes `https://app.example.com.evil.test/`).
fn entry_takes(entry: &str, url: &str) -> bool {
    let Some(prefix) = entry.strip_suffix('*') else {
        return entry == url;
    };
    let prefix = prefix.trim_end_matches('*');
    let whole_host = prefix
        .split_once("://")
        .is_some_and(|(_, rest)| rest.contains('/'));
    whole_host && url.starts_with(prefix)
}

/// Whether the owner allows `url` as a link's destination.
fn allowed(settings: &AuthSettings, url: &str) -> bool {
    let Some(asked) = origin(url) else {
        return false;
    };
    let site = settings.site_url.as_deref().and_then(origin);
    if is_web(&asked) && site.as_ref() == Some(&asked) {
        return true;
    }
    let without_fragment = url.split('#').next().unwrap_or_default();
    settings
        .uri_allow_list
        .iter()
        .any(|entry| entry_takes(entry.trim(), without_fragment))
}

/// Where a mail's link leads: `redirect_to` when the owner allows it, else the site; `None`
/// when neither is usable.
#[must_use]
pub(crate) fn destination(settings: &AuthSettings, redirect_to: Option<&str>) -> Option<String> {
    if let Some(asked) = redirect_to.filter(|u| allowed(settings, u)) {
        return Some(asked.to_owned());
    }
    settings
        .site_url
        .as_deref()
        .map(str::trim)
        .filter(|site| origin(site).as_ref().is_some_and(is_web))
        .map(str::to_owned)
}

/// `destination` with `token_hash` and `type` added to its query (before any fragment).
/// `token` is base64url and `kind` a word: nothing to escape.
#[must_use]
pub(crate) fn with_token(destination: &str, token: &str, kind: &str) -> String {
    let (base, fragment) = match destination.split_once('#') {
        Some((base, fragment)) => (base, Some(fragment)),
        None => (destination, None),
    };
    let joiner = if base.contains('?') { '&' } else { '?' };
    let mut link = format!("{base}{joiner}token_hash={token}&type={kind}");
    if let Some(fragment) = fragment {
        link.push('#');
        link.push_str(fragment);
    }
    link
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(site: Option<&str>, list: &[&str]) -> AuthSettings {
        AuthSettings {
            site_url: site.map(str::to_owned),
            uri_allow_list: list.iter().map(|s| (*s).to_owned()).collect(),
            ..AuthSettings::default()
        }
    }

    #[test]
    fn a_redirect_is_taken_only_where_the_owner_allows_it() {
        let s = settings(
            Some("https://app.example.com"),
            &["https://other.example.com/auth/*", "myapp://callback"],
        );
        for (asked, goes) in [
            (
                Some("https://app.example.com/reset"),
                "https://app.example.com/reset",
            ),
            (
                Some("https://APP.example.com/x?y=1"),
                "https://APP.example.com/x?y=1",
            ),
            (
                Some("https://other.example.com/auth/done"),
                "https://other.example.com/auth/done",
            ),
            (Some("myapp://callback"), "myapp://callback"),
            // Refused: the site is the destination.
            (
                Some("http://app.example.com/reset"),
                "https://app.example.com",
            ),
            (
                Some("https://app.example.com:8443/"),
                "https://app.example.com",
            ),
            (
                Some("https://app.example.com.evil.test/"),
                "https://app.example.com",
            ),
            (
                Some("https://other.example.com/authx"),
                "https://app.example.com",
            ),
            (
                Some("https://evil.test@app.example.com/"),
                "https://app.example.com",
            ),
            (
                Some("https://app.example.com/a b"),
                "https://app.example.com",
            ),
            (Some("javascript:alert(1)"), "https://app.example.com"),
            (Some("myapp://callback/other"), "https://app.example.com"),
            (None, "https://app.example.com"),
        ] {
            assert_eq!(destination(&s, asked).as_deref(), Some(goes), "{asked:?}");
        }
        let bare = settings(None, &["https://*"]);
        assert_eq!(destination(&bare, Some("https://anything.test/")), None);
        assert_eq!(destination(&settings(Some("not a url"), &[]), None), None);
    }

    #[test]
    fn the_token_goes_in_the_query_before_any_fragment() {
        assert_eq!(
            with_token("https://a.test/reset", "tok", "recovery"),
            "https://a.test/reset?token_hash=tok&type=recovery"
        );
        assert_eq!(
            with_token("https://a.test/r?next=/x#top", "tok", "email"),
            "https://a.test/r?next=/x&token_hash=tok&type=email#top"
        );
    }
}
