//! A request's credentials, found where Supabase's Kong finds them: the `apikey` (header,
//! or query parameter, which is then taken out of the query) and the bearer token. What
//! they allow is the domain's to decide ([`quire_databases::DatabaseService::acting`]);
//! who a Quire key among them is, the keys service's ([`StateKeys`]).

use std::borrow::Cow;

use actix_web::HttpRequest;
use actix_web::http::header;
use async_trait::async_trait;
use quire_databases::QuireKeys;
use quire_edge::AppState;
use quire_kernel::Principal;

/// The request's `apikey`: the header's (an unreadable one is none, the query is not read
/// then), else the query's.
pub fn apikey(req: &HttpRequest) -> Option<String> {
    if let Some(value) = req.headers().get("apikey") {
        return value.to_str().ok().map(str::to_owned);
    }
    // Kong's key-auth also reads the key from the query string.
    query_params(req.query_string())
        .find_map(|(name, value)| (name == "apikey").then(|| value.into_owned()))
}

/// The query string's parameters split where the REST grammar splits them (`&` and `;`),
/// each decoded: what the grammar would read as `apikey` is what authenticates, and what
/// [`without_apikey`] takes out.
fn query_params(query: &str) -> impl Iterator<Item = (Cow<'_, str>, Cow<'_, str>)> {
    query
        .split(['&', ';'])
        .filter_map(|part| url::form_urlencoded::parse(part.as_bytes()).next())
}

fn names_apikey(part: &str) -> bool {
    url::form_urlencoded::parse(part.as_bytes())
        .next()
        .is_some_and(|(name, _)| name == "apikey")
}

/// `query` without its `apikey` parameters, as Kong's key-auth hands a request on
/// (`hide_credentials`): the REST grammar never reads the key as a filter or a function's
/// argument, so no answer can quote it.
pub fn without_apikey(query: &str) -> Cow<'_, str> {
    if !query.split(['&', ';']).any(names_apikey) {
        return Cow::Borrowed(query);
    }
    let kept: Vec<&str> = query
        .split(['&', ';'])
        .filter(|part| !names_apikey(part))
        .collect();
    Cow::Owned(kept.join("&"))
}

/// The bearer token of `req`, if any.
pub fn bearer(req: &HttpRequest) -> Option<String> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim().to_owned())
}

/// Who a Quire key is, as the keys service of the gateway's state says.
#[derive(Debug)]
pub struct StateKeys<'a>(pub &'a AppState);

#[async_trait]
impl QuireKeys for StateKeys<'_> {
    async fn principal(&self, key: &str) -> Option<Principal> {
        self.0
            .keys
            .authenticate(Some(&format!("Bearer {key}")))
            .await
            .ok()
    }
}

#[cfg(test)]
mod tests {
    use super::without_apikey;

    #[test]
    fn the_key_is_taken_out_of_the_query_wherever_it_stands() {
        for (query, kept) in [
            ("id=eq.3", "id=eq.3"),
            ("id=eq.3&apikey=k", "id=eq.3"),
            ("apikey=k&id=eq.3&select=id", "id=eq.3&select=id"),
            ("id=eq.3;apikey=k", "id=eq.3"),
            ("api%6Bey=k&id=eq.3", "id=eq.3"),
            ("apikey=k&apikey=l", ""),
            ("apikey", ""),
            ("apikeys=eq.1", "apikeys=eq.1"),
            ("", ""),
        ] {
            assert_eq!(without_apikey(query), kept, "{query}");
        }
    }
}
