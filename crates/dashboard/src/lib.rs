//! `quire-dashboard`: the dashboard. The first-run setup, sign-up with email verification,
//! password reset, server-rendered sign-in (password, then the second factor), TOTP
//! enrollment, the consent screen of the device login with its decision endpoint, the OAuth
//! authorization endpoint with its consent page and decision endpoint, the activation page
//! and the account's routes under `/api/account`, the create-key action; the Pages, Links,
//! Files, Databases, Keys, Projects and Agents pages (the last: the agents connected through
//! OAuth, and disconnecting one), acting with a master key's scope through the same use
//! cases as the API.
//!
//! Every page works without JavaScript: the one script every page loads (from this origin,
//! under a hashed name) only shows copy buttons; the activation page adds its captcha widget,
//! and the Files page its upload script (a file read as it is sent, with a progress bar,
//! which a form post cannot do): without it that page lists and manages files, and says to
//! upload with the CLI.
//! An account not yet activated reaches the activation and security pages, the device
//! login's consent (so the CLI can sign in to activate) and sign-out; the OAuth consent
//! shows it a screen that says to activate first, with no Approve button. Every form post must
//! come from the dashboard's own origin (`Origin`, or `Referer` when a browser sends no
//! `Origin`), checked against `QUIRE_BASE_URL`; the session cookie is `HttpOnly;
//! SameSite=Lax` (and `Secure` on https); pages forbid framing. What a handler requires (a
//! full session, an activated owner, the platform admin, a same-origin post) is an extractor
//! in its signature, whose refusal is the answer (`shared::guards`).
//!
//! The map, a folder per context:
//! - `account`: first run, sign-up, sign-in, password reset, activation, security,
//!   `/api/account…` and its create-key action, the Keys and Projects pages;
//! - `pages`: the Pages page and a page's detail, a page's row, the visitor's sign-in
//!   hand-off (`/visit`);
//! - `links`: the Links page; `files`: the Files page and its upload;
//! - `databases`: the Databases page and a database's detail;
//! - `oauth`: the OAuth authorization and consent, the device login's consent, the Agents
//!   page;
//! - `admin`: the platform admin's accounts, invitations and OAuth clients;
//! - `shared`: the guards, session helpers, rendering, navigation, times, the views chart,
//!   quota figures, and what the Links and Files pages share (`shared::behind_link`).
//!
//! It depends on `quire-edge`, the application and domain crates, actix-web, askama and
//! utoipa; never on another surface crate (the architecture test says so).

mod account;
mod admin;
mod databases;
mod files;
mod links;
mod oauth;
mod pages;
mod shared;

use actix_web::web;
use quire_edge::body::BodyLimit;
use quire_edge::documented::Documented;
use quire_edge::routing::{resource, to};
use utoipa_actix_web::scope;

use account::activation::{activate_page, asset};
pub(crate) use account::activation::{activation_answer, session_account};
use account::first_run::{setup, setup_form};
use account::keys::{create_app_key, keys, revoke_key};
use account::password_reset::{new_password, new_password_form, request, request_form};
use account::projects::{change_project, create_project, projects};
use account::security::{
    change_password, enroll, new_recovery_codes, security, sign_out_others, turn_off,
};
use account::sign_in::{home, login, login_form, logout, totp, totp_form};
use account::sign_up::{sign_up, sign_up_form, verify, verify_form};
use admin::{
    accounts, change_account, clients, delete_client, invitations, invite, register_client,
    uninvite,
};
use databases::{create_database, database_action, database_detail, databases};
use files::upload::upload;
use files::{Files, files};
use links::{Links, create_link, links};
use oauth::agents::{agents, disconnect};
use oauth::authorize::authorize;
use oauth::consent::consent;
use pages::visit::{visit, visit_confirmed};
use pages::{page_action, page_detail, pages};
use shared::behind_link::{action, detail};

/// One-shot outcome of a decision, read (and cleared) by the consent screen.
const OUTCOME_COOKIE: &str = "quire_consent";
/// Where sign-in and `/` land: the Pages overview.
const HOME: &str = "/account/pages";
const ACTIVATE: &str = "/account/activate";
const ACCOUNT: &str = "/api/account";
const CONSENT: &str = "/authorize-agent";

/// The account's routes under `/api/account` (status, captcha and activation, by master key
/// or session; the create-key form), and the consent screens' decisions: documented with
/// the API, and registered before it (an actix scope answers every path under its prefix).
pub fn register(api: &mut Documented<'_>) {
    api.service(oauth::consent::decision)
        .service(oauth::authorize::decision)
        .service(
            scope(ACCOUNT)
                .service(account::api::status)
                .service(account::api::captcha)
                .service(account::api::activate)
                .service(account::create_key::create_key),
        );
}

