//! The database service's fakes besides its records (which are the [`crate::MemoryStore`]'s):
//! the PostgreSQL cluster ([`MemoryCluster`], and [`FaultyCluster`] to make any cluster's
//! step go wrong), this replica's data API instances ([`MemoryRuntime`]), a database's end
//! users ([`MemoryUsers`]) and their email ([`MemoryEndUserMail`]), and who a Quire key is
//! as a key service says ([`ServiceKeys`]). The cluster and the users are held to the same
//! contract lists as the real adapters (`quire-store-contract`).

mod cluster;
mod keys;
mod mail;
mod runtime;
mod users;

pub use cluster::{ClusterStep, Fault, FaultyCluster, MemoryCluster};
pub use keys::ServiceKeys;
pub use mail::MemoryEndUserMail;
pub use runtime::{MemoryDataApi, MemoryInstance, MemoryRuntime, Ran, Scripted};
pub use users::MemoryUsers;
