//! What the three surfaces share: the size-limited request body, same-origin checks, the
//! client's address, connection limits, and routes with their 405s.

pub mod body;
pub mod client_ip;
pub mod limits;
pub mod origin;
pub mod routing;
