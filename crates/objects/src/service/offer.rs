//! Upload URLs: a new object whose fields and policy are settled (and checked) now, and
//! whose bytes come later, once, from whoever holds the URL: an agent's shell running
//! `curl -T`, so the bytes never pass through the model.
//!
//! Nothing new is stored for them. The URL's token is 32 random bytes; the object's id is
//! made from the token's SHA-256, so the database holds only a hash of it, and the token
//! finds its record by primary key. Until the bytes come, the object is a pending record
//! (invisible to every read) whose lease is the URL's expiry, holding in `size_bytes` the
//! URL's cap, with its short link (policy, password hash, alias) already stored: the slug
//! and alias are taken now, so the upload cannot fail on them later, and a URL never used
//! is a dead upload the janitor removes like any other. Single use is the rate limiter's:
//! every use of one URL is one hit of a limit of one, counted in the window of its expiry,
//! so a replay or a second concurrent use is refused on any replica sharing the database.

use std::time::Duration;

use quire_kernel::secret::{OpaqueToken, TokenPurpose, sha256_hex};
use quire_kernel::{InfraError, ObjectId, Principal};
use time::OffsetDateTime;

use super::write::Reserve;
use super::{NewObject, ObjectError, ObjectService, ObjectView};
use crate::upload::{Purpose, Upload};

/// How long an upload URL can be used.
pub const UPLOAD_URL_TTL: Duration = Duration::from_secs(15 * 60);

/// The limiter's bucket counting each URL's uses.
const UPLOAD_URL_BUCKET: &str = "object_upload_url";

/// The secret of an upload URL.
#[derive(Debug, Clone, Copy)]
pub enum UploadUrl {}

impl TokenPurpose for UploadUrl {
    const NAME: &'static str = "UploadUrl";
}

/// An upload URL's secret and the object it will make.
#[derive(Debug, Clone)]
pub struct UploadOffer {
    /// Goes to the caller once; stored only as the object's id.
    pub token: OpaqueToken<UploadUrl>,
    /// The object as it will be served (its size is 0 until the bytes come).
    pub view: ObjectView,
    /// Most bytes the URL takes.
    pub max_bytes: u64,
    pub expires_at: OffsetDateTime,
}

/// The object id an upload URL's token stands for: the first 122 bits of its SHA-256 (as a
/// version 4 UUID). Knowing the id does not give the token.
fn offered_id(token: &str) -> ObjectId {
    let digest = sha256_hex(token.as_bytes());
    let high = u128::from_str_radix(&digest[..32], 16).unwrap_or_default();
    ObjectId(uuid::Builder::from_random_bytes(high.to_be_bytes()).into_uuid())
}

