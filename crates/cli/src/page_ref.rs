//! Naming a page on the command line: its id, its slug, its public id or its short-link code
//! (or the short link itself). Anything but an id is looked up in the caller's page lists:
//! every project of a master key, the home project of an app key.

use reqwest::Method;
use serde_json::Value;

use crate::api::{self, Api, Failure};
use crate::{PAGES, PLATFORM};

/// The id of the page `name` designates, asking the server only when `name` is not an id.
pub(crate) async fn resolve(api: &Api, name: &str) -> Result<String, Failure> {
    if is_uuid(name) {
        return Ok(name.to_owned());
    }
    let wanted = last_segment(name);
    let mut found: Vec<Value> = Vec::new();
    for project in projects(api).await? {
        // Archived pages are listed apart, and `restore` names one of them.
        for status in ["active", "archived"] {
            let mut query = vec![("status", status)];
            if let Some(p) = &project {
                query.push(("project", p.as_str()));
            }
            let resp = api
                .request(Method::GET, PAGES)?
                .query(&query)
                .send()
                .await?;
            let list = api::read(resp).await?;
            let pages = list["pages"].as_array().cloned().unwrap_or_default();
            found.extend(pages.into_iter().filter(|p| names(p, wanted)));
        }
    }
    match found.as_slice() {
        [] => Err(Failure::local(format!(
            "no page named {name}: give its id, slug or short-link code (`quire pages list`)"
        ))),
        [one] => Ok(one["id"].as_str().unwrap_or_default().to_owned()),
        many => {
            let ids: Vec<&str> = many.iter().filter_map(|p| p["id"].as_str()).collect();
            Err(Failure::local(format!(
                "{name} names {} pages ({}): give the id",
                many.len(),
                ids.join(", ")
            )))
        }
    }
}

/// The project slugs to search; `None` is the key's home project (an app key may not list
/// projects).
async fn projects(api: &Api) -> Result<Vec<Option<String>>, Failure> {
    match api.get(&format!("{PLATFORM}/projects")).await {
        Ok(list) => Ok(list["projects"]
            .as_array()
            .map(|ps| {
                ps.iter()
                    .filter_map(|p| p["slug"].as_str().map(|s| Some(s.to_owned())))
                    .collect()
            })
            .unwrap_or_default()),
        Err(Failure::Api { status: 403, .. }) => Ok(vec![None]),
        Err(e) => Err(e),
    }
}

fn names(page: &Value, wanted: &str) -> bool {
    let short_code = page["shortUrl"].as_str().map(last_segment);
    page["slug"].as_str() == Some(wanted)
        || page["public_id"].as_str() == Some(wanted)
        || short_code == Some(wanted)
}

/// A link's last path segment (`https://host/s/abc` → `abc`); a bare code stays as it is.
fn last_segment(name: &str) -> &str {
    let path = name.split(['?', '#']).next().unwrap_or(name);
    let path = path.trim_end_matches('/');
    path.rsplit('/').next().unwrap_or(path)
}

pub(crate) fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_names_its_last_segment() {
        assert_eq!(last_segment("http://127.0.0.1:8080/s/Ab3x"), "Ab3x");
        assert_eq!(last_segment("http://h/s/Ab3x/?q=1"), "Ab3x");
        assert_eq!(last_segment("my-site"), "my-site");
    }

    #[test]
    fn only_the_uuid_shape_is_an_id() {
        assert!(is_uuid("0190f5c2-7d1e-7a3b-9c4d-5e6f7a8b9c0d"));
        assert!(!is_uuid("my-site"));
        assert!(!is_uuid("0190f5c2x7d1e-7a3b-9c4d-5e6f7a8b9c0d"));
    }
}
