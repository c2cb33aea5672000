//! The tool registry: one [`Entry`] per tool, saying its name and description, its [`Kind`]
//! (the annotations), what a credential [`Needs`] to call it, its argument and output types
//! and its handler. The catalogue (`tools/list`), who sees which tool, and the dispatch of
//! `tools/call` (refusal, write limit, audit line, answer) all follow from the entries.
//!
//! An entry that says nothing of what it needs is listed to no one and refused to everyone,
//! and so is a tool that changes something without naming the app it changes: a forgotten
//! requirement narrows access, never widens it.

use std::future::Future;
use std::time::Instant;

use futures_util::future::BoxFuture;
use quire_edge::AppState;
use quire_kernel::{App, Principal};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::common::{Call, ToolError};
use super::schema::described;
use crate::limiter::Limiter;
use crate::transport::Caller;

/// How a tool behaves, as its annotations tell a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Only reads (`readOnlyHint`); never counted by the write limit.
    Read,
    /// Changes something: shown only to a credential that may write the app it needs, and
    /// counted by the per-credential write limit. `destructive`: it may replace or remove
    /// what is there; `idempotent`: a repeat with the same arguments changes nothing more.
    Write { destructive: bool, idempotent: bool },
}

impl Kind {
    fn annotations(self) -> ToolAnnotations {
        let annotations = ToolAnnotations::new()
            .read_only(self == Kind::Read)
            .open_world(false);
        // The destructive and idempotent hints mean nothing for a read-only tool (MCP says so).
        match self {
            Kind::Read => annotations,
            Kind::Write {
                destructive,
                idempotent,
            } => annotations.destructive(destructive).idempotent(idempotent),
        }
    }
}

/// What a credential must hold to see a tool and call it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Needs {
    /// Any credential the gate lets in. For the page read tools: their use cases refuse,
    /// page by page, what a credential may not read, as the REST routes do.
    Anyone,
    /// A credential the projects route takes: a master key, the dashboard or an OAuth
    /// bearer, never an app key.
    ProjectLister,
    /// `app` among the credential's apps, and write access to it for a [`Kind::Write`] tool.
    App(App),
}

/// A tool's handler: an `async fn(&Call, Args) -> Result<Output, ToolError>`, typed by its
/// arguments and output (the catalogue's schemas are theirs).
pub(super) trait Handler<'a, I, O>: Fn(&'a Call<'a>, I) -> Self::Future {
    type Future: Future<Output = Result<O, ToolError>> + Send + 'a;
}

impl<'a, I, O, F, Fut> Handler<'a, I, O> for F
where
    F: Fn(&'a Call<'a>, I) -> Fut,
    Fut: Future<Output = Result<O, ToolError>> + Send + 'a,
{
    type Future = Fut;
}

/// A result on its way out: the structured value, and the text beside it when that is not
/// the value's JSON.
struct Reply {
    value: serde_json::Value,
    text: Option<String>,
}

/// A handler with its arguments parsed from, and its output written to, JSON.
type Run = Box<
    dyn for<'a> Fn(&'a Call<'a>, Option<JsonObject>) -> BoxFuture<'a, Result<Reply, ToolError>>
        + Send
        + Sync,
>;

fn run<F>(f: F) -> Run
where
    F: for<'a> Fn(&'a Call<'a>, Option<JsonObject>) -> BoxFuture<'a, Result<Reply, ToolError>>
        + Send
        + Sync
        + 'static,
{
    Box::new(f)
}

fn parse<T: DeserializeOwned>(args: Option<JsonObject>) -> Result<T, ToolError> {
    serde_json::from_value(serde_json::Value::Object(args.unwrap_or_default()))
        .map_err(|e| ToolError::new("invalid_request", format!("arguments: {e}")))
}

fn json<T: Serialize>(out: &T) -> Result<serde_json::Value, ToolError> {
    serde_json::to_value(out).map_err(|e| ToolError::new("internal_error", e.to_string()))
}

