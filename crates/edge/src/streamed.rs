//! A streamed body's place among the bodies in flight ([`crate::in_flight`]). An object
//! upload goes to storage as it arrives and is never held whole, yet it counts as the other
//! long bodies do, and is refused as they are (429 past the credential's share, 503 past the
//! server's bound, both with `Retry-After`), so one credential cannot send any number at once.
//!
//! A body that declares its length is counted by it, before a byte is read, if it is long
//! (1 MiB or more, as for the other bodies), but never by more than one credential's share:
//! what it holds in memory is a piece at a time, so a share is what it takes from the bound,
//! one upload of any size per credential, or several smaller ones. A body of unknown length
//! (chunked) is counted by what has arrived, in steps of 1 MiB once it is long, up to the
//! same share, and refused as soon as a step would pass the bound: reserving the largest it
//! may grow to (the object cap) would let one such upload shut out every other long body.

use actix_web::{HttpRequest, http::header, web};

use crate::body::{MAPPED_BODY, busy};
use crate::error::ApiError;
use crate::in_flight::{BodiesInFlight, BodyBytes};

/// Bodies at least this long are counted; what arrives is counted in steps of this.
const LONG: u64 = MAPPED_BODY as u64;

/// A streamed body's place among the bodies in flight, held until it is dropped.
#[derive(Debug)]
pub struct StreamedBody {
    /// `None`: not counted (a short body, or an app with no bound).
    place: Option<BodyBytes>,
    /// Whether what arrives is counted (the length was not declared).
    by_arrival: bool,
    arrived: u64,
    /// The most the place holds: one credential's share.
    most: u64,
}

impl StreamedBody {
    /// Takes a place for the body of `req`, sent with `credential` (what tells one client's
    /// bodies from another's: the `Authorization` header, or an upload URL's token).
    ///
    /// # Errors
    /// `429 rate_limited` or `503 server_busy` (with `Retry-After`) when a declared long body
    /// does not fit.
    pub fn admit(req: &HttpRequest, credential: Option<&[u8]>) -> Result<Self, ApiError> {
        let declared = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        let bound = req
            .app_data::<web::Data<BodiesInFlight>>()
            .map(|b| b.clone().into_inner());
        let (Some(bound), false) = (bound, declared.is_some_and(|n| n < LONG)) else {
            return Ok(Self {
                place: None,
                by_arrival: false,
                arrived: 0,
                most: 0,
            });
        };
        let most = bound.share();
        let mut place = bound.place(credential);
        if let Some(length) = declared {
            place.grow(length.min(most)).map_err(busy)?;
        }
        Ok(Self {
            place: Some(place),
            by_arrival: declared.is_none(),
            arrived: 0,
            most,
        })
    }

    /// Counts `bytes` more that arrived.
    ///
    /// # Errors
    /// `429 rate_limited` or `503 server_busy` (with `Retry-After`) when a body of unknown
    /// length grows past what the bound leaves it.
    pub fn arrived(&mut self, bytes: usize) -> Result<(), ApiError> {
        let Some(place) = self.place.as_mut().filter(|_| self.by_arrival) else {
            return Ok(());
        };
        self.arrived = self.arrived.saturating_add(bytes as u64);
        if self.arrived < LONG {
            return Ok(());
        }
        let wanted = self
            .arrived
            .div_ceil(LONG)
            .saturating_mul(LONG)
            .min(self.most);
        if wanted > place.bytes() {
            place.grow(wanted - place.bytes()).map_err(busy)?;
        }
        Ok(())
    }

    /// Bytes this body holds among the bodies in flight.
    #[must_use]
    pub fn held(&self) -> u64 {
        self.place.as_ref().map_or(0, BodyBytes::bytes)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use actix_web::test::TestRequest;

    use super::*;

    const MIB: u64 = 1 << 20;

    fn request(bound: &web::Data<BodiesInFlight>, length: Option<u64>) -> HttpRequest {
        let mut req = TestRequest::put().app_data(bound.clone());
        if let Some(n) = length {
            req = req.insert_header((header::CONTENT_LENGTH, n));
        }
        req.to_http_request()
    }

    #[test]
    fn declared_uploads_hold_their_length_up_to_a_share_and_are_refused_past_it() {
        let bound = web::Data::new(BodiesInFlight::new(8 * MIB, 4 * MIB));
        let key = Some(&b"Bearer a"[..]);
        let short = StreamedBody::admit(&request(&bound, Some(1000)), key).unwrap();
        assert_eq!(short.held(), 0, "short bodies are not counted");
        let huge = StreamedBody::admit(&request(&bound, Some(1 << 30)), key).unwrap();
        assert_eq!(huge.held(), 4 * MIB, "one share, whatever its length");
        let refused = StreamedBody::admit(&request(&bound, Some(MIB)), key).unwrap_err();
        assert_eq!(refused.code(), "rate_limited");
        assert_eq!(refused.retry_after(), Some(5));
        let other = StreamedBody::admit(&request(&bound, Some(3 * MIB)), Some(b"b")).unwrap();
        let refused = StreamedBody::admit(&request(&bound, Some(2 * MIB)), Some(b"c"));
        assert_eq!(refused.unwrap_err().code(), "server_busy");
        drop((huge, other));
        let bound: Arc<BodiesInFlight> = bound.into_inner();
        assert_eq!(bound.held(), 0);
    }

    #[test]
    fn a_chunked_upload_is_counted_as_it_arrives_and_stopped_past_the_share() {
        let bound = web::Data::new(BodiesInFlight::new(8 * MIB, 4 * MIB));
        let key = Some(&b"Bearer a"[..]);
        let mut first = StreamedBody::admit(&request(&bound, None), key).unwrap();
        let mut second = StreamedBody::admit(&request(&bound, None), key).unwrap();
        first.arrived(600_000).unwrap();
        assert_eq!(first.held(), 0, "not long yet");
        first.arrived(600_000).unwrap();
        assert_eq!(first.held(), 2 * MIB, "what arrived, to the next MiB");
        second.arrived(2 * MIB as usize).unwrap();
        let refused = first.arrived(MIB as usize).unwrap_err();
        assert_eq!(refused.code(), "rate_limited");
        assert_eq!(first.held(), 2 * MIB, "a refused step holds nothing more");
        drop(second);
        // Alone, it grows to a share and no further.
        first.arrived(100 * MIB as usize).unwrap();
        assert_eq!(first.held(), 4 * MIB);
    }
}
