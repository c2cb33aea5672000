//! Same-origin checks for form posts, from their `Origin` and `Referer` headers (the
//! dashboard's forms, and the pages origin's password form).

fn origin_of(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find('/') {
        Some(i) => &url[..after_scheme + i],
        None => url,
    }
}

/// Whether a post whose `Origin` and `Referer` headers are these comes from the origin of
/// `base_url`. `Origin` decides when present; `Referer` stands in for browsers that omit it.
pub fn sent_from(origin: Option<&str>, referer: Option<&str>, base_url: &str) -> bool {
    let expected = origin_of(base_url);
    if let Some(origin) = origin {
        return origin.eq_ignore_ascii_case(expected);
    }
    referer.is_some_and(|r| origin_of(r).eq_ignore_ascii_case(expected))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_compare_scheme_host_and_port() {
        assert_eq!(origin_of("https://q.example/base/"), "https://q.example");
        assert_eq!(origin_of("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
    }
}
