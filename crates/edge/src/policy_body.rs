//! The access-policy fields a URL link's and an object's patch body take alike, written
//! once: [`policy_patch_body!`](crate::policy_patch_body) declares the body with its own
//! fields and then the policy's six (access, password, allow list, expiry, view budget,
//! alias), documents them, makes it a [`RequestBody`](crate::json::RequestBody) answering
//! `invalid_request`, and gives it `policy()`, the `PolicyPatch` those fields ask for.
//!
//! The fields are inline rather than a flattened struct, which utoipa would document as an
//! `allOf` of two schemas where the OpenAPI document shows one. A page's patch body states
//! its fields' rules in its own schema functions (`quire-pages-api`'s `schema.rs`) and is
//! not one of these.

/// What the macro's expansion names, so a surface needs no dependency for it.
#[doc(hidden)]
pub mod __private {
    pub use quire_kernel::ErrorCode;
    pub use quire_links::PolicyPatch;
}

/// A patch body: `$own` fields, then the policy's (`null` clears the password, expiry,
/// budget and alias), `$max_views` and `$alias` describing the last two in the service's
/// words.
#[macro_export]
macro_rules! policy_patch_body {
    (
        $(#[$meta:meta])*
        pub struct $name:ident { $($own:tt)* }
        max_views: $max_views:literal,
        alias: $alias:literal $(,)?
    ) => {
        #[derive(Debug, ::serde::Deserialize, ::utoipa::ToSchema)]
        $(#[$meta])*
        #[serde(rename_all = "camelCase")]
        pub struct $name {
            $($own)*
            /// `private`, `password`, `allow_list` or `public`.
            #[serde(default)]
            pub access: Option<String>,
            /// 8-256 characters; `null` or empty removes it.
            #[serde(default, deserialize_with = "::quire_edge::json::nullable")]
            #[schema(max_length = 256)]
            pub password: Option<Option<String>>,
            /// Replaces the allow list.
            #[serde(default)]
            pub allow: Option<Vec<String>>,
            /// RFC 3339, in the future; `null` removes the expiry.
            #[serde(default, deserialize_with = "::quire_edge::json::nullable")]
            #[schema(format = DateTime)]
            pub expires_at: Option<Option<String>>,
            #[doc = $max_views]
            #[serde(default, deserialize_with = "::quire_edge::json::nullable")]
            #[schema(value_type = Option<u64>, minimum = 1)]
            pub max_views: Option<Option<$crate::json::MaxViews>>,
            #[doc = $alias]
            #[serde(default, deserialize_with = "::quire_edge::json::nullable")]
            #[schema(min_length = 3, max_length = 64, pattern = "^[A-Za-z0-9_-]+$")]
            pub alias: Option<Option<String>>,
        }

        impl $crate::json::RequestBody for $name {
            const CODE: $crate::policy_body::__private::ErrorCode =
                $crate::policy_body::__private::ErrorCode::InvalidRequest;
        }

        impl $name {
            /// The change of policy the body asks for, taken out of it.
            pub fn policy(&mut self) -> $crate::policy_body::__private::PolicyPatch {
                $crate::policy_body::__private::PolicyPatch {
                    access: self.access.take(),
                    password: self.password.take(),
                    allow: self.allow.take(),
                    expires_at: self.expires_at.take(),
                    max_views: self.max_views.take().map(|m| m.map($crate::json::MaxViews::get)),
                    alias: self.alias.take(),
                }
            }
        }
    };
}
