//! The authorization endpoint's use cases: checking a request (RFC 6749 §4.1.1 with PKCE,
//! the OAuth 2.1 shape) for the consent page, and deciding it.

use std::sync::Arc;

use quire_kernel::{AccountId, Clock, InfraError, ProjectId, Resource};
use quire_projects::{Project, ProjectStore};
use url::Url;

use crate::grant::{
    Approval, AuthorizationCode, CODE_LIFETIME, CodeChallenge, Grant, GrantStage, REQUEST_LIFETIME,
    RequestId, Scopes, parse_scope, read_only_of,
};
use crate::metadata_document::MetadataDocuments;
use crate::model::{ClientId, OAuthClient, Registration};
use crate::ports::{ClientStore, GrantStore, InsertClientError};
use crate::resource::{INVALID_TARGET, resource_indicator};

use crate::authorize::with_query;
pub use crate::authorize::{AuthorizeError, AuthorizeRequest, RedirectedError};

/// Longest `state` kept and echoed.
pub const MAX_STATE_BYTES: usize = 512;

/// A checked request, stored as a pending grant bound to the session: what the consent
/// page shows and posts back.
#[derive(Debug, Clone)]
pub struct ConsentRequest {
    /// Goes in the consent form; only its hash is stored.
    pub request_id: RequestId,
    pub client: OAuthClient,
    pub redirect_uri: String,
    pub scopes: Scopes,
    /// The resource the tokens will be for.
    pub resource: Resource,
    /// The project preselected on the page: the client's home project.
    pub project: Project,
    /// Every project the account may pick (its own), oldest first.
    pub projects: Vec<Project>,
}

impl ConsentRequest {
    /// The redirect's host (or scheme, for a private-use scheme), for the page.
    #[must_use]
    pub fn redirect_host(&self) -> String {
        Url::parse(&self.redirect_uri).map_or_else(
            |_| self.redirect_uri.clone(),
            |u| match u.host_str() {
                Some(host) => host.to_owned(),
                None => format!("{}:", u.scheme()),
            },
        )
    }

    /// For a client named by its metadata document's URL, that URL's host: who describes
    /// the client, for the page.
    #[must_use]
    pub fn client_document_host(&self) -> Option<String> {
        if !self.client.id.is_url() {
            return None;
        }
        Url::parse(self.client.id.as_str())
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned))
    }

    /// Whether the page offers "read only": the request holds `page` with more than reading.
    #[must_use]
    pub fn offers_read_only(&self) -> bool {
        read_only_of(&self.scopes).is_some_and(|read| read != self.scopes)
    }

    /// Whether the page should warn: the code goes to a program on this device (a loopback
    /// address or an app's own scheme), which any local program could be.
    #[must_use]
    pub fn redirect_is_local(&self) -> bool {
        !Url::parse(&self.redirect_uri).is_ok_and(|u| u.scheme() == "https")
    }
}

/// The person's approval as the consent page posts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approve {
    /// The signed-in account deciding (the one the request is bound to, by its session).
    pub account: AccountId,
    /// The picked project's id as posted; absent means the preselected home project.
    pub project: Option<String>,
    /// "Read only": grant `page:read` whatever `page` scope was requested.
    pub read_only: bool,
}

/// Why a decision was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecisionError {
    #[error(
        "this authorization request is unknown, expired or already decided; start again from the application"
    )]
    UnknownRequest,
    /// The picked project is not one of the account's (or not a project id at all); the
    /// request stays pending and nothing is stored.
    #[error("pick one of your projects: this account cannot act in the project sent")]
    ProjectRefused,
    /// "Read only" for a request that holds no page scope, which it would widen.
    #[error("read only applies to page access, which this request does not ask for")]
    ReadOnlyRefused,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// The project a client's tokens act in for `account`: the account's project naming the
/// client, else its default project.
///
/// # Errors
/// [`InfraError`] on storage failure, or if the account has no default project.
pub async fn home_project(
    projects: &dyn ProjectStore,
    account: AccountId,
    client: &ClientId,
) -> Result<Project, InfraError> {
    let all = projects.projects_of_account(account).await?;
    if let Some(own) = all
        .iter()
        .find(|p| p.oauth_client_id.as_deref() == Some(client.as_str()))
    {
        return Ok(own.clone());
    }
    let default = projects
        .default_project_of(account)
        .await?
        .ok_or_else(|| InfraError::new("account without a default project"))?;
    all.into_iter()
        .find(|p| p.id == default)
        .ok_or_else(|| InfraError::new("default project missing"))
}

/// The authorization endpoint's use cases.
#[derive(Debug, Clone)]
pub struct ConsentService {
    clients: Arc<dyn ClientStore>,
    grants: Arc<dyn GrantStore>,
    projects: Arc<dyn ProjectStore>,
    clock: Arc<dyn Clock>,
    /// The public base URL: `iss` on every redirect (RFC 9207), and what a `resource`
    /// must be on (RFC 8707).
    issuer: String,
    /// Clients named by a metadata document's URL.
    documents: MetadataDocuments,
}

