//! The access-policy arguments the page, link and object tools take alike, written once:
//! [`policy_args!`] declares a tool's argument struct with its own fields and then the
//! policy's six (access, password, allow, expiry, view budget, alias), as a create takes them
//! (each given or not) or as an update does (each left out to keep it, or `null` to clear the
//! password, expiry, budget and alias), and gives it `policy()`: the link service's
//! `PolicyInput` or `PolicyPatch` those fields ask for.
//!
//! The fields are inline rather than a flattened struct: serde's `deny_unknown_fields` does
//! not work with `flatten`, and schemars would then write another schema. Each
//! tool describes its fields in its own words (a [`PolicySchema`]), which the tools/list
//! snapshot holds.

use quire_links::{PolicyInput, PolicyPatch};
use serde::{Deserialize, Deserializer};

/// What a tool's policy fields say in its input schema: a description each (an empty one
/// writes none) and the least view budget it takes.
#[derive(Debug, Clone, Copy)]
pub struct PolicySchema {
    pub access: &'static str,
    pub password: &'static str,
    pub allow: &'static str,
    pub expires_at: &'static str,
    pub max_views: &'static str,
    pub alias: &'static str,
    pub least_views: u64,
}

impl PolicySchema {
    /// A create's words for the fields most tools word alike; a tool names the rest.
    pub const CREATE: Self = Self {
        access: "",
        password: "Required for `password` access.",
        allow: "Emails or handles, for `allow_list`.",
        expires_at: "RFC 3339, in the future.",
        max_views: "",
        alias: "",
        least_views: 0,
    };

    /// An update's: what `null` does, where a field takes it.
    pub const UPDATE: Self = Self {
        access: "",
        password: "`null` removes it.",
        allow: "Replaces the allow list.",
        expires_at: "RFC 3339; `null` removes the expiry.",
        max_views: "`null` removes the budget.",
        alias: "`null` removes it.",
        least_views: 0,
    };
}

/// The policy fields as a tool's arguments held them: `T` is a create's `Option<String>` or
/// an update's `Option<Option<String>>`, `C` the same for the view budget.
#[derive(Debug)]
pub struct Sent<T, C> {
    pub access: Option<String>,
    pub password: T,
    pub allow: Option<Vec<String>>,
    pub expires_at: T,
    pub max_views: C,
    pub alias: T,
}

impl From<Sent<Option<String>, Option<u64>>> for PolicyInput {
    fn from(sent: Sent<Option<String>, Option<u64>>) -> Self {
        Self {
            access: sent.access,
            password: sent.password,
            allow: sent.allow.unwrap_or_default(),
            expires_at: sent.expires_at,
            max_views: sent.max_views.map(i128::from),
            alias: sent.alias,
        }
    }
}

impl From<Sent<Option<Option<String>>, Option<Option<u64>>>> for PolicyPatch {
    fn from(sent: Sent<Option<Option<String>>, Option<Option<u64>>>) -> Self {
        Self {
            access: sent.access,
            password: sent.password,
            allow: sent.allow,
            expires_at: sent.expires_at,
            max_views: sent.max_views.map(|m| m.map(i128::from)),
            alias: sent.alias,
        }
    }
}

/// A create's field: `null` is as good as left out.
pub fn given<'de, T: Deserialize<'de>, D: Deserializer<'de>>(de: D) -> Result<Option<T>, D::Error> {
    Option::<T>::deserialize(de)
}

/// A tool's arguments: `$own` fields, then the policy's as a `create` or an `update` takes
/// them, described by the [`PolicySchema`] `$schema`; unknown fields refused. `policy()`
/// takes the policy out.
macro_rules! policy_args {
    ($(#[$m:meta])* pub struct $name:ident { $($own:tt)* } create: $schema:ident) => {
        policy_args!(@emit [$(#[$m])*] $name [$($own)*] $schema, Option<String>, Option<u64>,
            "crate::tools::policy::given", quire_links::PolicyInput);
    };
    ($(#[$m:meta])* pub struct $name:ident { $($own:tt)* } update: $schema:ident) => {
        policy_args!(@emit [$(#[$m])*] $name [$($own)*] $schema, Option<Option<String>>,
            Option<Option<u64>>, "crate::tools::common::nullable", quire_links::PolicyPatch);
    };
    (
        @emit [$($meta:tt)*] $name:ident [$($own:tt)*] $schema:ident,
        $text:ty, $count:ty, $sent:literal, $policy:ty
    ) => {
        #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
        $($meta)*
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($own)*
            #[schemars(description = $schema.access)]
            pub access: Option<String>,
            #[serde(default, deserialize_with = $sent)]
            #[schemars(description = $schema.password)]
            pub password: $text,
            #[schemars(description = $schema.allow)]
            pub allow: Option<Vec<String>>,
            #[serde(default, deserialize_with = $sent)]
            #[schemars(description = $schema.expires_at)]
            pub expires_at: $text,
            #[serde(default, deserialize_with = $sent)]
            #[schemars(description = $schema.max_views, range(min = $schema.least_views))]
            pub max_views: $count,
            #[serde(default, deserialize_with = $sent)]
            #[schemars(description = $schema.alias)]
            pub alias: $text,
        }

        impl $name {
            /// The policy the arguments ask for, taken out of them.
            pub fn policy(&mut self) -> $policy {
                $crate::tools::policy::Sent {
                    access: self.access.take(),
                    password: self.password.take(),
                    allow: self.allow.take(),
                    expires_at: self.expires_at.take(),
                    max_views: self.max_views.take(),
                    alias: self.alias.take(),
                }
                .into()
            }
        }
    };
}

pub(super) use policy_args;

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::tools::links::CreateLinkArgs;
    use crate::tools::objects::UpdateObjectArgs;

    fn sent<T: serde::de::DeserializeOwned>(args: serde_json::Value) -> Result<T, String> {
        serde_json::from_value(args).map_err(|e| e.to_string())
    }

    #[test]
    fn a_create_takes_the_policy_given_and_null_as_left_out() {
        let mut args: CreateLinkArgs = sent(json!({
            "url": "https://example.com/",
            "access": "password",
            "password": "correct horse",
            "expires_at": null,
            "max_views": 3,
        }))
        .unwrap();
        let policy = args.policy();
        assert_eq!(policy.access.as_deref(), Some("password"));
        assert_eq!(policy.password.as_deref(), Some("correct horse"));
        assert_eq!((policy.expires_at, policy.alias), (None, None));
        assert_eq!(policy.max_views, Some(3));
        assert!(policy.allow.is_empty());
        assert_eq!(args.url, "https://example.com/");
    }

    #[test]
    fn an_update_keeps_what_is_left_out_and_clears_what_is_null() {
        let mut args: UpdateObjectArgs = sent(json!({
            "object": "report",
            "alias": null,
            "max_views": 5,
            "allow": ["ann"],
        }))
        .unwrap();
        let patch = args.policy();
        assert_eq!(patch.alias, Some(None));
        assert_eq!(patch.max_views, Some(Some(5)));
        assert_eq!(patch.allow, Some(vec!["ann".to_owned()]));
        assert_eq!(
            (patch.password, patch.expires_at, patch.access),
            (None, None, None)
        );
    }

    #[test]
    fn a_misspelt_policy_field_is_refused() {
        let refused = sent::<UpdateObjectArgs>(json!({ "object": "report", "max_view": 5 }));
        assert!(refused.unwrap_err().starts_with("unknown field `max_view`"));
    }
}
