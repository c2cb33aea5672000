//! The one schema both backends share (written by hand; see `migrations/`).

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::{DbTime, DbUuid};

    accounts (id) {
        id -> DbUuid,
        email -> Text,
        handle -> Text,
        password_hash -> Nullable<Text>,
        activated_at -> Nullable<DbTime>,
        is_platform_admin -> Bool,
        default_project_id -> DbUuid,
        created_at -> DbTime,
        totp_secret -> Nullable<Text>,
        totp_last_step -> Nullable<BigInt>,
        email_verified_at -> Nullable<DbTime>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::{DbTime, DbUuid};

    account_tokens (hash) {
        hash -> Text,
        account_id -> Nullable<DbUuid>,
        purpose -> Text,
        created_at -> DbTime,
        expires_at -> DbTime,
        used_at -> Nullable<DbTime>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::{DbTime, DbUuid};

    projects (id) {
        id -> DbUuid,
        account_id -> DbUuid,
        name -> Text,
        tag -> Text,
        color -> Text,
        slug -> Text,
        oauth_client_id -> Nullable<Text>,
        status -> Text,
        created_at -> DbTime,
        updated_at -> DbTime,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::{DbTime, DbUuid};

    api_keys (id) {
        id -> DbUuid,
        account_id -> DbUuid,
        name -> Text,
        tier -> Text,
        apps -> Text,
        project_id -> Nullable<DbUuid>,
        key_prefix -> Text,
        key_hash -> Text,
        created_at -> DbTime,
        revoked_at -> Nullable<DbTime>,
        last_used_at -> Nullable<DbTime>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::{DbTime, DbUuid};

    project_grants (key_id, project_id) {
        key_id -> DbUuid,
        project_id -> DbUuid,
        level -> Text,
        created_at -> DbTime,
    }
}

diesel::joinable!(api_keys -> accounts (account_id));
diesel::joinable!(projects -> accounts (account_id));

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::{DbTime, DbUuid};

    pages (id) {
        id -> DbUuid,
        public_id -> Text,
        account_id -> DbUuid,
        project_id -> DbUuid,
        slug -> Text,
        title -> Text,
        entrypoint -> Text,
        status -> Text,
        state -> Text,
        size_bytes -> BigInt,
        file_count -> BigInt,
        created_at -> DbTime,
        updated_at -> DbTime,
        archived_at -> Nullable<DbTime>,
        lease_until -> Nullable<DbTime>,
        database_slug -> Nullable<Text>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::{DbTime, DbUuid};

    objects (id) {
        id -> DbUuid,
        public_id -> Text,
        account_id -> DbUuid,
        project_id -> DbUuid,
        slug -> Text,
        title -> Text,
        filename -> Text,
        content_type -> Text,
        size_bytes -> BigInt,
        sha256 -> Text,
        blob -> Text,
        status -> Text,
        state -> Text,
        created_at -> DbTime,
        updated_at -> DbTime,
        archived_at -> Nullable<DbTime>,
        lease_until -> Nullable<DbTime>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::{DbTime, DbUuid};

    databases (id) {
        id -> DbUuid,
        account_id -> DbUuid,
        project_id -> DbUuid,
        slug -> Text,
        name -> Text,
        status -> Text,
        lease_until -> Nullable<DbTime>,
        expires_at -> Nullable<DbTime>,
        owner_secret -> Text,
        authenticator_secret -> Text,
        jwt_secret -> Nullable<Text>,
        data_api_enabled -> Bool,
        data_api_schemas -> Text,
        data_api_max_rows -> Nullable<BigInt>,
        data_api_aggregates -> Bool,
        data_api_explain -> Bool,
        data_api_tx_rollback -> Bool,
        created_at -> DbTime,
        updated_at -> DbTime,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::DbUuid;

    page_files (page_id, path) {
        page_id -> DbUuid,
        path -> Text,
        size_bytes -> BigInt,
        content_type -> Text,
        sha256 -> Text,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::{DbTime, DbUuid};

    links (id) {
        id -> DbUuid,
        target_kind -> Text,
        target_id -> Nullable<DbUuid>,
        target_url -> Nullable<Text>,
        account_id -> DbUuid,
        project_id -> DbUuid,
        public_id -> Text,
        alias -> Nullable<Text>,
        title -> Nullable<Text>,
        access -> Text,
        password_hash -> Nullable<Text>,
        expires_at -> Nullable<DbTime>,
        max_views -> Nullable<BigInt>,
        view_count -> BigInt,
        created_at -> DbTime,
        updated_at -> DbTime,
        views_leased -> BigInt,
        archived_at -> Nullable<DbTime>,
        expired_url -> Nullable<Text>,
        redirect_status -> Integer,
        last_viewed_at -> Nullable<DbTime>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::DbUuid;

    link_codes (code) {
        code -> Text,
        link_id -> DbUuid,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::{DbTime, DbUuid};

    link_allow (id) {
        id -> DbUuid,
        link_id -> DbUuid,
        account_id -> Nullable<DbUuid>,
        email -> Nullable<Text>,
        created_at -> DbTime,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::{DbTime, DbUuid};

    device_grants (id) {
        id -> DbUuid,
        device_code_hash -> Text,
        user_code -> Text,
        client_name -> Text,
        state -> Text,
        account_id -> Nullable<DbUuid>,
        key_id -> Nullable<DbUuid>,
        created_at -> DbTime,
        expires_at -> DbTime,
        interval_secs -> BigInt,
        last_polled_at -> Nullable<DbTime>,
        decided_at -> Nullable<DbTime>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::DbTime;

    rate_events (id) {
        id -> BigInt,
        bucket -> Text,
        client -> Text,
        at -> DbTime,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::DbTime;

    rate_keys (bucket, client) {
        bucket -> Text,
        client -> Text,
        touched_at -> DbTime,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::{DbTime, DbUuid};

    email_sends (mail_id) {
        mail_id -> DbUuid,
        account_id -> DbUuid,
        created_at -> DbTime,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::{DbTime, DbUuid};

    sessions (id_hash) {
        id_hash -> Text,
        account_id -> DbUuid,
        mfa_satisfied -> Bool,
        created_at -> DbTime,
        expires_at -> DbTime,
        pending_totp_secret -> Nullable<Text>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::{DbTime, DbUuid};

    recovery_codes (code_hash) {
        code_hash -> Text,
        account_id -> DbUuid,
        created_at -> DbTime,
        used_at -> Nullable<DbTime>,
    }
}

diesel::joinable!(page_files -> pages (page_id));
diesel::joinable!(link_allow -> links (link_id));
diesel::table! {
    server_secrets (name) {
        name -> Text,
        value -> Text,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::DbTime;

    oauth_clients (id) {
        id -> Text,
        name -> Text,
        client_type -> Text,
        redirect_uris -> Text,
        secret_hash -> Nullable<Text>,
        created_at -> DbTime,
        deleted_at -> Nullable<DbTime>,
        registration -> Text,
        last_used_at -> Nullable<DbTime>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::{DbTime, DbUuid};

    oauth_grants (id) {
        id -> Text,
        client_id -> Text,
        account_id -> DbUuid,
        scope -> Text,
        redirect_uri -> Text,
        state -> Nullable<Text>,
        code_challenge -> Text,
        request_hash -> Nullable<Text>,
        session_hash -> Nullable<Text>,
        request_expires_at -> Nullable<DbTime>,
        code_hash -> Nullable<Text>,
        code_expires_at -> Nullable<DbTime>,
        redeemed_at -> Nullable<DbTime>,
        created_at -> DbTime,
        revoked_at -> Nullable<DbTime>,
        resource -> Text,
        project_id -> Nullable<DbUuid>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::DbTime;

    oauth_refresh_tokens (token_hash) {
        token_hash -> Text,
        grant_id -> Text,
        created_at -> DbTime,
        expires_at -> DbTime,
        rotated_at -> Nullable<DbTime>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::DbTime;

    oauth_signing_keys (kid) {
        kid -> Text,
        private_key -> Text,
        public_key -> Text,
        created_at -> DbTime,
        activates_at -> DbTime,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::{DbTime, DbUuid};

    invitations (number) {
        number -> Text,
        added_at -> DbTime,
        bound_account_id -> Nullable<DbUuid>,
        bound_at -> Nullable<DbTime>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::DbTime;

    captcha_uses (nonce_hash) {
        nonce_hash -> Text,
        expires_at -> DbTime,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::DbUuid;

    link_views_daily (link_id, day) {
        link_id -> DbUuid,
        day -> Text,
        views -> BigInt,
        bot_views -> BigInt,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::DbUuid;

    link_referrers (link_id, day, host) {
        link_id -> DbUuid,
        day -> Text,
        host -> Text,
        views -> BigInt,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::{DbTime, DbUuid};

    view_leases (link_id, holder) {
        link_id -> DbUuid,
        holder -> DbUuid,
        views -> BigInt,
        expires_at -> DbTime,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::sql::{DbTime, DbUuid};

    publish_requests (caller, request_id) {
        caller -> Text,
        request_id -> Text,
        page_id -> DbUuid,
        created_at -> DbTime,
    }
}

diesel::joinable!(oauth_refresh_tokens -> oauth_grants (grant_id));
diesel::joinable!(invitations -> accounts (bound_account_id));

diesel::allow_tables_to_appear_in_same_query!(
    oauth_clients,
    oauth_grants,
    oauth_refresh_tokens,
    oauth_signing_keys,
    accounts,
    projects,
    api_keys,
    project_grants,
    pages,
    page_files,
    objects,
    databases,
    links,
    link_views_daily,
    link_referrers,
    view_leases,
    publish_requests,
    link_codes,
    link_allow,
    device_grants,
    rate_events,
    rate_keys,
    email_sends,
    invitations,
    captcha_uses,
    account_tokens,
    sessions,
    recovery_codes,
    server_secrets
);
