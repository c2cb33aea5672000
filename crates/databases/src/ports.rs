//! What the database use cases need from the outside, one concern a file: the records
//! (`records.rs`), the cluster (`cluster.rs`), what the data API needs (`data_api.rs`),
//! the tenant's end users (`users.rs`) and their email (`mail.rs`).

mod cluster;
mod data_api;
mod mail;
mod records;
mod users;

pub use cluster::{Cluster, ClusterError, OpenTable, SqlOutcome, SqlRefusal};
pub use data_api::{
    BACKEND_IDENTITY_SQL, DataApiSignals, QuireKeys, TenantBackend, TenantBackends,
};
pub use mail::{EndUserMail, EndUserMailError, MailSlot};
pub use records::{DatabaseRecords, InsertDatabaseError};
pub use users::{CodeTry, ConfirmationTry, OneTimeHashes, Rotation, TenantUsers, UserWriteError};
