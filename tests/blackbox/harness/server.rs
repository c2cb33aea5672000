//! The running server and the HTTP spoken to it: [`Server`] (killed when dropped) with its
//! request helpers, the [`Reply`] they answer, and [`client`], whose resolver sends
//! `*.localhost` to loopback.

use std::path::PathBuf;
use std::process::Child;

use serde_json::Value;

/// A running server; killed when dropped.
pub struct Server {
    pub child: Child,
    pub base: String,
    pub addr: String,
    /// The bare pages domain, where short links live (`http://localhost:port`); each owner's
    /// pages are on `http://{handle}.localhost:port` ([`Server::owner`]).
    pub pages: String,
    pub pages_addr: String,
    /// The metrics listener's address, when `QUIRE_METRICS_LISTEN` was set.
    pub metrics: Option<String>,
    pub log: PathBuf,
    pub http: reqwest::Client,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A response: status, body as JSON (`Null` when empty or not JSON) and headers.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub body: Value,
    pub text: String,
    pub headers: reqwest::header::HeaderMap,
}

impl Reply {
    /// Asserts an error response: status and `error` code, with a non-empty `message`.
    #[track_caller]
    pub fn assert_error(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "body: {}", self.text);
        assert_eq!(self.body["error"], code, "body: {}", self.text);
        assert!(
            self.body["message"].as_str().is_some_and(|m| !m.is_empty()),
            "no message: {}",
            self.text
        );
    }

    #[track_caller]
    pub fn assert_status(&self, status: u16) -> &Value {
        assert_eq!(self.status, status, "body: {}", self.text);
        &self.body
    }
}

/// `*.localhost` is loopback (as browsers and curl treat it); the system resolver here does
/// not know that, so test clients resolve it themselves.
#[derive(Debug)]
struct LoopbackNames;

impl reqwest::dns::Resolve for LoopbackNames {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            if host == "localhost" || host.ends_with(".localhost") {
                let addrs: reqwest::dns::Addrs = Box::new(std::iter::once(
                    std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
                ));
                return Ok(addrs);
            }
            let addrs: Vec<std::net::SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let addrs: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// A client builder for the test servers: resolves `*.localhost` to loopback.
pub fn client() -> reqwest::ClientBuilder {
    reqwest::Client::builder().dns_resolver(std::sync::Arc::new(LoopbackNames))
}

impl Server {
    /// The origin of `handle`'s pages.
    pub fn owner(&self, handle: &str) -> String {
        self.pages
            .replacen("://", &format!("://{}.", handle.replace('_', "-")), 1)
    }

    /// The URL of `/{handle}/{rest}` written the old way: `http://{handle}.localhost:port/{rest}`.
    pub fn page(&self, path: &str) -> String {
        let path = path.strip_prefix('/').expect("a path");
        let (handle, rest) = path.split_once('/').unwrap_or((path, ""));
        format!("{}/{rest}", self.owner(handle))
    }

    pub async fn call(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        body: Option<&str>,
    ) -> Reply {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        if let Some(key) = key {
            req = req.header("authorization", format!("Bearer {key}"));
        }
        if let Some(body) = body {
            req = req
                .header("content-type", "application/json")
                .body(body.to_owned());
        }
        let resp = req.send().await.expect("request");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp.text().await.expect("body");
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Reply {
            status,
            body,
            text,
            headers,
        }
    }

    pub async fn get(&self, path: &str, key: &str) -> Reply {
        self.call("GET", path, Some(key), None).await
    }

    pub async fn post(&self, path: &str, key: &str, body: Value) -> Reply {
        self.call("POST", path, Some(key), Some(&body.to_string()))
            .await
    }

    pub async fn patch(&self, path: &str, key: &str, body: Value) -> Reply {
        self.call("PATCH", path, Some(key), Some(&body.to_string()))
            .await
    }

    pub async fn delete(&self, path: &str, key: &str, body: Option<Value>) -> Reply {
        let body = body.map(|b| b.to_string());
        self.call("DELETE", path, Some(key), body.as_deref()).await
    }

    pub fn logs(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Mints an app key and returns (plaintext, key id).
    pub async fn mint(
        &self,
        master: &str,
        apps: &[&str],
        project: Option<&str>,
    ) -> (String, String) {
        let mut body = serde_json::json!({ "name": "test key", "apps": apps });
        if let Some(p) = project {
            body["project"] = Value::from(p);
        }
        let r = self.post("/api/platform/v1/keys", master, body).await;
        let b = r.assert_status(201);
        (
            b["key"].as_str().unwrap().to_owned(),
            b["keyId"].as_str().unwrap().to_owned(),
        )
    }

    /// Creates a project and returns (id, slug).
    pub async fn project(&self, master: &str, slug: &str) -> (String, String) {
        let r = self
            .post(
                "/api/platform/v1/projects",
                master,
                serde_json::json!({ "name": slug, "tag": "t", "color": "blue", "slug": slug }),
            )
            .await;
        let b = r.assert_status(201);
        (
            b["project"]["id"].as_str().unwrap().to_owned(),
            slug.to_owned(),
        )
    }

    /// Registers a confidential OAuth client (the platform admin's master key) and returns
    /// its id.
    pub async fn register_client(&self, admin: &str, name: &str) -> String {
        let r = self
            .post(
                "/api/platform/v1/oauth-clients",
                admin,
                serde_json::json!({
                    "name": name,
                    "client_type": "confidential",
                    "redirect_uris": ["https://app.example/cb"],
                }),
            )
            .await;
        r.assert_status(201)["client"]["client_id"]
            .as_str()
            .unwrap()
            .to_owned()
    }
}
