//! What the Links and Files pages share, a thing behind a link having the same policy and
//! the same detail-page actions whatever it leads to: the policy's facts as the list and the
//! detail show them, the policy fields of their forms, and the detail's post (settings,
//! archive, restore, delete) with its answers. Each page says what is its own through
//! [`BehindLink`].

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use quire_edge::{ApiError, AppState};
use quire_kernel::{InfraError, Principal};
use quire_links::Link;
use serde::de::DeserializeOwned;
use time::OffsetDateTime;

use crate::pages::row::access_badge;
use crate::shared::guards::{Owner, Posted, Unparsed};
use crate::shared::render::{refusal_status, see_other};
use crate::shared::when::{When, expiry_field, local_input};

/// A link's policy as a row of the list and the detail show it.
pub(crate) struct PolicyFacts {
    pub access: &'static str,
    pub access_class: &'static str,
    pub access_word: &'static str,
    /// What a visitor meets: `active`, `archived`, `expired` or `spent`.
    pub state: &'static str,
    pub expires: Option<When>,
    pub expires_input: String,
    /// Views (downloads) so far, against the budget when there is one.
    pub views: String,
    pub max_views_input: String,
}

impl PolicyFacts {
    /// The facts of `link`, whose thing is `archived` or not.
    pub(crate) fn new(link: &Link, archived: bool, now: OffsetDateTime) -> Self {
        let policy = &link.policy;
        let access = policy.access.as_str();
        let (access_class, access_word) = access_badge(access);
        let state = if archived {
            "archived"
        } else if policy.expires_at.is_some_and(|t| t <= now) {
            "expired"
        } else if policy.max_views.is_some_and(|max| link.view_count >= max) {
            "spent"
        } else {
            "active"
        };
        Self {
            access,
            access_class,
            access_word,
            state,
            expires: policy.expires_at.map(|t| When::new(t, now)),
            expires_input: policy.expires_at.map(local_input).unwrap_or_default(),
            views: match policy.max_views {
                Some(max) => format!("{} of {max}", link.view_count),
                None => link.view_count.to_string(),
            },
            max_views_input: policy.max_views.map(|m| m.to_string()).unwrap_or_default(),
        }
    }
}

/// A form field as given, trimmed; an empty one is none.
pub(crate) fn optional(raw: &str) -> Option<String> {
    let raw = raw.trim();
    (!raw.is_empty()).then(|| raw.to_owned())
}

/// The budget field: none when empty, else a whole number (`invalid` refuses the rest).
pub(crate) fn max_views<E>(raw: &str, invalid: fn(String) -> E) -> Result<Option<i128>, E> {
    optional(raw)
        .map(|n| {
            n.parse::<i128>()
                .map_err(|_| invalid("max_views must be a whole number".into()))
        })
        .transpose()
}

/// The expiry field: none when empty; a `datetime-local` value becomes the API's form,
/// anything else goes on as typed for the service to judge.
pub(crate) fn expires(raw: &str) -> Option<String> {
    optional(raw).map(|raw| expiry_field(&raw).unwrap_or(raw))
}

/// What one page of things behind a link has of its own: where it is, its service's
/// calls, its settings form and its detail page.
pub(crate) trait BehindLink {
    type Id: Copy;
    /// The form of the detail's posts.
    type Form: DeserializeOwned;
    type Patch;
    type Error: Clone + std::fmt::Display;
    /// Its pages: the list at `PAGES`, a detail at `PAGES/{id}`.
    const PAGES: &'static str;
    /// What the refusal of an unticked delete calls it.
    const NOUN: &'static str;

    /// The id in a detail's path.
    ///
    /// # Errors
    /// Not found, as the API's answer to an id that names nothing.
    fn id(raw: &str) -> Result<Self::Id, ApiError>;
    fn uuid(id: Self::Id) -> uuid::Uuid;
    /// The posted `action` and `confirm` fields.
    fn action(form: &Self::Form) -> (&str, &str);
    fn invalid(message: String) -> Self::Error;
    /// The store's failure, which is no refusal to show on the page.
    ///
    /// # Errors
    /// The error itself when it is a refusal.
    fn infra(e: Self::Error) -> Result<InfraError, Self::Error>;
    /// The change to `active` or `archived`.
    fn status(status: &'static str) -> Self::Patch;
    /// The change the settings form asks for.
    ///
    /// # Errors
    /// A field that does not parse.
    fn settings(form: &Self::Form) -> Result<Self::Patch, Self::Error>;

    /// The slug of the project it is in (where a delete returns to).
    async fn project(
        state: &AppState,
        principal: &Principal,
        id: Self::Id,
    ) -> Result<String, Self::Error>;
    async fn delete(
        state: &AppState,
        principal: &Principal,
        id: Self::Id,
    ) -> Result<(), Self::Error>;
    async fn update(
        state: &AppState,
        principal: &Principal,
        id: Self::Id,
        patch: Self::Patch,
    ) -> Result<(), Self::Error>;
    /// The detail page with `shown`'s status and error.
    ///
    /// # Errors
    /// As the API answers when the page cannot be read.
    async fn detail(
        state: &AppState,
        principal: &Principal,
        handle: &str,
        id: Self::Id,
        shown: (StatusCode, Option<String>),
    ) -> Result<HttpResponse, ApiError>;
}

/// `GET PAGES/{id}`.
pub(crate) async fn detail<T: BehindLink>(
    state: web::Data<AppState>,
    id: web::Path<String>,
    Owner { account, principal }: Owner,
) -> Result<HttpResponse, ApiError> {
    let id = T::id(&id)?;
    T::detail(
        &state,
        &principal,
        account.handle.as_str(),
        id,
        (StatusCode::OK, None),
    )
    .await
}

/// `POST PAGES/{id}`: `action` is `settings`, `archive`, `restore` or `delete` (ticked
/// "delete for good"). A change returns to the detail, a delete to the project's list, a
/// refusal shows the detail with it.
pub(crate) async fn action<T: BehindLink>(
    state: web::Data<AppState>,
    id: web::Path<String>,
    Posted(f, Owner { account, principal }): Posted<Unparsed<T::Form>, Owner>,
) -> Result<HttpResponse, ApiError>
where
    ApiError: From<T::Error>,
{
    let id = T::id(&id)?;
    let f = f.parse()?;
    let (action, confirm) = T::action(&f);
    let patch = match action {
        "delete" if confirm == "yes" => {
            let project = T::project(&state, &principal, id).await?;
            T::delete(&state, &principal, id).await?;
            return Ok(see_other(&format!("{}?project={project}", T::PAGES)));
        }
        "delete" => Err(T::invalid(format!(
            "tick \"delete for good\" to delete the {}",
            T::NOUN
        ))),
        "archive" => Ok(T::status("archived")),
        "restore" => Ok(T::status("active")),
        "settings" => T::settings(&f),
        _ => Err(T::invalid(
            "action must be settings, archive, restore or delete".into(),
        )),
    };
    let result = match patch {
        Ok(patch) => T::update(&state, &principal, id, patch).await,
        Err(e) => Err(e),
    };
    match result.map_err(T::infra) {
        Ok(()) => Ok(see_other(&format!("{}/{}", T::PAGES, T::uuid(id)))),
        Err(Ok(e)) => Err(e.into()),
        Err(Err(e)) => {
            T::detail(
                &state,
                &principal,
                account.handle.as_str(),
                id,
                (refusal_status(&e), Some(e.to_string())),
            )
            .await
        }
    }
}
