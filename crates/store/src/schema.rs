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
diesel::allow_tables_to_appear_in_same_query!(accounts, projects, api_keys, project_grants);
