//! `quire-store-contract`: the store contract suite, one set of checks every implementation
//! of the store ports must pass (the testkit's in-memory fake in this crate's tests, SQLite
//! and PostgreSQL in `quire-store`'s), one file per port. Each check states a line of a
//! port's `# Errors` contract or a behaviour callers rely on.
//!
//! Two lists besides, for the database service's other adapters, each written as the
//! store's: the `Cluster` port ([`cluster`], [`cluster_contract!`](crate::cluster_contract):
//! the testkit's fake here, `PgCluster` in `quire-pgcluster`'s tests) and the `TenantUsers`
//! port ([`tenant_users`], [`tenant_users_contract!`](crate::tenant_users_contract): the
//! testkit's fake here, the data API instances' in `quire-data-runtime`'s tests).
//!
//! The checks are listed once, in `__contract_list!`: [`store_contract!`](crate::store_contract)
//! expands one `#[tokio::test]` per entry for a backend, and [`run`] dispatches to it. A check
//! left off the list is dead code, which fails the build (`-D warnings`), so none can be
//! written and silently never run. Each check is bounded by the ports it touches, so its
//! signature says what it covers; [`run`] holds a backend to every store port, as
//! [`quire_app::Ports::from_store`] does.
//!
//! Test support only (a dev-dependency): it depends on the domain crates, `quire-app`, the
//! testkit's fixtures, tokio and serde_json.

// Test support: a panic is how a failed check reports itself.
#![allow(clippy::unwrap_used)]

mod accounts;
mod activation;
pub mod cluster;
mod database_projects;
mod database_settings;
mod databases;
mod device;
mod keys;
mod links;
mod mail;
mod oauth;
mod objects;
mod page_files;
mod page_lists;
mod page_replace;
mod pages;
mod projects;
mod publish_requests;
mod quotas;
mod resource_lists;
mod sessions;
mod signup;
mod support;
pub mod tenant_users;
mod url_links;

use std::sync::Arc;

use quire_accounts::{AccountStore, CaptchaLedger, InvitationStore, SessionStore};
use quire_databases::DatabaseRecords;
use quire_device_auth::DeviceGrantStore;
use quire_kernel::RateLimiter;
use quire_keys::KeyStore;
use quire_links::LinkStore;
use quire_mail::MailQuota;
use quire_oauth::{ClientStore, GrantStore, SigningKeyStore};
use quire_objects::ObjectRecords;
use quire_pages::{AccountDirectory, PageStore, PublishRequests};
use quire_projects::ProjectStore;
use quire_signup::SignupStore;

