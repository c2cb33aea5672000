//! `quire-data-runtime`: the databases' data API instances on one replica, the
//! `DataApiRuntime` adapter. An instance is what PostgREST is to a Supabase project: a few
//! connections as the database's authenticator role (a pool of its own, `pool.rs`), the
//! schema cache loaded from the catalog, and a connection that `LISTEN`s for `pgrst`
//! notifications (sent by the DDL event trigger and by `POST …/reload`) and loads the schema
//! again (`instance.rs`). Instances start on the first request that needs them (which waits
//! a little, then hears `Starting`), stop after an idle time or when told, and together hold
//! at most a set number of connections, so the cluster's `max_connections` is safe from a
//! flood of databases (`registry.rs`).
//!
//! Each request is one transaction, sent as one pipeline under one `Sync` (one round trip,
//! one answer; `wire/` speaks the protocol for this, as no client library lets it):
//! `BEGIN`, `SET LOCAL ROLE`, the claims, the plan's statement, `COMMIT`.
//!
//! Each instance also reaches the database's end users (`users.rs`, the `TenantUsers`
//! port) in its `auth` schema, as the database's owner on a pool of two connections; the
//! schema is made when an instance starts and the database lacks it.
//!
//! An adapter: it depends on `quire-databases` (the port), `quire-dataapi` (the schema
//! cache's query and the plans), tokio, tokio-postgres (the owner's connections and the listener) and
//! postgres-protocol (the authenticator's).

mod instance;
mod pool;
mod registry;
mod users;
mod wire;

pub use registry::{Runtime, RuntimeSettings};
