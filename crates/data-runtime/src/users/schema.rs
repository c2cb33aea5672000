//! The `auth` schema as this adapter reads it: made at start if anything of it is missing,
//! and a user's row in the columns every statement returns.

use quire_databases::{AUTH_SCHEMA_SQL, EndUser};
use quire_kernel::InfraError;
use tokio_postgres::Row;

use super::{Users, infra};

/// What every statement that answers with users returns, in [`user_of`]'s order.
pub(super) const USER_COLUMNS: &str = "id, email, email_confirmed_at, raw_user_meta_data, \
    raw_app_meta_data, created_at, updated_at, last_sign_in_at";

pub(super) fn user_of(row: &Row) -> Result<EndUser, InfraError> {
    let read = |e: tokio_postgres::Error| infra("reading a user", &e);
    Ok(EndUser {
        id: row.try_get(0).map_err(read)?,
        email: row.try_get(1).map_err(read)?,
        email_confirmed_at: row.try_get(2).map_err(read)?,
        user_metadata: row.try_get(3).map_err(read)?,
        app_metadata: row.try_get(4).map_err(read)?,
        created_at: row.try_get(5).map_err(read)?,
        updated_at: row.try_get(6).map_err(read)?,
        last_sign_in_at: row.try_get(7).map_err(read)?,
    })
}

impl Users {
    /// Makes the `auth` schema if the database lacks any of it.
    pub async fn ensure_schema(&self) -> Result<(), InfraError> {
        let mut conn = self.conn().await?;
        let sql = format!("BEGIN;\n{AUTH_SCHEMA_SQL}\nCOMMIT;");
        conn.batch_execute(&sql)
            .await
            .map_err(|e| infra("making the auth schema", &e))?;
        conn.clean();
        Ok(())
    }
}
