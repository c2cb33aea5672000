//! The platform admin's pages: accounts (activate, deactivate), the invitation list, and
//! the OAuth client registry. Each goes through the same use cases as the admin commands
//! and the API; anyone but the platform admin gets 403.

mod accounts;
mod clients;
mod invitations;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse};
use quire_accounts::Account;
use quire_kernel::Principal;

use quire_edge::ApiError;
use quire_edge::AppState;

use super::render::{Message, message};
use super::session::{Owner, require_owner};

pub(super) use accounts::{accounts, change_account};
pub(super) use clients::{clients, delete_client, register_client};
pub(super) use invitations::{invitations, invite, uninvite};

/// The platform admin's standing, or the answer for anyone else.
enum Admin {
    Ready(Account, Principal),
    NotYet(HttpResponse),
}

async fn require_admin(state: &AppState, req: &HttpRequest) -> Result<Admin, ApiError> {
    Ok(match require_owner(state, req).await? {
        Owner::NotYet(redirect) => Admin::NotYet(redirect),
        Owner::Ready(account, principal) if account.is_platform_admin => {
            Admin::Ready(account, principal)
        }
        Owner::Ready(..) => Admin::NotYet(message(
            state,
            StatusCode::FORBIDDEN,
            &Message {
                title: "For the platform admin",
                text: "Only the platform admin account manages this server's accounts, \
                       invitations and OAuth clients.",
                tone: "error",
                link: Some(("/account/pages", "Back to your pages")),
            },
        )?),
    })
}
