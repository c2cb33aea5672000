//! The Databases page: the account's databases per project (slug and name, size, whether
//! the data API is on, created, expiry), the account's figures beside its quotas (all its
//! projects, marked near from 80 %), with a form that creates one, and a database's
//! detail: the SQL box (run as the database's owner; the last statement's result as a table,
//! or PostgreSQL's refusal with its SQLSTATE, the SQL kept in the box), the data API's
//! switch, its keys (shown only on the answer to a post, never on a page a GET can fetch
//! again), its end users while the data API is on (the count, the newest 50 with when they
//! signed up and last signed in, each with a delete), and delete. Each action goes through
//! the database service, as the API's routes do. On a server with no cluster the page
//! says what the operator must set, and offers nothing.

pub(crate) mod view;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use quire_databases::{DatabaseError, NewDatabase};
use quire_kernel::{DatabaseId, Principal};

use quire_edge::ApiError;
use quire_edge::AppState;

use crate::databases::view::{DatabaseRow, Keys, ResultTable, SqlBox, UserList};
use crate::shared::guards::{Owner, Posted, Unparsed};
use crate::shared::nav::{Who, project_slugs, section};
use crate::shared::quota_view::{self, QuotaFigure};
use crate::shared::render::{page, refusal_status, see_other};
use crate::shared::session::query;
use crate::shared::when::expiry_field;

/// The longest form the SQL box may post: the service's 1 MiB of SQL, form-encoded (up to
/// three bytes for one), and the other fields.
pub(crate) const SQL_FORM_LIMIT: usize = 3 * quire_databases::service::MAX_SQL_BYTES + 4096;

/// Most end users the detail lists (the newest).
const USERS_SHOWN: u32 = 50;

#[derive(Template)]
#[template(path = "databases.html")]
struct DatabasesPage<'a> {
    signed_in_as: Option<Who>,
    /// `None` when the server has a cluster; else what the operator must set.
    unavailable: Option<String>,
    error: Option<String>,
    projects: Vec<String>,
    project: &'a str,
    databases: Vec<DatabaseRow>,
    /// The account's databases and their bytes beside its quotas, when they could be read.
    quota: Option<AccountQuota>,
    /// The create form as it was posted, when it is shown again with a refusal.
    typed: DatabaseFields,
}

/// The account's database quotas, worded.
struct AccountQuota {
    databases: QuotaFigure,
    bytes: QuotaFigure,
}

#[derive(Template)]
#[template(path = "database_detail.html")]
struct DetailPage {
    signed_in_as: Option<Who>,
    error: Option<String>,
    d: DatabaseRow,
    sql: SqlBox,
    keys: Option<Keys>,
    users: Users,
}

/// The Users section: the list when the data API is on and its instance answered (`None`
/// with the data API on: they could not be read now), and what came of a deletion.
#[derive(Default)]
struct Users {
    list: Option<UserList>,
    notice: Option<String>,
    error: Option<String>,
}

/// The create form and the detail's forms; a field a form lacks is empty.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct DatabaseFields {
    action: String,
    slug: String,
    name: String,
    project: String,
    expires_at: String,
    sql: String,
    confirm: String,
    /// The end user a `delete_user` deletes.
    user: String,
}

fn optional(raw: &str) -> Option<String> {
    let raw = raw.trim();
    (!raw.is_empty()).then(|| raw.to_owned())
}

/// What the operator must set, as the service words it.
fn unavailable_text() -> String {
    DatabaseError::Unavailable.to_string()
}

async fn list_page(
    state: &AppState,
    req: &HttpRequest,
    account: &quire_accounts::Account,
    principal: &Principal,
    shown: (StatusCode, Option<String>),
    typed: DatabaseFields,
) -> Result<HttpResponse, ApiError> {
    let who = Who::of(account, section::DATABASES);
    if !state.databases.available() {
        return unavailable_page(state, who, shown.0);
    }
    let q = query(req);
    let projects = project_slugs(state, principal).await?;
    let now = state.links.now();
    let (mut status, mut error) = shown;
    let (project, rows) = match state
        .databases
        .list(principal, q.get("project").map(String::as_str))
        .await
    {
        Ok((views, slug)) => (
            slug.as_str().to_owned(),
            views
                .into_iter()
                .map(|v| DatabaseRow::new(v, now))
                .collect(),
        ),
        Err(DatabaseError::Infra(e)) => return Err(e.into()),
        Err(e) => {
            status = refusal_status(&e);
            error = Some(e.to_string());
            (String::new(), Vec::new())
        }
    };
    // The figures are the account's, whatever the project; a page without them still lists.
    let quota = match state.databases.usage(principal, Some(&project)).await {
        Ok(u) => Some(AccountQuota {
            databases: quota_view::count(u.databases),
            bytes: quota_view::bytes(u.bytes),
        }),
        Err(_) => None,
    };
    page(
        state,
        status,
        &DatabasesPage {
            signed_in_as: who,
            unavailable: None,
            error,
            projects,
            project: &project,
            databases: rows,
            quota,
            typed,
        },
    )
}