/// One tool.
pub(super) struct Entry {
    tool: Tool,
    kind: Kind,
    needs: Option<Needs>,
    run: Run,
}

impl Entry {
    /// The tool `handler` runs, answering its output as JSON; seen by no one until
    /// [`Entry::needs`] says who may.
    pub(super) fn new<I, O, H>(
        name: &'static str,
        description: &'static str,
        kind: Kind,
        handler: H,
    ) -> Self
    where
        I: DeserializeOwned + JsonSchema + Send + 'static,
        O: Serialize + JsonSchema + 'static,
        H: for<'a> Handler<'a, I, O> + Copy + Send + Sync + 'static,
    {
        Self::new_with_text(name, description, kind, handler, None)
    }

    /// The same, with `text(output)`, when given, as the text the model reads instead of
    /// the output's JSON (which stays the structured content).
    pub(super) fn new_with_text<I, O, H>(
        name: &'static str,
        description: &'static str,
        kind: Kind,
        handler: H,
        text: Option<fn(&O) -> String>,
    ) -> Self
    where
        I: DeserializeOwned + JsonSchema + Send + 'static,
        O: Serialize + JsonSchema + 'static,
        H: for<'a> Handler<'a, I, O> + Copy + Send + Sync + 'static,
    {
        Self {
            tool: described::<I, O>(name, description, kind.annotations()),
            kind,
            needs: None,
            run: run(move |cx, args| {
                Box::pin(async move {
                    let sent: I = parse(args)?;
                    let out = handler(cx, sent).await?;
                    Ok(Reply {
                        value: json(&out)?,
                        text: text.map(|text| text(&out)),
                    })
                })
            }),
        }
    }

    /// What a credential must hold to see and call the tool.
    pub(super) fn needs(mut self, needs: Needs) -> Self {
        self.needs = Some(needs);
        self
    }

    fn writes(&self) -> bool {
        matches!(self.kind, Kind::Write { .. })
    }

    /// The rule, whole: nothing said is no one, a write needs write access to the app it
    /// names, and a write that names no app is no one's.
    fn visible_to(&self, principal: &Principal) -> bool {
        match (self.needs, self.kind) {
            (None, _) => false,
            (Some(Needs::App(app)), Kind::Read) => principal.has_app(app),
            (Some(Needs::App(app)), Kind::Write { .. }) => principal.can_write(app),
            (Some(Needs::Anyone), Kind::Read) => true,
            (Some(Needs::ProjectLister), Kind::Read) => {
                principal.is_master() || principal.is_oauth_client()
            }
            (Some(Needs::Anyone | Needs::ProjectLister), Kind::Write { .. }) => false,
        }
    }

    /// Why a credential may not call the tool: for the database tools, the app it lacks.
    fn refusal(&self) -> String {
        let name = &self.tool.name;
        if self.needs == Some(Needs::App(App::Base)) {
            format!(
                "this credential may not call {name}: the database tools need `base` in its apps"
            )
        } else {
            format!("this credential may not call {name}")
        }
    }
}

/// Every tool, in the order `tools/list` gives them.
pub(super) struct Registry {
    entries: Vec<Entry>,
    catalogue: Vec<Tool>,
}

impl Registry {
    pub(super) fn new(entries: Vec<Entry>) -> Self {
        let catalogue = entries.iter().map(|e| e.tool.clone()).collect();
        Self { entries, catalogue }
    }

    pub(super) fn catalogue(&self) -> &[Tool] {
        &self.catalogue
    }

