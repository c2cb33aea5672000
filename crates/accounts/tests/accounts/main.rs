//! Accounts: activation, the admin's commands, second factors and sign-in, against the in-memory fakes.
//! One test binary for the crate: each file a module, linked once.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod activation;
mod admin;
mod second_factor;
mod sign_in;