/// What [`quire_kernel::secret::random_url_token`] makes: 43 characters of base64url. Any
/// other text is no token, refused before the database is asked.
fn well_formed(token: &str) -> bool {
    token.len() == 43
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

impl ObjectService {
    /// Checks a new object's fields and policy as [`ObjectService::begin`] does, stores its
    /// pending record and its link, and gives the token of a URL that takes its bytes once,
    /// within [`UPLOAD_URL_TTL`], at most `max_bytes` of them (default and ceiling: the
    /// server's cap).
    ///
    /// # Errors
    /// `Invalid` (also `max_bytes` out of range), `InsufficientScope`, `PasswordRequired`,
    /// `SlugConflict`, `AliasConflict`, `StorageQuotaExceeded` (the account's objects hold
    /// their quota already), `PublicIdExhausted`, `ProfileHandleMissing`, `Infra`; nothing
    /// is stored on error.
    pub async fn offer_upload(
        &self,
        principal: &Principal,
        req: NewObject,
        max_bytes: Option<u64>,
    ) -> Result<UploadOffer, ObjectError> {
        let ceiling = self.config.max_bytes;
        let max_bytes = match max_bytes {
            None => ceiling,
            Some(n) if (1..=ceiling).contains(&n) => n,
            Some(_) => {
                return Err(ObjectError::Invalid(format!(
                    "maxBytes must be from 1 to {ceiling}"
                )));
            }
        };
        let token = OpaqueToken::<UploadUrl>::generate();
        let expires_at = self.ports.clock.now()
            + time::Duration::try_from(UPLOAD_URL_TTL).unwrap_or(time::Duration::minutes(15));
        let reserve = Reserve {
            id: offered_id(token.expose()),
            lease_until: expires_at,
            size_bytes: max_bytes,
        };
        let req = NewObject {
            declared_size: None,
            ..req
        };
        let new = self.prepare(principal, req, None, reserve).await?;
        // The alias was free when checked; a URL that lost it since is refused now, not
        // at its upload.
        if let Err(e) = self.ports.links.insert_link(&new.link).await {
            let _ = self.ports.records.delete_object(new.object.id).await;
            return Err(e.into());
        }
        self.ports.changes.link_changed(new.link.id);
        let mut object = new.object;
        object.size_bytes = 0;
        Ok(UploadOffer {
            token,
            view: self.view(object, new.link, &new.handle, new.project),
            max_bytes,
            expires_at,
        })
    }

    /// Whether an upload URL's token may still be taken, read only: nothing is spent or
    /// stored, so a caller asks this before it gives the upload room (an unknown token
    /// then costs no room in anything shared).
    ///
    /// # Errors
    /// `UploadUrlUnknown`, `UploadUrlUsed`, `UploadUrlExpired`, as
    /// [`ObjectService::accept_offer`] would answer them, `Infra`.
    pub async fn check_offer(&self, token: &str) -> Result<(), ObjectError> {
        if !well_formed(token) {
            return Err(ObjectError::UploadUrlUnknown);
        }
        let id = offered_id(token);
        let records = &self.ports.records;
        match records.pending_object(id).await? {
            Some((_, lease_until)) if self.ports.clock.now() >= lease_until => {
                Err(ObjectError::UploadUrlExpired)
            }
            Some(_) => Ok(()),
            None if records.object(id).await?.is_some() => Err(ObjectError::UploadUrlUsed),
            None => Err(ObjectError::UploadUrlUnknown),
        }
    }

    /// Takes an upload URL's token and begins its upload: the bytes follow through the
    /// returned [`Upload`], capped at the URL's `max_bytes`. The URL is spent by this call,
    /// whatever happens next. `declared_size` is the body's declared length: over the cap,
    /// the offer is removed and nothing is stored.
    ///
    /// # Errors
    /// `UploadUrlUnknown` (no such URL: never issued, or cleared after it expired or its
    /// upload failed), `UploadUrlUsed`, `UploadUrlExpired`, `TooLarge`,
    /// `StorageQuotaExceeded` (the declared size, or any byte, would pass the account's
    /// quota: the offer is removed), `Infra`.
    pub async fn accept_offer(
        &self,
        token: &str,
        declared_size: Option<u64>,
    ) -> Result<Upload, ObjectError> {
        if !well_formed(token) {
            return Err(ObjectError::UploadUrlUnknown);
        }
        let id = offered_id(token);
        let records = &self.ports.records;
        let Some((mut object, lease_until)) = records.pending_object(id).await? else {
            return Err(if records.object(id).await?.is_some() {
                ObjectError::UploadUrlUsed
            } else {
                ObjectError::UploadUrlUnknown
            });
        };
        // Every use of one URL is counted at the same instant (its first expiry, from the
        // record's creation, which no upload changes), so a replay lands in the window of
        // the first use on any replica.
        let first_expiry = object.created_at
            + time::Duration::try_from(UPLOAD_URL_TTL).unwrap_or(time::Duration::minutes(15));
        let first_use = self
            .ports
            .limiter
            .hit(
                UPLOAD_URL_BUCKET,
                &sha256_hex(token.as_bytes()),
                UPLOAD_URL_TTL,
                1,
                first_expiry,
            )
            .await?;
        if !first_use {
            return Err(ObjectError::UploadUrlUsed);
        }
        let now = self.ports.clock.now();
        if now >= lease_until {
            return Err(ObjectError::UploadUrlExpired);
        }
        let limit = object.size_bytes;
        if declared_size.is_some_and(|size| size > limit) {
            self.reclaim(id).await;
            self.ports.changes.link_changed(object.link_id());
            return Err(ObjectError::TooLarge { limit });
        }
        let quota = self.usage_of(object.account_id).await?;
        if let Err(refused) = Self::check_room(quota, declared_size) {
            self.reclaim(id).await;
            self.ports.changes.link_changed(object.link_id());
            return Err(refused);
        }
        // From now on the lease is the upload's, renewed as its bytes arrive.
        if !records.renew_lease(id, self.lease_end()).await? {
            return Err(ObjectError::UploadUrlUnknown);
        }
        let link = match self.ports.links.link(object.link_id()).await? {
            Some(link) => link,
            None => {
                self.reclaim(id).await;
                return Err(InfraError::new("an upload URL's link is missing").into());
            }
        };
        let handle = self.owner(object.account_id).await?;
        let project = self
            .ports
            .projects
            .project_by_id(object.project_id)
            .await?
            .ok_or_else(|| InfraError::new("an upload URL's project is missing"))?;
        let sink = match self.ports.bytes.start(id, &object.blob).await {
            Ok(sink) => sink,
            Err(e) => {
                self.reclaim(id).await;
                return Err(e.into());
            }
        };
        object.size_bytes = 0;
        Ok(Upload {
            service: self.clone(),
            object,
            link,
            handle,
            project: project.slug,
            purpose: Purpose::Offered,
            sink: Some(sink),
            hasher: quire_kernel::secret::Sha256Running::default(),
            size: 0,
            limit,
            quota,
            renew_at: self.renew_point(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_a_v4_uuid_of_the_hash_and_only_tokens_are_well_formed() {
        let token = quire_kernel::secret::random_url_token();
        assert!(well_formed(&token));
        let id = offered_id(&token);
        assert_eq!(id, offered_id(&token));
        assert_eq!(id.0.get_version_num(), 4);
        assert_ne!(id, offered_id(&format!("{}x", &token[..42])));
        assert!(!well_formed(&token[..42]));
        assert!(!well_formed(&format!("{}/", &token[..42])));
        assert!(!well_formed(""));
    }
}
