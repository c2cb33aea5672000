//! The dashboard's test client: [`Browser`], which keeps cookies, follows no redirects and
//! posts with the dashboard's `Origin`, and the readers of what it gets back ([`location`],
//! [`element`]).

use std::collections::HashMap;

use serde_json::Value;

use super::PASSWORD;
use crate::harness::{Reply, Server};

/// A client that keeps cookies, follows no redirects and sends the dashboard's `Origin`
/// on posts (as a browser does for a same-origin form).
pub(crate) struct Browser<'a> {
    srv: &'a Server,
    pub(super) http: reqwest::Client,
    pub(super) cookies: HashMap<String, String>,
    pub(crate) origin: Option<String>,
}

impl<'a> Browser<'a> {
    pub(crate) fn new(srv: &'a Server) -> Self {
        Self::with_client(srv, crate::harness::client())
    }

    /// A browser whose requests leave from `address` (any 127.0.0.x here).
    pub(crate) fn from_address(srv: &'a Server, address: &str) -> Self {
        Self::with_client(
            srv,
            crate::harness::client().local_address(address.parse::<std::net::IpAddr>().ok()),
        )
    }

    /// The same browser (its cookies), its requests now leaving from `address`.
    pub(crate) fn at_address(self, address: &str) -> Self {
        Self {
            cookies: self.cookies,
            origin: self.origin,
            ..Self::from_address(self.srv, address)
        }
    }

    fn with_client(srv: &'a Server, client: reqwest::ClientBuilder) -> Self {
        Self {
            srv,
            http: client
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            cookies: HashMap::new(),
            origin: Some(srv.base.clone()),
        }
    }

    pub(super) async fn send(&mut self, req: reqwest::RequestBuilder) -> Reply {
        let jar: Vec<String> = self
            .cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let req = if jar.is_empty() {
            req
        } else {
            req.header("cookie", jar.join("; "))
        };
        let resp = req.send().await.unwrap();
        for c in resp.headers().get_all("set-cookie") {
            let c = c.to_str().unwrap();
            let (pair, _) = c.split_once(';').unwrap_or((c, ""));
            let (name, value) = pair.split_once('=').unwrap();
            if value.is_empty() || c.contains("Max-Age=0") {
                self.cookies.remove(name);
            } else {
                self.cookies.insert(name.to_owned(), value.to_owned());
            }
        }
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp.text().await.unwrap();
        Reply {
            status,
            body: serde_json::from_str(&text).unwrap_or(Value::Null),
            text,
            headers,
        }
    }

    pub(crate) async fn get(&mut self, path: &str) -> Reply {
        let req = self.http.get(format!("{}{path}", self.srv.base));
        self.send(req).await
    }

    /// A `GET` of an absolute URL (the pages origin too); one cookie jar for both origins.
    pub(crate) async fn get_url(&mut self, url: &str) -> Reply {
        let req = self.http.get(url);
        self.send(req).await
    }

    /// A top-level navigation to an absolute URL, with the Fetch Metadata a browser sends.
    pub(crate) async fn navigate(&mut self, url: &str) -> Reply {
        self.get_url_with(
            url,
            &[
                ("sec-fetch-dest", "document"),
                ("sec-fetch-mode", "navigate"),
            ],
        )
        .await
    }

    pub(crate) async fn get_url_with(&mut self, url: &str, headers: &[(&str, &str)]) -> Reply {
        let mut req = self.http.get(url);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        self.send(req).await
    }

    pub(crate) async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Reply {
        let mut req = self
            .http
            .post(format!("{}{path}", self.srv.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(serde_urlencoded::to_string(form).unwrap());
        if let Some(origin) = &self.origin {
            req = req.header("origin", origin);
        }
        self.send(req).await
    }

    /// A `PUT` with `body` as the raw request body (the Files page's upload script), with
    /// the dashboard's `Origin` as a browser's script sends it.
    pub(crate) async fn put(
        &mut self,
        path: &str,
        content_type: Option<&str>,
        body: reqwest::Body,
    ) -> Reply {
        let mut req = self.http.put(format!("{}{path}", self.srv.base)).body(body);
        if let Some(t) = content_type {
            req = req.header("content-type", t);
        }
        if let Some(origin) = &self.origin {
            req = req.header("origin", origin);
        }
        self.send(req).await
    }

    pub(crate) async fn sign_in(&mut self, login: &str) -> Reply {
        self.post(
            "/login",
            &[
                ("login", login),
                ("password", PASSWORD),
                ("next", "/authorize-agent"),
            ],
        )
        .await
    }
}

pub(crate) fn location(r: &Reply) -> &str {
    assert_eq!(r.status, 303, "{}", r.text);
    r.headers["location"].to_str().unwrap()
}

/// The text of the element with this id (`<… id="x">text<`).
pub(crate) fn element(html: &str, id: &str) -> Option<String> {
    let start = html.find(&format!("id=\"{id}\""))?;
    let open = html[start..].find('>')? + start + 1;
    let close = html[open..].find('<')? + open;
    Some(html[open..close].trim().to_owned())
}
