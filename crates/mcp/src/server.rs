//! The MCP server rmcp runs for each request: what it says about itself (both eras:
//! `initialize` and `server/discover`), the tools the caller may see, and their calls.

use std::borrow::Cow;
use std::sync::Arc;

use quire_edge::AppState;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, ErrorData, Implementation,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};

use crate::limiter::Limiter;
use crate::tools;
use crate::transport::Caller;

/// What the server tells every client once.
const INSTRUCTIONS: &str = "Quire publishes static pages (HTML sites) and shares them. Pages are private unless access says otherwise: ask the user before making a page public or deleting one. Pass request_id to publish_page so a retry is safe. For more than ~100 files, publish a few and send the rest with add_files. Show the user the url (or shortUrl) a result gives.";

/// The protocol versions served, newest first: the stateless era and the handshake era.
const VERSIONS: &[ProtocolVersion] = &[
    ProtocolVersion::V_2026_07_28,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_03_26,
];

/// Whether `version` is one this server speaks.
pub(crate) fn serves(version: &str) -> bool {
    VERSIONS.iter().any(|v| v.as_str() == version)
}

/// The versions served, newest first, as the protocol writes them.
pub(crate) fn versions() -> Vec<&'static str> {
    VERSIONS.iter().map(ProtocolVersion::as_str).collect()
}

/// The handler of one request.
#[derive(Debug, Clone)]
pub struct QuireMcp {
    state: AppState,
    limiter: Arc<Limiter>,
}

impl QuireMcp {
    #[must_use]
    pub(crate) fn new(state: AppState, limiter: Arc<Limiter>) -> Self {
        Self { state, limiter }
    }
}

/// The caller the gate put in the request's extensions.
fn caller(context: &RequestContext<RoleServer>) -> Result<Caller, ErrorData> {
    context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Caller>())
        .cloned()
        .ok_or_else(|| ErrorData::internal_error("no authenticated caller", None))
}

impl ServerHandler for QuireMcp {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("quire", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(VERSIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let caller = caller(&context)?;
        // The list depends on the credential: cacheable by this client only.
        let mut result = ListToolsResult::with_all_items(tools::listed_for(&caller.principal))
            .with_ttl_ms(300_000);
        result.cache_scope = Some(CacheScope::Private);
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = caller(&context)?;
        match tools::call(
            &self.state,
            &self.limiter,
            &caller,
            &request.name,
            request.arguments,
        )
        .await
        {
            Some(result) => Ok(result.into()),
            None => Err(ErrorData::invalid_params(
                format!("unknown tool: {}", request.name),
                None,
            )),
        }
    }
}
