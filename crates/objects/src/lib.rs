//! `quire-objects`: objects, single files of any size published like pages: an address on
//! the owner's origin, a short link that carries the access policy, expiry and an exact
//! download budget. Uploads arrive in pieces and are hashed, counted and capped as they
//! stream to storage (`upload.rs`), never held whole; the write follows the pages' pattern
//! (a pending record with a lease, then the bytes, then the link, then ready), so a failure or
//! a crash leaves nothing once the lease lapses and the janitor has run.
//!
//! Pure domain: it depends on `quire-kernel`, `quire-projects` (the addressing rules),
//! `quire-links` (the link and its policy rules), `quire-pages` (owner origins, and the slug
//! and title rules, since slugs share the owner's namespace with pages), and small pure crates
//! (bytes, futures-util for the byte stream's type). Its ports: [`ports::ObjectRecords`] and
//! [`ports::ObjectBytes`], beside `quire-links`' `LinkStore` and `AccountDirectory`.

pub mod disposition;
pub mod model;
pub mod ports;
pub mod service;
mod upload;
pub mod validate;

pub use model::{Object, ObjectStatus};
pub use ports::{ByteSink, ByteStream, Contents, InsertObjectError, ObjectBytes, ObjectRecords};
pub use service::{
    Download, NewObject, ObjectConfig, ObjectError, ObjectPatch, ObjectPorts, ObjectService,
    ObjectView, Swept, UPLOAD_URL_TTL, UploadOffer, UploadUrl,
};
pub use upload::Upload;

// The requests carry them, so a caller builds one without naming `quire-links`.
pub use quire_links::{PolicyInput, PolicyPatch};