impl ConsentService {
    /// The use cases of the authorization server whose issuer is `issuer` (the public base
    /// URL, without a trailing slash).
    #[must_use]
    pub fn new(
        clients: Arc<dyn ClientStore>,
        grants: Arc<dyn GrantStore>,
        projects: Arc<dyn ProjectStore>,
        clock: Arc<dyn Clock>,
        issuer: &str,
        documents: MetadataDocuments,
    ) -> Self {
        Self {
            clients,
            grants,
            projects,
            clock,
            issuer: issuer.trim_end_matches('/').to_owned(),
            documents,
        }
    }

    /// Whether a client metadata document's URL may be a `client_id`.
    #[must_use]
    pub fn metadata_documents_enabled(&self) -> bool {
        self.documents.enabled()
    }

    /// The client a metadata document URL names: `None` when the admin deleted it (which
    /// blocks the URL), else as its document says now.
    async fn document_client(&self, id: &ClientId) -> Result<Option<OAuthClient>, AuthorizeError> {
        if self
            .clients
            .client(id)
            .await?
            .is_some_and(|stored| !stored.is_live())
        {
            return Ok(None);
        }
        self.documents
            .resolve(id, self.clock.now())
            .await
            .map(Some)
            .map_err(|refusal| AuthorizeError::NotRedirectable(refusal.page_message()))
    }

    /// `iss` of the authorization responses.
    #[must_use]
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// Checks a request's client and redirect URI only: what decides whether an error may be
    /// redirected. Run before sign-in, so a bad link never reaches the sign-in page.
    ///
    /// # Errors
    /// [`AuthorizeError::NotRedirectable`], [`AuthorizeError::Infra`].
    pub async fn client_of(
        &self,
        request: &AuthorizeRequest,
    ) -> Result<(OAuthClient, String), AuthorizeError> {
        let client = match request.client_id.as_deref().and_then(ClientId::parse) {
            Some(id) if id.is_url() => self.document_client(&id).await?,
            Some(id) => self.clients.client(&id).await?,
            None => None,
        };
        let client = client
            .filter(OAuthClient::is_live)
            .ok_or(AuthorizeError::NotRedirectable(
                "This application is not registered with Quire (unknown or deleted client_id).",
            ))?;
        let redirect_uri = match request.redirect_uri.as_deref() {
            Some(uri) if client.redirect_for(uri).is_some() => uri.to_owned(),
            Some(_) => {
                return Err(AuthorizeError::NotRedirectable(
                    "The redirect_uri is not one this application registered.",
                ));
            }
            // RFC 6749 §3.1.2.3: with a single registered URI it may be omitted.
            None if client.redirect_uris.len() == 1 => client.redirect_uris[0].as_str().to_owned(),
            None => {
                return Err(AuthorizeError::NotRedirectable(
                    "The request names no redirect_uri and the application registered several.",
                ));
            }
        };
        Ok((client, redirect_uri))
    }

    /// Checks a whole request for `account` and stores it as a pending grant bound to
    /// `session_hash`, for 10 minutes.
    ///
    /// # Errors
    /// [`AuthorizeError`]: not redirectable for the client or URI, redirected otherwise.
    pub async fn begin(
        &self,
        request: &AuthorizeRequest,
        account: AccountId,
        session_hash: &str,
    ) -> Result<ConsentRequest, AuthorizeError> {
        let (client, redirect_uri) = self.client_of(request).await?;
        self.begin_for(client, redirect_uri, request, account, session_hash)
            .await
    }