/// The page of a server with no cluster: what the operator must set, and no form.
fn unavailable_page(
    state: &AppState,
    who: Option<Who>,
    status: StatusCode,
) -> Result<HttpResponse, ApiError> {
    page(
        state,
        status,
        &DatabasesPage {
            signed_in_as: who,
            unavailable: Some(unavailable_text()),
            error: None,
            projects: Vec::new(),
            project: "",
            databases: Vec::new(),
            quota: None,
            typed: DatabaseFields::default(),
        },
    )
}

/// `GET /account/databases?project=`.
pub async fn databases(
    state: web::Data<AppState>,
    req: HttpRequest,
    Owner { account, principal }: Owner,
) -> Result<HttpResponse, ApiError> {
    let shown = (StatusCode::OK, None);
    list_page(
        &state,
        &req,
        &account,
        &principal,
        shown,
        DatabaseFields::default(),
    )
    .await
}

/// `POST /account/databases`: create a database; on success, its detail.
pub async fn create_database(
    state: web::Data<AppState>,
    req: HttpRequest,
    Posted(f, Owner { account, principal }): Posted<DatabaseFields, Owner>,
) -> Result<HttpResponse, ApiError> {
    let made = state
        .databases
        .create(
            &principal,
            NewDatabase {
                slug: f.slug.trim().to_owned(),
                name: optional(&f.name),
                project: optional(&f.project),
                expires_at: optional(&f.expires_at).map(|raw| expiry_field(&raw).unwrap_or(raw)),
            },
        )
        .await;
    match made {
        Ok(view) => Ok(see_other(&format!(
            "/account/databases/{}",
            view.database.id.0
        ))),
        Err(DatabaseError::Infra(e)) => Err(e.into()),
        Err(e) => {
            let shown = (refusal_status(&e), Some(e.to_string()));
            list_page(&state, &req, &account, &principal, shown, f).await
        }
    }
}

fn database_id(raw: &str) -> Result<DatabaseId, ApiError> {
    uuid::Uuid::parse_str(raw)
        .map(DatabaseId)
        .map_err(|_| ApiError::from(DatabaseError::NotFound))
}

/// What the detail shows beside the database: a refusal, the SQL box, the keys, what a
/// user's deletion came to.
struct Shown {
    status: StatusCode,
    error: Option<String>,
    sql: SqlBox,
    keys: Option<Keys>,
    users_notice: Option<String>,
    users_error: Option<String>,
}

impl Shown {
    fn plain() -> Self {
        Self {
            status: StatusCode::OK,
            error: None,
            sql: SqlBox::default(),
            keys: None,
            users_notice: None,
            users_error: None,
        }
    }

    /// A refusal shown on the page; a failure of the infrastructure is the error answer
    /// instead, its cause logged and never shown.
    fn refused(e: DatabaseError) -> Result<Self, ApiError> {
        match e {
            DatabaseError::Infra(e) => Err(e.into()),
            e => Ok(Self {
                status: refusal_status(&e),
                error: Some(e.to_string()),
                ..Self::plain()
            }),
        }
    }
}

async fn detail_page(
    state: &AppState,
    principal: &Principal,
    handle: &str,
    id: DatabaseId,
    shown: Shown,
) -> Result<HttpResponse, ApiError> {
    let who = Who::acting(principal, handle, section::DATABASES);
    if !state.databases.available() {
        return unavailable_page(state, who, StatusCode::SERVICE_UNAVAILABLE);
    }
    let view = state
        .databases
        .get(principal, id)
        .await
        .map_err(ApiError::from)?;
    let now = state.links.now();
    let mut users = Users {
        notice: shown.users_notice,
        error: shown.users_error,
        ..Users::default()
    };
    if view.database.data_api_enabled {
        match state.databases.end_users(principal, id, USERS_SHOWN).await {
            Ok(listed) => users.list = Some(UserList::new(listed, now)),
            // The rest of the page stands without them: said in the section, the cause logged.
            Err(e) => {
                tracing::warn!(database = %id.0, error = %e, "users of a database not read");
            }
        }
    }
    page(
        state,
        shown.status,
        &DetailPage {
            signed_in_as: who,
            error: shown.error,
            d: DatabaseRow::new(view, now),
            sql: shown.sql,
            keys: shown.keys,
            users,
        },
    )
}

