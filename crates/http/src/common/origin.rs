//! Same-origin checks for form posts (the dashboard's, and the pages origin's password form).

use actix_web::HttpRequest;
use actix_web::http::header;

fn origin_of(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find('/') {
        Some(i) => &url[..after_scheme + i],
        None => url,
    }
}

/// Whether a form post comes from the dashboard's own origin.
pub fn same_origin(req: &HttpRequest, base_url: &str) -> bool {
    let header = |name| req.headers().get(name).and_then(|v| v.to_str().ok());
    sent_from(header(header::ORIGIN), header(header::REFERER), base_url)
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
        let req = actix_web::test::TestRequest::default()
            .insert_header((header::ORIGIN, "http://127.0.0.1:8080"))
            .to_http_request();
        assert!(same_origin(&req, "http://127.0.0.1:8080"));
        assert!(!same_origin(&req, "http://127.0.0.1:9090"));
        let referer_only = actix_web::test::TestRequest::default()
            .insert_header((
                header::REFERER,
                "http://127.0.0.1:8080/authorize-agent?code=X",
            ))
            .to_http_request();
        assert!(same_origin(&referer_only, "http://127.0.0.1:8080"));
        let lookalike = actix_web::test::TestRequest::default()
            .insert_header((header::REFERER, "http://127.0.0.1:8080.evil.example/"))
            .to_http_request();
        assert!(!same_origin(&lookalike, "http://127.0.0.1:8080"));
        let none = actix_web::test::TestRequest::default().to_http_request();
        assert!(!same_origin(&none, "http://127.0.0.1:8080"));
        let null = actix_web::test::TestRequest::default()
            .insert_header((header::ORIGIN, "null"))
            .to_http_request();
        assert!(!same_origin(&null, "http://127.0.0.1:8080"));
    }
}
