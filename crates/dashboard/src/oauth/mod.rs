//! The agents' way in: the OAuth authorization endpoint with its consent page, the device
//! login's consent screen, and the Agents page that lists and disconnects them.

pub(crate) mod agents;
pub(crate) mod authorize;
pub(crate) mod consent;
