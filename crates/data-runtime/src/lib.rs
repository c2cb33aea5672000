//! `quire-data-runtime`: the databases' data API instances on one replica, the
//! `DataApiRuntime` adapter. An instance is what PostgREST is to a Supabase project: a few
//! connections as the database's authenticator role (a pool of its own, `pool.rs`), the
//! schema cache loaded from the catalog, and a connection that `LISTEN`s for `pgrst`
//! notifications (sent by the DDL event trigger and by `POST …/reload`) and loads the schema
//! again (`instance.rs`). Instances start on the first request that needs them (which waits
//! a little, then hears `Starting`), stop after an idle time or when told, and together hold
//! at most a set number of connections, so the cluster's `max_connections` is safe from a
//! flood of databases (`registry.rs`), of which one account's hold at most its share
//! (`cap.rs`): at a limit, idle connections and idle instances make room, least recently
//! used first, and when all are busy the request hears `AccountBusy` or `Saturated`. The
//! listener reads every notification at once and coalesces them: at most one schema load a
//! second, and one after the last of a burst (`listen.rs`). A request naming what the cache
//! lacks asks the catalog whether names of that kind changed since the load, and loads only
//! when they did (`catalog.rs`), so it finds what the DDL just made without waiting for the
//! notification. What it all holds and does is counted through the `metrics` facade
//! (`meter.rs`).
//!
//! Each request is one transaction, sent as one pipeline under one `Sync` (one round trip, one
//! answer; `wire/` speaks the protocol for this: tokio-postgres ends each statement with a
//! `Sync`, and the one Rust client that could do otherwise measured no faster, see
//! `docs/decisions/database-service.md`). A read is two statements, the role, timeout, claims,
//! `search_path` and read-only mode in one `set_config` statement ([`READ_SETUP`]) and the
//! plan's, in the transaction the `Sync` ends; a write is `BEGIN`, the same settings, the
//! plan's statement, then `COMMIT` or `ROLLBACK` by the answer that the request's use case
//! makes of its row (its `respond`, handed to each run, so the answer is made once)
//! (`request.rs`). The wire client
//! is public for the benchmark that measures this shape without HTTP (`quire-bench`'s
//! `data_api`).
//!
//! No request's backend outlives it by more than a few seconds, whatever the tenant's
//! function does: each request has a deadline on Quire's side, its role's timeout and a
//! margin (`deadline.rs`), and a connection let go of before the server answered (that
//! deadline, or the request dropped because its client went away) has its backend
//! cancelled and then terminated through the `TenantBackends` port, holding its place
//! under the cap until the backend is gone (`abandon.rs`). A stop counts too: a request
//! whose record was read before its database's last stop (a rotation) starts nothing.
//!
//! Each instance also reaches the database's end users (`users.rs`, the `TenantUsers`
//! port) in its `auth` schema, as the database's owner on a pool of two connections; the
//! schema is made when an instance starts and the database lacks it.
//!
//! An adapter: it depends on `quire-databases` (the ports), `quire-dataapi` (the schema
//! cache's query and the plans), tokio, tokio-postgres (the owner's connections and the listener),
//! postgres-protocol (the authenticator's) and metrics.

mod abandon;
mod cap;
mod catalog;
mod deadline;
mod instance;
mod listen;
mod meter;
mod pool;
mod registry;
mod request;
mod users;
mod wire;

pub use meter::Figures;
pub use registry::{Runtime, RuntimeSettings};
pub use request::READ_SETUP;
pub use wire::{Answer, DbError, Row, Step, Wire, WireError};