/// Every contract check, once, by port. `$then` is called with `$args` and the list.
#[doc(hidden)]
#[macro_export]
macro_rules! __contract_list {
    ($then:ident $($args:tt)*) => {
        $crate::$then!($($args)* ;
            accounts::account_bootstrap_is_readable,
            accounts::account_conflicts_store_nothing,
            projects::project_slugs_and_clients_are_unique,
            projects::projects_are_listed_oldest_first,
            keys::keys_are_listed_revoked_once_and_found_by_hash,
            projects::grants_upsert_and_delete,
            projects::delete_project_refuses_or_moves,
            projects::delete_default_project_promotes_oldest,
            projects::assign_moves_app_keys_only,
            accounts::times_keep_microseconds,
            pages::pages_are_invisible_until_ready_and_slugs_unique_per_owner,
            page_lists::pages_are_listed_by_keyset_newest_first_ties_by_id,
            page_lists::shared_pages_and_files_are_listed_by_keyset,
            page_lists::paging_gives_each_page_once_while_pages_are_added,
            page_lists::projects_and_keys_are_listed_by_keyset,
            resource_lists::project_resources_are_listed_by_keyset_kind_by_kind,
            resource_lists::live_clients_are_listed_by_keyset,
            page_files::put_files_replaces_by_path_and_sets_totals,
            page_files::concurrent_put_files_keep_the_limits_and_counters,
            page_files::put_files_racing_a_delete_is_not_found_and_leaves_nothing,
            page_replace::replace_files_swaps_the_whole_manifest,
            links::link_codes_share_one_namespace,
            links::links_keep_policy_and_allow_lists,
            url_links::url_links_are_stored_listed_changed_and_deleted,
            url_links::link_counts_keep_bots_and_referrers_apart,
            objects::objects_are_invisible_until_ready_and_share_slugs_with_pages,
            objects::a_ready_records_bytes_swap_only_from_the_blob_it_names,
            quotas::object_bytes_are_summed_per_account_from_ready_objects,
            quotas::live_databases_are_the_provisioning_and_ready_ones,
            databases::database_records_keep_every_field,
            databases::database_states_change_only_from_their_own,
            databases::jwt_secrets_rotate_from_the_secret_read,
            databases::database_slugs_are_held_across_accounts_and_states,
            databases::project_databases_are_the_ready_ones_newest_first,
            databases::janitor_finds_lapsed_creations_deletes_and_ends,
            database_projects::projects_hold_assign_and_move_databases,
            database_settings::data_api_settings_change_only_from_the_settings_read,
            projects::projects_hold_and_move_pages_and_links,
            device::device_grants_change_state_by_compare_and_set,
            device::old_grants_and_rate_windows_are_swept,
            device::rate_limits_count_exactly_per_window,
            device::rate_limits_roll_instead_of_resetting,
            device::budgets_take_slots_give_them_back_and_back_off,
            mail::sends_are_counted_exactly_in_a_rolling_window,
            sessions::accounts_are_found_by_login_and_sessions_by_hash,
            sessions::totp_enrollment_is_once_and_steps_are_used_once,
            sessions::recovery_codes_are_spent_once_and_the_factor_comes_off,
            sessions::legacy_secrets_are_listed_and_resealed_once,
            sessions::expired_sessions_are_swept,
            pages::pages_are_found_by_owner_and_slug_and_links_by_code,
            publish_requests::publishes_are_recalled_per_caller_and_id_first_page_kept,
            publish_requests::remembered_publishes_are_forgotten_before_a_time,
            pages::page_details_read_page_project_owner_and_link_at_once,
            links::views_are_leased_within_the_budget_and_added_in_bulk,
            links::lapsed_view_leases_are_settled_as_served,
            oauth::clients_are_listed_rotated_and_deleted_as_tombstones,
            oauth::idle_dynamic_clients_are_found_by_last_use,
            oauth::grants_are_decided_redeemed_and_rotated_once,
            oauth::live_grants_are_redeemed_unrevoked_with_a_live_refresh_token,
            oauth::a_grant_acts_in_its_project_until_the_project_is_deleted,
            oauth::signing_keys_keep_their_material,
            activation::numbers_bind_one_account_once,
            activation::captcha_solutions_are_spent_once,
            signup::links_are_spent_once_and_for_their_purpose,
            signup::sign_up_conflicts_store_nothing,
            signup::the_first_account_is_created_once
        );
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __contract_dispatch {
    (; $($port:ident::$check:ident),+ $(,)?) => {
        /// Runs the contract check `check` (a name from the list) on `store`.
        ///
        /// # Panics
        /// When the check fails, or no check has that name.
        pub async fn run<S>(check: &str, store: Arc<S>)
        where
            S: ProjectStore
                + KeyStore
                + AccountStore
                + SessionStore
                + PageStore
                + PublishRequests
                + AccountDirectory
                + LinkStore
                + ObjectRecords
                + DatabaseRecords
                + DeviceGrantStore
                + RateLimiter
                + ClientStore
                + GrantStore
                + SigningKeyStore
                + MailQuota
                + InvitationStore
                + CaptchaLedger
                + SignupStore
                + 'static,
        {
            match check {
                $(stringify!($check) => $port::$check(store).await,)+
                other => panic!("no contract check named {other}"),
            }
        }
    };
}

__contract_list!(__contract_dispatch);

/// Expands one `#[tokio::test]` per contract check. `$make` is an async fn returning
/// `Option<(Arc<S>, G)>`: `None` skips (a backend that is not available here), `G` is kept
/// alive for the test's duration (e.g. a temporary directory or database). Attributes
/// written before `$make` go on every test, e.g. a `cfg_attr(…, ignore = "why")` that has
/// cargo report a backend that is not there as ignored rather than passed.
#[macro_export]
macro_rules! store_contract {
    ($(#[$attr:meta])* $make:path) => {
        $crate::__contract_list!(__contract_tests [$(#[$attr])*] $make);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __contract_tests {
    ($attrs:tt $make:path ; $($port:ident::$check:ident),+ $(,)?) => {
        $($crate::__contract_test!($attrs $make, $check);)+
    };
}

/// One check's test. The attributes come as one bracketed group, so that they can be
/// repeated for every check of the list.
#[doc(hidden)]
#[macro_export]
macro_rules! __contract_test {
    ([$(#[$attr:meta])*] $make:path, $check:ident) => {
        $(#[$attr])*
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $check() {
            if let Some((store, _guard)) = $make().await {
                $crate::run(stringify!($check), store).await;
            }
        }
    };
}
