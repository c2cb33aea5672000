//! The HTTP side: one JSON call, the server's error body kept whole so the CLI can print
//! its `error` code and `message`.

use std::time::Duration;

use serde_json::Value;

/// Why a command failed.
#[derive(Debug)]
pub enum Failure {
    /// The server answered with an error body.
    Api {
        status: u16,
        code: String,
        message: String,
        body: Value,
        /// A fuller account than the one-line `error: code: message`, printed instead of it
        /// (PostgreSQL's refusal of SQL, with a caret under where it stopped).
        text: Option<String>,
    },
    /// Anything on this side: bad input, no login, the network.
    Local(String),
    /// A destructive command not confirmed; nothing was done (exit code 2).
    Refused(String),
}

impl Failure {
    pub fn local(message: impl Into<String>) -> Self {
        Self::Local(message.into())
    }
}

impl From<reqwest::Error> for Failure {
    fn from(e: reqwest::Error) -> Self {
        let what = if e.is_connect() {
            "cannot connect to the server"
        } else if e.is_timeout() {
            "the server did not answer in time"
        } else {
            "the request failed"
        };
        Self::Local(format!("{what}: {e}"))
    }
}

#[derive(Debug, Clone)]
pub struct Api {
    pub http: reqwest::Client,
    pub server: String,
    pub key: Option<String>,
}

impl Api {
    pub fn new(server: &str, key: Option<String>) -> Result<Self, Failure> {
        let http = reqwest::Client::builder()
            .user_agent(concat!("quire-cli/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(10))
            .build()?;
        Ok(Self {
            http,
            server: server.trim_end_matches('/').to_owned(),
            key,
        })
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.server)
    }

    fn key(&self) -> Result<&str, Failure> {
        self.key
            .as_deref()
            .ok_or_else(|| Failure::local("not logged in: run `quire login`, or set QUIRE_KEY"))
    }

    /// An authenticated request with an optional JSON body.
    pub fn request(
        &self,
        method: reqwest::Method,
        path: &str,
    ) -> Result<reqwest::RequestBuilder, Failure> {
        Ok(self
            .http
            .request(method, self.url(path))
            .bearer_auth(self.key()?))
    }

    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, Failure> {
        let mut req = self.request(method, path)?;
        if let Some(body) = body {
            req = req.json(body);
        }
        read(req.send().await?).await
    }

    pub async fn get(&self, path: &str) -> Result<Value, Failure> {
        self.call(reqwest::Method::GET, path, None).await
    }
}

/// The JSON of a success, or the server's error as a [`Failure::Api`].
pub async fn read(resp: reqwest::Response) -> Result<Value, Failure> {
    let status = resp.status().as_u16();
    let text = resp.text().await?;
    let body: Value = if text.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|_| Value::String(text.clone()))
    };
    if (200..300).contains(&status) {
        return Ok(body);
    }
    let code = body["error"]
        .as_str()
        .map_or_else(|| format!("http_{status}"), str::to_owned);
    let message = body["message"]
        .as_str()
        .map_or_else(|| text.chars().take(200).collect(), str::to_owned);
    Err(Failure::Api {
        status,
        code,
        message,
        body,
        text: None,
    })
}
