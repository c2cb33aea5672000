//! The password check of sign-in: run on the offload, since argon2id's tens of milliseconds
//! would hold the async worker and every request it serves, and as costly for an unknown
//! login (or an account with no password) as for a wrong password.

use quire_kernel::password::verify_password;
use quire_kernel::{InfraError, Offload, offloaded};

/// A real argon2id hash of a fixed string, verified against when the login is unknown (or
/// has no password), so that costs the same work as a wrong password. It is first made on
/// the offload too, inside the first check that needs it.
static DECOY_HASH: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    quire_kernel::password::hash_password_unchecked(DECOY_PASSWORD).unwrap_or_default()
});
const DECOY_PASSWORD: &str = "quire-sign-in-decoy";

/// Whether `password` matches `stored`, verified on `offload`; with no stored hash the decoy
/// is verified instead, and the answer is `false`.
///
/// # Errors
/// [`InfraError`] when the offload could not run the check.
pub(crate) async fn password_matches(
    offload: &dyn Offload,
    password: &str,
    stored: Option<String>,
) -> Result<bool, InfraError> {
    let password = password.to_owned();
    offloaded(offload, move || match stored {
        Some(stored) => verify_password(&password, &stored),
        None => {
            std::hint::black_box(verify_password(&password, &DECOY_HASH));
            false
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_decoy_is_a_real_hash_so_unknown_logins_cost_a_real_verification() {
        assert!(DECOY_HASH.starts_with("$argon2id$"));
        assert!(verify_password(DECOY_PASSWORD, &DECOY_HASH));
        assert!(!verify_password("anything", &DECOY_HASH));
    }
}
