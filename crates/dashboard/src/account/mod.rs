//! The account's own pages and routes: the first run, sign-up, sign-in with the second
//! factor, password reset, activation, the security page, `/api/account…` with the
//! create-key action, and the Keys and Projects pages.

pub(crate) mod activation;
pub(crate) mod api;
pub(crate) mod create_key;
pub(crate) mod first_run;
pub(crate) mod keys;
pub(crate) mod password_reset;
pub(crate) mod projects;
pub(crate) mod security;
pub(crate) mod sign_in;
pub(crate) mod sign_up;
