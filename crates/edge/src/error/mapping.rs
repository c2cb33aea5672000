//! Each domain error to its code, once, a file per domain; the codes' statuses live only
//! in the kernel's table.

mod accounts;
mod databases;
mod keys;
mod links;
mod oauth;
mod objects;
mod pages;
mod projects;

use quire_kernel::{ErrorCode, PagingError};
use serde_json::Value;

use super::{ApiError, worded};

/// A list's `limit` or `cursor` (`quire_kernel::paging`).
impl From<PagingError> for ApiError {
    fn from(e: PagingError) -> Self {
        let code = match e {
            PagingError::InvalidLimit => ErrorCode::InvalidLimit,
            PagingError::InvalidCursor => ErrorCode::InvalidCursor,
        };
        worded(code, &e)
    }
}

/// A quota's refusal: which (`limit`, as the size limits name theirs), the account's use
/// and the quota, as figures.
fn quota(code: ErrorCode, e: &dyn std::error::Error, which: &str, used: u64, of: u64) -> ApiError {
    worded(code, e)
        .with_field("limit", Value::from(which))
        .with_field("used", Value::from(used))
        .with_field("quota", Value::from(of))
}

#[cfg(test)]
mod tests {
    use quire_accounts::{ActivationError, RequestProblem};
    use quire_device_auth::{PollError, StartError};
    use quire_keys::{AuthError, ListKeysError, MintError, RevokeError};
    use quire_oauth::ClientError;
    use quire_pages::PageError;
    use quire_projects::{
        AddressError, AssignError, DeleteProjectError, GetProjectError, GrantError,
        ListProjectsError, WriteProjectError,
    };

    use crate::error::ApiError;

    /// The message a client reads is the domain error's own text, whatever the code.
    #[test]
    fn domain_errors_answer_in_their_own_words() {
        fn same<E: std::fmt::Display>(e: E) -> bool
        where
            ApiError: From<E>,
        {
            let text = e.to_string();
            ApiError::from(e).message() == text
        }
        assert!(same(AuthError::InvalidApiKey));
        assert!(same(AuthError::InvalidToken("malformed bearer token")));
        assert!(same(AddressError::InsufficientScope));
        assert!(same(ListProjectsError::InsufficientScope));
        assert!(same(GetProjectError::NotFound));
        assert!(same(WriteProjectError::SlugTaken));
        assert!(same(WriteProjectError::InvalidSlug(
            "slug is too long".into()
        )));
        assert!(same(DeleteProjectError::ConfirmMismatch));
        assert!(same(DeleteProjectError::NotEmpty));
        assert!(same(AssignError::NotFound));
        assert!(same(GrantError::InsufficientScope));
        assert!(same(MintError::InvalidProject("not a uuid".into())));
        assert!(same(MintError::ProjectNotOwned));
        assert!(same(ListKeysError::InsufficientScope));
        assert!(same(RevokeError::CurrentKey));
        assert!(same(PageError::PasswordRequired));
        assert!(same(PageError::StorageCleanupFailed));
        assert!(same(PollError::SlowDown { interval: 8 }));
        assert!(same(StartError::RateLimited));
        assert!(same(ClientError::Forbidden));
        assert!(same(ActivationError::NotEligible));
        assert!(same(ActivationError::RateLimited {
            retry_after_secs: 900
        }));
        assert!(same(ClientError::Invalid(
            "redirect_uris[0] must not have a fragment".into()
        )));
    }

    #[test]
    fn activation_refusals_carry_their_codes_and_retry_after() {
        use actix_web::ResponseError as _;
        let limited = ApiError::from(ActivationError::RateLimited {
            retry_after_secs: 900,
        });
        let response = limited.error_response();
        assert_eq!(response.status().as_u16(), 429);
        assert_eq!(
            response
                .headers()
                .get("retry-after")
                .unwrap()
                .to_str()
                .unwrap(),
            "900"
        );
        for (e, code) in [
            (ActivationError::AlreadyActivated, "already_activated"),
            (ActivationError::NotEligible, "not_eligible"),
            (
                ActivationError::InvalidBody(RequestProblem::NotJson("x".into())),
                "invalid_json",
            ),
            (
                ActivationError::InvalidBody(RequestProblem::Fields("x".into())),
                "invalid_body",
            ),
        ] {
            assert_eq!(ApiError::from(e).code(), code);
        }
    }
}