/// The dashboard's pages and form posts.
pub fn configure(cfg: &mut web::ServiceConfig) {
    use actix_web::http::Method as M;
    cfg.service(resource(
        "/login",
        [(M::GET, to(login_form)), (M::POST, to(login))],
    ))
    .service(resource(
        "/login/totp",
        [(M::GET, to(totp_form)), (M::POST, to(totp))],
    ))
    .service(resource("/logout", [(M::POST, to(logout))]))
    .service(resource(
        "/setup",
        [(M::GET, to(setup_form)), (M::POST, to(setup))],
    ))
    .service(resource(
        "/signup",
        [(M::GET, to(sign_up_form)), (M::POST, to(sign_up))],
    ))
    .service(resource(
        "/account/verify",
        [(M::GET, to(verify_form)), (M::POST, to(verify))],
    ))
    .service(resource(
        "/account/reset",
        [(M::GET, to(request_form)), (M::POST, to(request))],
    ))
    .service(resource(
        "/account/reset/new",
        [(M::GET, to(new_password_form)), (M::POST, to(new_password))],
    ))
    .service(resource(
        "/account/security",
        [(M::GET, to(security)), (M::POST, to(enroll))],
    ))
    .service(resource("/account/security/off", [(M::POST, to(turn_off))]))
    .service(resource(
        "/account/security/recovery-codes",
        [(M::POST, to(new_recovery_codes))],
    ))
    .service(resource(
        "/account/security/password",
        [(M::POST, to(change_password))],
    ))
    .service(resource(
        "/account/security/sessions",
        [(M::POST, to(sign_out_others))],
    ))
    .service(resource("/account/activate", [(M::GET, to(activate_page))]))
    .service(resource("/admin/accounts", [(M::GET, to(accounts))]))
    .service(resource(
        "/admin/accounts/{id}",
        [(M::POST, to(change_account))],
    ))
    .service(resource(
        "/admin/invitations",
        [(M::GET, to(invitations)), (M::POST, to(invite))],
    ))
    .service(resource(
        "/admin/invitations/remove",
        [(M::POST, to(uninvite))],
    ))
    .service(resource(
        "/admin/oauth-clients",
        [(M::GET, to(clients)), (M::POST, to(register_client))],
    ))
    .service(resource(
        "/admin/oauth-clients/{id}/delete",
        [(M::POST, to(delete_client))],
    ))
    .service(resource("/account/pages", [(M::GET, to(pages))]))
    .service(resource(
        "/account/links",
        [(M::GET, to(links)), (M::POST, to(create_link))],
    ))
    .service(resource(
        "/account/links/{id}",
        [
            (M::GET, to(detail::<Links>)),
            (M::POST, to(action::<Links>)),
        ],
    ))
    .service(resource(
        "/account/files",
        [(M::GET, to(files)), (M::PUT, to(upload))],
    ))
    .service(resource(
        "/account/files/{id}",
        [
            (M::GET, to(detail::<Files>)),
            (M::POST, to(action::<Files>)),
        ],
    ))
    .service(resource(
        "/account/databases",
        [(M::GET, to(databases)), (M::POST, to(create_database))],
    ))
    .service(
        resource(
            "/account/databases/{id}",
            [
                (M::GET, to(database_detail)),
                (M::POST, to(database_action)),
            ],
        )
        // The SQL box posts up to the service's 1 MiB of SQL, form-encoded.
        .app_data(BodyLimit(databases::SQL_FORM_LIMIT)),
    )
    .service(resource("/account/agents", [(M::GET, to(agents))]))
    .service(resource(
        "/account/agents/{client}/disconnect",
        [(M::POST, to(disconnect))],
    ))
    .service(resource(
        "/account/pages/{id}",
        [(M::GET, to(page_detail)), (M::POST, to(page_action))],
    ))
    .service(resource(
        "/account/keys",
        [(M::GET, to(keys)), (M::POST, to(create_app_key))],
    ))
    .service(resource(
        "/account/keys/{id}/revoke",
        [(M::POST, to(revoke_key))],
    ))
    .service(resource(
        "/account/projects",
        [(M::GET, to(projects)), (M::POST, to(create_project))],
    ))
    .service(resource(
        "/account/projects/{id}/{change:rename|status}",
        [(M::POST, to(change_project))],
    ))
    .service(resource("/assets/{asset:.*}", [(M::GET, to(asset))]))
    .service(resource("/authorize-agent", [(M::GET, to(consent))]))
    .service(resource("/oauth/authorize", [(M::GET, to(authorize))]))
    .service(resource(
        "/visit",
        [(M::GET, to(visit)), (M::POST, to(visit_confirmed))],
    ))
    .service(resource("/", [(M::GET, to(home))]));
}
