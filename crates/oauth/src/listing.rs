//! One page of the client registry's list, for the platform admin's master keys: oldest
//! first, ties broken by client id, read by keyset (list tag [`OAUTH_CLIENTS_LIST`]).

use quire_kernel::{CursorKey, Paged, Paging, Principal};
use time::OffsetDateTime;

use crate::model::OAuthClient;
use crate::service::{ClientError, ClientService, admin_only};

/// The list tag of the live OAuth clients in cursors ([`ClientService::list_page`]).
pub const OAUTH_CLIENTS_LIST: &str = "oauth-clients";

/// A position in the list of live clients: a creation time (to the microsecond, as both
/// databases store it) and the client id, which breaks ties.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClientKey {
    pub at: OffsetDateTime,
    pub id: String,
}

impl ClientKey {
    /// The position of `client` in the list.
    #[must_use]
    pub fn of(client: &OAuthClient) -> Self {
        Self {
            at: client.created_at,
            id: client.id.as_str().to_owned(),
        }
    }
}

impl CursorKey for ClientKey {
    fn write(&self) -> String {
        let micros = self.at.unix_timestamp_nanos() / 1000;
        format!("{micros}.{}", self.id)
    }

    fn read(text: &str) -> Option<Self> {
        let (micros, id) = text.split_once('.')?;
        let micros: i128 = micros.parse().ok()?;
        let at = OffsetDateTime::from_unix_timestamp_nanos(micros.checked_mul(1000)?).ok()?;
        (!id.is_empty()).then(|| Self {
            at,
            id: id.to_owned(),
        })
    }
}

impl ClientService {
    /// One page of [`ClientService::list`], oldest first (list tag [`OAUTH_CLIENTS_LIST`]).
    ///
    /// # Errors
    /// As [`ClientService::list`].
    pub async fn list_page(
        &self,
        principal: &Principal,
        paging: &Paging<ClientKey>,
    ) -> Result<Paged<OAuthClient>, ClientError> {
        admin_only(principal)?;
        let clients = self
            .store
            .live_clients_after(paging.after.as_ref(), paging.fetch())
            .await?;
        Ok(Paged::from_fetched(
            OAUTH_CLIENTS_LIST,
            paging,
            clients,
            ClientKey::of,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quire_kernel::PagingError;
    use quire_kernel::paging::{decode_cursor, encode_cursor};

    #[test]
    fn a_client_cursor_reads_back_on_its_own_list_only() {
        let key = ClientKey {
            at: OffsetDateTime::from_unix_timestamp_nanos(1_700_000_000_123_456_000).unwrap(),
            id: "qc_abc.def".into(),
        };
        let c = encode_cursor(OAUTH_CLIENTS_LIST, &key);
        assert_eq!(decode_cursor::<ClientKey>(OAUTH_CLIENTS_LIST, &c), Ok(key));
        assert_eq!(
            decode_cursor::<ClientKey>("keys", &c),
            Err(PagingError::InvalidCursor)
        );
        let empty_id = encode_cursor(OAUTH_CLIENTS_LIST, &quire_kernel::NameKey("5.".into()));
        assert_eq!(
            decode_cursor::<ClientKey>(OAUTH_CLIENTS_LIST, &empty_id),
            Err(PagingError::InvalidCursor)
        );
    }
}
