//! Accounts and what hangs on one: `AccountStore` (`account_store`), `AccountDirectory`
//! (`directory`), dashboard sessions (`sessions`), self-service signup (`signup`), the
//! invitation list and captcha ledger of activation (`activation`), the service's sealed
//! secrets (`secrets`) and the email route's quota (`mail`).

pub(crate) mod account_store;
mod activation;
mod directory;
mod mail;
pub(crate) mod secrets;
mod sessions;
mod signup;
