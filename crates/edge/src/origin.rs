//! Same-origin checks for form posts (the dashboard's, and the pages origin's password form).

use actix_web::HttpRequest;
use actix_web::http::header;
pub use quire_wire::origin::sent_from;

/// Whether a form post comes from the dashboard's own origin.
pub fn same_origin(req: &HttpRequest, base_url: &str) -> bool {
    let header = |name| req.headers().get(name).and_then(|v| v.to_str().ok());
    sent_from(header(header::ORIGIN), header(header::REFERER), base_url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_post_is_same_origin_by_its_origin_or_else_its_referer() {
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
