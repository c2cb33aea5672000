//! `quire-device-auth`: the RFC 8628 device authorization grant by which a command-line
//! agent obtains a master key once a person approves it in the dashboard.
//!
//! Pure domain: it depends on `quire-kernel`, `quire-keys` (the key minted on claim) and small
//! pure crates; time comes from the kernel's `Clock`. Its ports: [`ports::DeviceGrantStore`]
//! and [`ports::RateLimiter`]. The state table (spec, "Device authorization request"):
//!
//! | state | event | next | answer |
//! | --- | --- | --- | --- |
//! | – | start | pending | device and user codes, 600 s, interval 3 s |
//! | pending | poll, not decided | pending | `authorization_pending` |
//! | pending | poll faster than the interval | pending | `slow_down`, interval + 5 s |
//! | pending | approve / deny | approved / denied | – |
//! | approved | first poll | claimed | the key, once |
//! | denied | poll | denied | `access_denied` |
//! | claimed | poll | claimed | `invalid_grant` |
//! | pending | 600 s pass | expired | `expired_token` |

pub mod codes;
pub mod model;
pub mod ports;
pub mod service;

pub use codes::{DeviceCode, PollSecret, UserCode};
pub use model::{DeviceGrant, GrantState};
pub use ports::{DeviceGrantStore, RateLimiter};
pub use service::{
    CODE_LOOKUPS_PER_ACCOUNT, CODE_LOOKUPS_PER_SESSION, Claimed, DEVICE_CODE_GRANT, DecideError,
    DeviceAuthService, EXPIRES_IN_SECS, INTERVAL_SECS, MAX_CLIENT_NAME_CHARS, POLL_LIMIT,
    PollError, RATE_WINDOW, SLOW_DOWN_STEP_SECS, START_LIMIT, StartError, Started,
};
