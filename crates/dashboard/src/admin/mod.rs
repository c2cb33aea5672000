//! The platform admin's pages: accounts (activate, deactivate), the invitation list, and
//! the OAuth client registry. Each goes through the same use cases as the admin commands
//! and the API; anyone but the platform admin gets 403.

mod accounts;
mod clients;
mod invitations;

use actix_web::HttpRequest;
use actix_web::http::StatusCode;
use quire_accounts::Account;
use quire_kernel::Principal;

use quire_edge::AppState;

use crate::shared::guards::{Guard, Owner, Refusal, extractor};
use crate::shared::render::{Message, message};

pub(super) use accounts::{accounts, change_account};
pub(super) use clients::{clients, delete_client, register_client};
pub(super) use invitations::{invitations, invite, uninvite};

/// The platform admin, acting with the dashboard principal. Anyone else gets the [`Owner`]
/// redirects, and an owner who is not the admin a 403 page saying whose pages these are.
#[derive(Debug)]
pub(crate) struct Admin {
    account: Account,
    principal: Principal,
}

impl Guard for Admin {
    async fn check(state: &AppState, req: &HttpRequest) -> Result<Self, Refusal> {
        let Owner { account, principal } = Owner::check(state, req).await?;
        if account.is_platform_admin {
            return Ok(Admin { account, principal });
        }
        Err(message(
            state,
            StatusCode::FORBIDDEN,
            &Message {
                title: "For the platform admin",
                text: "Only the platform admin account manages this server's accounts, \
                       invitations and OAuth clients.",
                tone: "error",
                link: Some(("/account/pages", "Back to your pages")),
            },
        )?
        .into())
    }
}

extractor!(Admin);
