//! The database service's use cases on the in-memory fakes: data API requests and settings,
//! end users, their mails and the admin API, and quotas.
//! One test binary for the crate: each file a module, linked once.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod auth_admin;
mod auth_mail;
mod auth_sign_in;
mod data_api_settings;
mod end_users;
mod open_tables;
mod quotas;
mod rest_requests;
mod support;