/// `GET /account/databases/{id}`: never the keys.
pub async fn database_detail(
    state: web::Data<AppState>,
    id: web::Path<String>,
    Owner { account, principal }: Owner,
) -> Result<HttpResponse, ApiError> {
    let id = database_id(&id)?;
    detail_page(
        &state,
        &principal,
        account.handle.as_str(),
        id,
        Shown::plain(),
    )
    .await
}

/// `POST /account/databases/{id}`: `action` is `sql`, `data_api_on`, `data_api_off`,
/// `keys`, `delete_user` (of `user`, confirmed) or `delete`.
pub async fn database_action(
    state: web::Data<AppState>,
    id: web::Path<String>,
    Posted(f, Owner { account, principal }): Posted<Unparsed<DatabaseFields>, Owner>,
) -> Result<HttpResponse, ApiError> {
    let id = database_id(&id)?;
    let f = f.parse()?;
    let handle = account.handle.as_str();
    let here = format!("/account/databases/{}", id.0);
    let shown = match f.action.as_str() {
        "sql" => run_sql(&state, &principal, id, f.sql).await?,
        "data_api_on" => match state.databases.enable_data_api(&principal, id).await {
            Ok(_) => return Ok(see_other(&here)),
            Err(e) => Shown::refused(e)?,
        },
        "data_api_off" => match state.databases.disable_data_api(&principal, id).await {
            Ok(()) => return Ok(see_other(&here)),
            Err(e) => Shown::refused(e)?,
        },
        // The one answer that carries the keys: to this post, `no-store` like every page.
        "keys" => match state.databases.secret(&principal, id).await {
            Ok(secret) => Shown {
                keys: Some(Keys::from(secret)),
                ..Shown::plain()
            },
            Err(e) => Shown::refused(e)?,
        },
        "delete_user" => delete_user(&state, &principal, id, &f).await?,
        "delete" if f.confirm == "yes" => {
            let view = state
                .databases
                .get(&principal, id)
                .await
                .map_err(ApiError::from)?;
            state
                .databases
                .delete(&principal, id)
                .await
                .map_err(ApiError::from)?;
            return Ok(see_other(&format!(
                "/account/databases?project={}",
                view.project_slug.as_str()
            )));
        }
        "delete" => Shown::refused(DatabaseError::Invalid(
            "tick \"delete for good\" to delete the database".into(),
        ))?,
        _ => Shown::refused(DatabaseError::Invalid(
            "action must be sql, data_api_on, data_api_off, keys, delete_user or delete".into(),
        ))?,
    };
    detail_page(&state, &principal, handle, id, shown).await
}

/// Deletes the end user the form names, once confirmed; what came of it is said in the
/// Users section.
async fn delete_user(
    state: &AppState,
    principal: &Principal,
    id: DatabaseId,
    f: &DatabaseFields,
) -> Result<Shown, ApiError> {
    let refused = |status: StatusCode, text: &str| Shown {
        status,
        users_error: Some(text.to_owned()),
        ..Shown::plain()
    };
    if f.confirm != "yes" {
        return Ok(refused(
            StatusCode::BAD_REQUEST,
            "tick \"delete for good\" to delete the user",
        ));
    }
    // Not a user's id: no such user (another account's database is not found either, by
    // the page that answers).
    let no_user = "That user does not exist (deleted already?).";
    let Ok(user) = uuid::Uuid::parse_str(f.user.trim()) else {
        return Ok(refused(StatusCode::NOT_FOUND, no_user));
    };
    Ok(
        match state.databases.delete_end_user(principal, id, user).await {
            Ok(()) => {
                tracing::info!(database = %id.0, %user, "end user deleted from the dashboard");
                Shown {
                    users_notice: Some(
                        "The user is deleted with their sessions: they can no longer sign in."
                            .into(),
                    ),
                    ..Shown::plain()
                }
            }
            // The database itself is checked again by the page, which is then not found.
            Err(DatabaseError::NotFound) => refused(StatusCode::NOT_FOUND, no_user),
            Err(DatabaseError::Infra(e)) => return Err(e.into()),
            Err(e) => refused(refusal_status(&e), &e.to_string()),
        },
    )
}

/// Runs the SQL box's SQL: its result, or PostgreSQL's refusal, with the SQL kept.
async fn run_sql(
    state: &AppState,
    principal: &Principal,
    id: DatabaseId,
    sql: String,
) -> Result<Shown, ApiError> {
    let outcome = state.databases.query(principal, id, &sql).await;
    let mut shown = Shown::plain();
    match outcome {
        Ok(o) => shown.sql.result = Some(ResultTable::new(o)),
        Err(DatabaseError::Sql(refusal)) => {
            shown.status = refusal_status(&DatabaseError::Sql(refusal.clone()));
            shown.sql.error = Some(refusal.into());
        }
        Err(e) => shown = Shown::refused(e)?,
    }
    shown.sql.sql = sql;
    Ok(shown)
}