    /// [`ConsentService::begin`] for a client and redirect URI [`ConsentService::client_of`]
    /// already checked (the edge checks them before sign-in, and does not read them twice).
    ///
    /// # Errors
    /// As [`ConsentService::begin`], redirected only.
    pub async fn begin_for(
        &self,
        client: OAuthClient,
        redirect_uri: String,
        request: &AuthorizeRequest,
        account: AccountId,
        session_hash: &str,
    ) -> Result<ConsentRequest, AuthorizeError> {
        let state = request.state.clone().filter(|s| !s.is_empty());
        let refuse = |error: &'static str, description: &str| {
            AuthorizeError::Redirect(RedirectedError {
                issuer: self.issuer.clone(),
                redirect_uri: redirect_uri.clone(),
                error,
                description: description.to_owned(),
                state: state.clone(),
            })
        };
        if state.as_ref().is_some_and(|s| s.len() > MAX_STATE_BYTES) {
            return Err(refuse("invalid_request", "state is longer than 512 bytes"));
        }
        match request.response_type.as_deref() {
            Some("code") => {}
            None => return Err(refuse("invalid_request", "response_type is required")),
            Some(_) => {
                return Err(refuse(
                    "unsupported_response_type",
                    "only response_type=code is supported",
                ));
            }
        }
        let method = request.code_challenge_method.as_deref().unwrap_or("plain");
        if method != "S256" {
            return Err(refuse(
                "invalid_request",
                "code_challenge_method must be S256 (plain is not supported)",
            ));
        }
        let challenge = request
            .code_challenge
            .as_deref()
            .and_then(CodeChallenge::parse)
            .ok_or_else(|| {
                refuse(
                    "invalid_request",
                    "code_challenge is required: 43 base64url characters (PKCE, S256)",
                )
            })?;
        let resource = match request.resource.as_deref() {
            None => client.default_resource(),
            Some(raw) => resource_indicator(raw, &self.issuer)
                .ok_or_else(|| refuse("invalid_target", INVALID_TARGET))?,
        };
        let scopes = parse_scope(request.scope.as_deref());
        let project = home_project(self.projects.as_ref(), account, &client.id).await?;
        let mut projects = self.projects.projects_of_account(account).await?;
        projects.sort_by_key(|p| p.created_at);
        let now = self.clock.now();
        // A metadata document client is stored when an account first asks for it, so its
        // grants, tokens and the admin's list can name it; an earlier row stays as it was.
        if client.registration == Registration::MetadataDocument {
            match self.clients.insert_client(&client).await {
                Ok(()) | Err(InsertClientError::IdTaken) => {}
                Err(InsertClientError::Infra(e)) => return Err(e.into()),
            }
        }
        let request_id = RequestId::generate();
        let grant = Grant {
            id: quire_kernel::secret::random_url_token(),
            client_id: client.id.clone(),
            account_id: account,
            scopes: scopes.clone(),
            project_id: None,
            resource,
            redirect_uri: redirect_uri.clone(),
            state,
            code_challenge: challenge,
            stage: GrantStage::Pending {
                request_hash: request_id.hash(),
                session_hash: session_hash.to_owned(),
                expires_at: now + REQUEST_LIFETIME,
            },
            created_at: now,
            revoked_at: None,
        };
        self.grants.insert_oauth_grant(&grant).await?;
        Ok(ConsentRequest {
            request_id,
            client,
            redirect_uri,
            scopes,
            resource,
            project,
            projects,
        })
    }

    /// Approves (with the person's choices) or denies the pending request `request_id` of
    /// the session `session_hash`, once. Returns where the browser goes: the redirect URI
    /// with `code` and `state`, or with `error=access_denied` and `state`.
    ///
    /// # Errors
    /// [`DecisionError::UnknownRequest`] for an unknown, expired, decided or other session's
    /// request; [`DecisionError::ProjectRefused`] or [`DecisionError::ReadOnlyRefused`] for
    /// a choice the request cannot take (it stays pending); [`DecisionError::Infra`].
    pub async fn decide(
        &self,
        request_id: &str,
        session_hash: &str,
        approve: Option<Approve>,
    ) -> Result<String, DecisionError> {
        let now = self.clock.now();
        let request_hash = RequestId::received(request_id).hash();
        let code = approve.is_some().then(AuthorizationCode::generate);
        let approval = match (&approve, &code) {
            (Some(choice), Some(code)) => Some(
                self.approval(&request_hash, session_hash, choice, code, now)
                    .await?,
            ),
            _ => None,
        };
        let grant = self
            .grants
            .settle_pending(&request_hash, session_hash, now, approval.as_ref())
            .await?
            .ok_or(DecisionError::UnknownRequest)?;
        let mut pairs = match &code {
            Some(code) => vec![("code", code.expose().to_owned())],
            None => vec![
                ("error", "access_denied".to_owned()),
                (
                    "error_description",
                    "the account holder denied the request".to_owned(),
                ),
            ],
        };
        if let Some(state) = &grant.state {
            pairs.push(("state", state.clone()));
        }
        pairs.push(("iss", self.issuer.clone()));
        Ok(with_query(&grant.redirect_uri, &pairs))
    }

    /// What approving the pending request stores: its code, the picked project (checked to
    /// be the account's) and the scopes (narrowed by "read only").
    async fn approval(
        &self,
        request_hash: &str,
        session_hash: &str,
        choice: &Approve,
        code: &AuthorizationCode,
        now: time::OffsetDateTime,
    ) -> Result<Approval, DecisionError> {
        let pending = self
            .grants
            .pending_grant(request_hash, session_hash, now)
            .await?
            .filter(|g| g.account_id == choice.account)
            .ok_or(DecisionError::UnknownRequest)?;
        let project_id = match choice.project.as_deref() {
            None => {
                home_project(self.projects.as_ref(), choice.account, &pending.client_id)
                    .await?
                    .id
            }
            Some(raw) => {
                let id = raw
                    .parse::<ProjectId>()
                    .map_err(|_| DecisionError::ProjectRefused)?;
                self.projects
                    .project_by_id(id)
                    .await?
                    .filter(|p| p.account_id == choice.account)
                    .ok_or(DecisionError::ProjectRefused)?
                    .id
            }
        };
        let scopes = if choice.read_only {
            read_only_of(&pending.scopes).ok_or(DecisionError::ReadOnlyRefused)?
        } else {
            pending.scopes
        };
        Ok(Approval {
            code_hash: code.hash(),
            code_expires_at: now + CODE_LIFETIME,
            project_id,
            scopes,
        })
    }
}
