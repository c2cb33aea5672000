//! What the three surfaces share: the size-limited request body, the mappings long ones are
//! read into and the bound on their bytes in flight, same-origin checks, the client's
//! address, connection limits, routes with their 405s and `HEAD`, the headers every API
//! answer carries, and the request log.

pub mod answer_headers;
pub mod body;
pub mod client_ip;
pub mod in_flight;
pub mod limits;
pub mod mapping;
pub mod origin;
pub mod request_log;
pub mod routing;