    fn entry(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.tool.name == name)
    }

    pub(super) fn visible_to(&self, principal: &Principal, name: &str) -> bool {
        self.entry(name).is_some_and(|e| e.visible_to(principal))
    }

    pub(super) fn listed_for(&self, principal: &Principal) -> Vec<Tool> {
        self.entries
            .iter()
            .filter(|e| e.visible_to(principal))
            .map(|e| e.tool.clone())
            .collect()
    }

    /// Runs tool `name` for `caller`; `None` when no such tool exists (a protocol error).
    pub(super) async fn call(
        &self,
        state: &AppState,
        limiter: &Limiter,
        caller: &Caller,
        name: &str,
        args: Option<JsonObject>,
    ) -> Option<CallToolResult> {
        let entry = self.entry(name)?;
        let started = Instant::now();
        let cx = Call::new(state, caller);
        let reply = if !entry.visible_to(&caller.principal) {
            Err(ToolError::new("insufficient_scope", entry.refusal()))
        } else if entry.writes()
            && let Err(wait) = limiter.hit(&caller.client, started)
        {
            Err(ToolError::new(
                "rate_limited",
                format!("too many changes from this credential; retry in {wait} s"),
            ))
        } else {
            (entry.run)(&cx, args).await
        };
        let outcome = match &reply {
            Ok(_) => "ok",
            Err(e) => e.code.as_str(),
        };
        tracing::info!(
            target: "quire::mcp::audit",
            account = %caller.principal.account_id.0,
            client = %caller.client,
            tool = name,
            target_id = cx.target().unwrap_or("-"),
            outcome,
            ms = started.elapsed().as_millis() as u64,
            "mcp tool call"
        );
        Some(match reply {
            Ok(Reply { value, text }) => {
                let mut result = CallToolResult::structured(value);
                if let Some(text) = text {
                    result.content = vec![ContentBlock::text(text)];
                }
                result
            }
            Err(e) => CallToolResult::error(vec![ContentBlock::text(e.text())]),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is the failure report

    use quire_testkit::World;
    use serde::Deserialize;
    use serde_json::Value;

    use super::*;
    use crate::tools_list::credentials;

    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Nothing {}

    #[derive(Serialize, JsonSchema)]
    struct Ran {
        ran: bool,
    }

    async fn probe(_: &Call<'_>, _: Nothing) -> Result<Ran, ToolError> {
        Ok(Ran { ran: true })
    }

    const WRITES: Kind = Kind::Write {
        destructive: true,
        idempotent: false,
    };

    /// What a call of `name` as `principal` answers: `None` for an unknown tool (JSON-RPC
    /// -32602), else the tool error's text, or `"ran"` when the handler ran.
    async fn called(
        registry: &Registry,
        state: &AppState,
        principal: &Principal,
        name: &str,
    ) -> Option<String> {
        let caller = Caller {
            principal: principal.clone(),
            client: "key:test".into(),
        };
        let limiter = Limiter::default();
        let result = registry.call(state, &limiter, &caller, name, None).await?;
        let result = serde_json::to_value(result).unwrap();
        Some(if result["isError"] == Value::Bool(true) {
            result["content"][0]["text"].as_str().unwrap().to_owned()
        } else {
            "ran".to_owned()
        })
    }

    #[actix_web::test]
    async fn an_entry_that_says_nothing_of_what_it_needs_is_no_ones() {
        let state = World::builder().build().await.app_state();
        let registry = Registry::new(vec![
            Entry::new("probe_read", "Reads.", Kind::Read, probe),
            Entry::new("probe_write", "Writes.", WRITES, probe),
        ]);
        for (label, principal) in credentials() {
            assert!(registry.listed_for(&principal).is_empty(), "{label}");
            for name in ["probe_read", "probe_write"] {
                assert!(!registry.visible_to(&principal, name), "{label}: {name}");
                // Refused as a hidden tool is: a tool error the model reads, the handler
                // never run.
                let answer = called(&registry, &state, &principal, name).await.unwrap();
                assert!(
                    answer.starts_with(&format!(
                        "insufficient_scope: this credential may not call {name}."
                    )),
                    "{label}: {answer}"
                );
            }
        }
        // A tool that is not in the table at all stays a protocol error.
        let (_, master) = &credentials()[0];
        assert_eq!(
            called(&registry, &state, master, "probe_elsewhere").await,
            None
        );
    }

    #[actix_web::test]
    async fn a_write_that_names_no_app_is_no_ones() {
        let state = World::builder().build().await.app_state();
        let registry = Registry::new(vec![
            Entry::new("anyones_write", "Writes.", WRITES, probe).needs(Needs::Anyone),
            Entry::new("listers_write", "Writes.", WRITES, probe).needs(Needs::ProjectLister),
        ]);
        for (label, principal) in credentials() {
            assert!(registry.listed_for(&principal).is_empty(), "{label}");
        }
        let (_, master) = &credentials()[0];
        let answer = called(&registry, &state, master, "anyones_write")
            .await
            .unwrap();
        assert!(answer.starts_with("insufficient_scope:"), "{answer}");
    }

    #[actix_web::test]
    async fn what_an_entry_needs_is_what_it_takes_to_see_and_call_it() {
        let state = World::builder().build().await.app_state();
        let registry = Registry::new(vec![
            Entry::new("serve_read", "Reads.", Kind::Read, probe).needs(Needs::App(App::Serve)),
            Entry::new("serve_write", "Writes.", WRITES, probe).needs(Needs::App(App::Serve)),
        ]);
        for (label, principal) in credentials() {
            let listed: Vec<_> = registry
                .listed_for(&principal)
                .into_iter()
                .map(|t| t.name.into_owned())
                .collect();
            let mut expected = Vec::new();
            if principal.has_app(App::Serve) {
                expected.push("serve_read");
            }
            if principal.can_write(App::Serve) {
                expected.push("serve_write");
                assert_eq!(
                    called(&registry, &state, &principal, "serve_write")
                        .await
                        .as_deref(),
                    Some("ran")
                );
            }
            assert_eq!(listed, expected, "{label}");
        }
    }

    /// Every write tool of the table, from the table itself: a tool counts as a write by its
    /// kind, and the app it writes is the one its entry names.
    fn writes_of_the_table() -> Vec<&'static Entry> {
        super::super::registry()
            .entries
            .iter()
            .filter(|e| e.writes())
            .collect()
    }

    #[test]
    fn the_table_names_each_tool_once_and_says_what_each_needs() {
        let entries = &super::super::registry().entries;
        for (i, entry) in entries.iter().enumerate() {
            assert!(entry.needs.is_some(), "{} says nothing", entry.tool.name);
            assert!(
                entries[..i].iter().all(|e| e.tool.name != entry.tool.name),
                "{} twice",
                entry.tool.name
            );
        }
        assert!(!writes_of_the_table().is_empty());
    }

    #[actix_web::test]
    async fn every_write_tool_is_hidden_from_a_read_only_credential() {
        let state = World::builder().build().await.app_state();
        let registry = super::super::registry();
        let writes = writes_of_the_table();
        let read_only: Vec<_> = credentials()
            .into_iter()
            .filter(|(_, p)| App::ALL.iter().all(|app| !p.can_write(*app)))
            .collect();
        // `page:read`, at least: the test is about someone.
        assert!(!read_only.is_empty());
        for (label, principal) in &read_only {
            for entry in &writes {
                let name = &entry.tool.name;
                assert!(!registry.visible_to(principal, name), "{label}: {name}");
                let answer = called(registry, &state, principal, name).await.unwrap();
                assert!(
                    answer.starts_with("insufficient_scope:"),
                    "{label}: {answer}"
                );
            }
        }
        // And every credential sees a write tool only with write access to what it names.
        for (label, principal) in credentials() {
            for entry in &writes {
                if registry.visible_to(&principal, &entry.tool.name) {
                    let Some(Needs::App(app)) = entry.needs else {
                        panic!("{} writes and names no app", entry.tool.name);
                    };
                    assert!(principal.can_write(app), "{label}: {}", entry.tool.name);
                }
            }
        }
    }
}
