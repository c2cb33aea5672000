//! RFC 8707 resource indicators: which protected resource a grant, and so its tokens, are
//! for.
//!
//! Valid values are the REST API's identifier (`{base}/api`) and the agent endpoint's family:
//! the same origin with the path `/mcp` or one under it (`/mcp/readonly`), since clients send
//! the URL the person typed. A query and one trailing slash are ignored; a fragment, another
//! origin or another path is `invalid_target`.

use quire_kernel::Resource;
use url::Url;

/// The `error_description` of `invalid_target`.
pub const INVALID_TARGET: &str =
    "resource must be this server's MCP endpoint ({base}/mcp) or its API ({base}/api)";

/// The resource `raw` names at the server whose issuer (public base URL) is `issuer`, or
/// `None` when it names neither.
#[must_use]
pub fn resource_indicator(raw: &str, issuer: &str) -> Option<Resource> {
    let presented = Url::parse(raw).ok()?;
    let base = Url::parse(issuer).ok()?;
    if presented.fragment().is_some()
        || presented.origin() != base.origin()
        || !presented.username().is_empty()
        || presented.password().is_some()
    {
        return None;
    }
    let prefix = base.path().trim_end_matches('/');
    let rest = presented.path().strip_prefix(prefix)?;
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    match rest {
        "/api" => Some(Resource::Api),
        "/mcp" => Some(Resource::Mcp),
        _ if rest.starts_with("/mcp/") && !rest.ends_with('/') => Some(Resource::Mcp),
        _ => None,
    }
}

/// The stored name of a resource.
#[must_use]
pub fn resource_name(resource: Resource) -> &'static str {
    match resource {
        Resource::Api => "api",
        Resource::Mcp => "mcp",
    }
}

/// Parses a stored name.
#[must_use]
pub fn parse_resource_name(raw: &str) -> Option<Resource> {
    match raw {
        "api" => Some(Resource::Api),
        "mcp" => Some(Resource::Mcp),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "https://q.example";

    #[test]
    fn the_api_and_the_mcp_family_are_valid() {
        let at = |raw| resource_indicator(raw, BASE);
        assert_eq!(at("https://q.example/api"), Some(Resource::Api));
        assert_eq!(at("https://q.example/api/"), Some(Resource::Api));
        assert_eq!(at("https://q.example/mcp"), Some(Resource::Mcp));
        assert_eq!(at("https://q.example/mcp/"), Some(Resource::Mcp));
        assert_eq!(at("https://Q.EXAMPLE/mcp?x=1"), Some(Resource::Mcp));
        assert_eq!(
            at("https://q.example:443/mcp/readonly"),
            Some(Resource::Mcp)
        );
    }

    #[test]
    fn anything_else_is_no_resource_of_ours() {
        let at = |raw| resource_indicator(raw, BASE);
        for raw in [
            "https://q.example",
            "https://q.example/",
            "https://q.example/mcp#f",
            "https://q.example/mcp//",
            "https://q.example/mcpx",
            "https://q.example/api/page",
            "http://q.example/mcp",
            "https://q.example:8443/mcp",
            "https://other.example/mcp",
            "https://u@q.example/mcp",
            "mcp",
            "",
        ] {
            assert_eq!(at(raw), None, "{raw}");
        }
    }

    #[test]
    fn a_base_url_with_a_path_prefixes_the_resources() {
        let base = "https://q.example/quire";
        assert_eq!(
            resource_indicator("https://q.example/quire/mcp", base),
            Some(Resource::Mcp)
        );
        assert_eq!(resource_indicator("https://q.example/mcp", base), None);
    }
}
