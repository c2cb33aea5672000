//! The page and project tools' inputs, as JSON Schema (schemars) and as typed arguments
//! (serde). Unknown fields are refused, so a misspelt argument is an error the model can
//! correct rather than a silent default (the link, object and database tools' arguments,
//! beside their calls, follow the same rule).

use schemars::JsonSchema;
use serde::Deserialize;

use super::common::nullable;
use super::policy::{PolicySchema, policy_args};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListPagesArgs {
    /// Project slug; default: the home project.
    pub project: Option<String>,
    /// `active` (default) or `archived`.
    pub status: Option<String>,
    /// 1-100, default 20.
    pub limit: Option<u64>,
    /// `nextCursor` of the previous call.
    pub cursor: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetPageArgs {
    /// The page: id, slug, public id, alias or URL.
    pub page: String,
    /// Also list its files (at most 200).
    #[serde(default)]
    pub include_files: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// The page: id, slug, public id, alias or URL.
    pub page: String,
    /// The file's path in the page, e.g. `index.html`.
    pub path: String,
    /// First byte to read; default 0.
    pub offset: Option<u64>,
    /// Bytes to read: default 32768, at most 262144.
    pub max_bytes: Option<u64>,
}

/// One file of a bundle.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileArg {
    /// Path in the page, e.g. `index.html` or `css/site.css`.
    pub path: String,
    /// The file's content, as text or base64.
    pub content: String,
    /// `utf8` (default) or `base64`.
    pub encoding: Option<String>,
}

/// How `publish_page` words its policy fields.
const PUBLISH: PolicySchema = PolicySchema {
    access: "`private` (default), `password`, `allow_list` or `public`. Ask before `public`.",
    expires_at: "RFC 3339 time in the future.",
    max_views: "View budget.",
    alias: "Short link alias, unique service-wide.",
    ..PolicySchema::CREATE
};

policy_args! {
    pub struct PublishArgs {
        /// 1-200 characters.
        pub title: String,
        /// The bundle; must include the entrypoint.
        pub files: Vec<FileArg>,
        /// Default: from the title.
        pub slug: Option<String>,
        /// Default `index.html`.
        pub entrypoint: Option<String>,
        /// Project slug; default: the home project.
        pub project: Option<String>,
        /// Slug of one of your databases in the page's project: the page then finds its data
        /// API's URL and anon key at `/-/db.json` on its origin.
        pub database: Option<String>,
        /// Up to 64 characters.
        pub request_id: Option<String>,
    }
    create: PUBLISH
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddFilesArgs {
    /// The page: id, slug, public id, alias or URL.
    pub page: String,
    /// Files to add; a path already there is replaced.
    pub files: Vec<FileArg>,
}

/// How `update_page` words its policy fields.
const UPDATE: PolicySchema = PolicySchema {
    access: "`private`, `password`, `allow_list` or `public`. Ask before `public`.",
    ..PolicySchema::UPDATE
};

policy_args! {
    pub struct UpdatePageArgs {
        /// The page: id, slug, public id, alias or URL.
        pub page: String,
        pub title: Option<String>,
        pub slug: Option<String>,
        /// `active` or `archived`.
        pub status: Option<String>,
        /// Slug of one of your databases in the page's project (served at `/-/db.json`);
        /// `null` removes it.
        #[serde(default, deserialize_with = "nullable")]
        #[schemars(with = "Option<String>")]
        pub database: Option<Option<String>>,
    }
    update: UPDATE
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeletePageArgs {
    /// The page: id, slug, public id, alias or URL.
    pub page: String,
    /// The page's slug, typed again to confirm.
    pub confirm: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListSharedArgs {
    /// 1-100, default 20.
    pub limit: Option<u64>,
    /// `nextCursor` of the previous call.
    pub cursor: Option<String>,
}
