//! The tools: their catalogue (names, descriptions that say their side effects, input and
//! output schemas, annotations) and their calls, each the same use case a REST handler
//! calls, refused with the same codes. A refusal is a tool result with `isError: true` and
//! the text `"<code>: <message>. <next step>"`, so the model can correct itself.
//!
//! The table below is the one list of tools: an entry per tool, from which `registry.rs`
//! derives `tools/list`, who sees which tool, and `tools/call`
//! (docs/decisions/mcp-tool-registry.md). The tool files (pages, projects, links, objects,
//! databases) hold the handlers and depend only on `common.rs`, and the page, link and object
//! tools on `policy.rs` (the policy arguments they take alike); the page and project tools
//! also on their types in `args.rs` and `output.rs`. Nothing in them knows the registry.

mod args;
mod common;
mod databases;
mod links;
mod objects;
mod output;
mod pages;
mod policy;
mod projects;
mod registry;
mod schema;

use std::sync::OnceLock;

use quire_edge::AppState;
use quire_kernel::{App, Principal};
use rmcp::model::{CallToolResult, JsonObject, Tool};

pub use common::ToolError;
use registry::{Entry, Kind, Needs, Registry};

use crate::limiter::Limiter;
use crate::transport::Caller;

/// Every tool, in a fixed order (clients cache the list).
fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        Registry::new(vec![
            Entry::new(
                "list_projects",
                "List the account's projects (slug, name, status). Read-only.",
                Kind::Read,
                projects::list_projects,
            )
            .needs(Needs::ProjectLister),
            Entry::new(
                "list_pages",
                "List pages of a project, newest first, with their URLs and access. Paginated: pass nextCursor as cursor. Read-only.",
                Kind::Read,
                pages::list_pages,
            )
            .needs(Needs::Anyone),
            Entry::new(
                "get_page",
                "Get one page by id, slug, public id, alias or URL; optionally its file list (at most 200). Never returns file contents. Read-only.",
                Kind::Read,
                pages::get_page,
            )
            .needs(Needs::Anyone),
            Entry::new(
                "read_page_file",
                "Read bytes of one file of a page: 32 KiB by default, at most 256 KiB per call; text as utf8, other bytes as base64. Use offset to continue. Read-only.",
                Kind::Read,
                pages::read_page_file,
            )
            .needs(Needs::Anyone),
            Entry::new(
                "publish_page",
                "Publish a new page from files and return its URL. Private unless access is given: ask the user before making it public. Pass request_id so a retry returns the first result instead of a duplicate.",
                Kind::Write {
                    destructive: false,
                    idempotent: true,
                },
                pages::publish_page,
            )
            .needs(Needs::App(App::Page)),
            Entry::new(
                "add_files",
                "Add files to an existing page; a file at the same path is replaced and visitors see the new content at once. Use it to send a large site in several calls.",
                Kind::Write {
                    destructive: true,
                    idempotent: true,
                },
                pages::add_files,
            )
            .needs(Needs::App(App::Page)),
            Entry::new(
                "update_page",
                "Change a page's title, slug, access (ask before public), password, expiry, view budget, alias or allow list, or archive/restore it. Visitors are affected at once.",
                Kind::Write {
                    destructive: true,
                    idempotent: true,
                },
                pages::update_page,
            )
            .needs(Needs::App(App::Page)),
            Entry::new(
                "delete_page",
                "Delete a page, its files and short link for good; its URLs stop working. Ask the user first; confirm must repeat the page's slug.",
                Kind::Write {
                    destructive: true,
                    idempotent: true,
                },
                pages::delete_page,
            )
            .needs(Needs::App(App::Page)),
            Entry::new(
                "list_shared_pages",
                "List pages other accounts shared with this account (allow lists naming it), most recent first. Paginated. Read-only.",
                Kind::Read,
                pages::list_shared,
            )
            .needs(Needs::Anyone),
            Entry::new(
                "create_link",
                "Shorten an http(s) URL; public unless access is given. maxViews counts people only (previews never spend).",
                Kind::Write {
                    destructive: false,
                    idempotent: false,
                },
                links::create_link,
            )
            .needs(Needs::App(App::Link)),
            Entry::new(
                "list_links",
                "List a project's short links, newest first, with views against their budget. Read-only.",
                Kind::Read,
                links::list_links,
            )
            .needs(Needs::App(App::Link)),
            Entry::new(
                "update_link",
                "Change a link's URL (same short URL), access, password, expiry, budget or alias, or archive it.",
                Kind::Write {
                    destructive: true,
                    idempotent: true,
                },
                links::update_link,
            )
            .needs(Needs::App(App::Link)),
            Entry::new(
                "delete_link",
                "Delete a link and its counts for good. Ask the user first; confirm must repeat its code.",
                Kind::Write {
                    destructive: true,
                    idempotent: true,
                },
                links::delete_link,
            )
            .needs(Needs::App(App::Link)),
            Entry::new(
                "link_stats",
                "A link's views per day over 30 days, bot views apart, and referrer hosts. Read-only.",
                Kind::Read,
                links::link_stats,
            )
            .needs(Needs::App(App::Link)),
            // The object API's app is `serve`.
            Entry::new(
                "list_objects",
                "List a project's objects (files shared by URL), newest first. Read-only.",
                Kind::Read,
                objects::list_objects,
            )
            .needs(Needs::App(App::Serve)),
            Entry::new(
                "update_object",
                "Change an object's fields or policy (ask before public), or archive/restore it.",
                Kind::Write {
                    destructive: true,
                    idempotent: true,
                },
                objects::update_object,
            )
            .needs(Needs::App(App::Serve)),
            Entry::new(
                "delete_object",
                "Delete an object, its bytes and short link for good. Ask the user first; confirm must repeat its slug.",
                Kind::Write {
                    destructive: true,
                    idempotent: true,
                },
                objects::delete_object,
            )
            .needs(Needs::App(App::Serve)),
            Entry::new(
                "create_upload",
                "A one-time URL (15 min) and curl line to upload one file as a new object from a shell; its bytes skip the chat. Private unless access is given.",
                Kind::Write {
                    destructive: false,
                    idempotent: false,
                },
                objects::create_upload,
            )
            .needs(Needs::App(App::Serve)),
            // The database API's app is `base`; SQL may change anything, and the keys may
            // turn the data API on, so every database tool but the list writes.
            Entry::new(
                "list_databases",
                "List a project's PostgreSQL databases, newest first, with size, whether the data API is on and the tables open to the anon key; available is false when the server has no database service. Read-only.",
                Kind::Read,
                databases::list_databases,
            )
            .needs(Needs::App(App::Base)),
            Entry::new(
                "create_database",
                "Create a PostgreSQL database (slug unique on the server); expiresAt makes a scratch one, dropped then. Then use run_sql on it.",
                Kind::Write {
                    destructive: false,
                    idempotent: false,
                },
                databases::create_database,
            )
            .needs(Needs::App(App::Base)),
            Entry::new_with_text(
                "run_sql",
                "Run SQL on a database (id or slug) as its owner; returns the last statement's columns, rows (at most 1,000) and rowCount. A PostgreSQL error is a tool error with its SQLSTATE. Ask the user before SQL that drops or deletes data.",
                Kind::Write {
                    destructive: true,
                    idempotent: false,
                },
                databases::run_sql,
                Some(databases::sql_table),
            )
            .needs(Needs::App(App::Base)),
            Entry::new(
                "database_keys",
                "The url, restUrl and anon key a page needs to use a database (id or slug) with Supabase's clients, turning its data API on if off. Only the anon key, never the service role key. It is public: give every table row-level security policies before real data goes in.",
                Kind::Write {
                    destructive: false,
                    idempotent: true,
                },
                databases::database_keys,
            )
            .needs(Needs::App(App::Base)),
            Entry::new(
                "rotate_database_keys",
                "Replace a database's (id or slug) keys after a leak: the old anon and service role keys and users' tokens stop working at once. Returns the new anon key. Ask the user first.",
                Kind::Write {
                    destructive: true,
                    idempotent: false,
                },
                databases::rotate_database_keys,
            )
            .needs(Needs::App(App::Base)),
        ])
    })
}

/// Every tool, in a fixed order (clients cache the list).
#[must_use]
pub fn catalogue() -> &'static [Tool] {
    registry().catalogue()
}

/// Whether `principal` sees tool `name` (never a tool that does not exist): as its entry
/// in the table says.
#[must_use]
pub fn visible_to(principal: &Principal, name: &str) -> bool {
    registry().visible_to(principal, name)
}

/// The tools `principal` may call, in catalogue order.
#[must_use]
pub fn listed_for(principal: &Principal) -> Vec<Tool> {
    registry().listed_for(principal)
}

/// Runs tool `name` for `caller`; `None` when no such tool exists (a protocol error).
pub async fn call(
    state: &AppState,
    limiter: &Limiter,
    caller: &Caller,
    name: &str,
    args: Option<JsonObject>,
) -> Option<CallToolResult> {
    registry().call(state, limiter, caller, name, args).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_schemas_annotations_and_a_short_description() {
        for t in catalogue() {
            assert!(t.output_schema.is_some(), "{}", t.name);
            assert!(t.annotations.is_some(), "{}", t.name);
            let description = t.description.as_deref().unwrap_or_default();
            assert!(
                !description.is_empty() && description.len() <= 300,
                "{}",
                t.name
            );
            assert_eq!(
                t.input_schema.get("type").and_then(|v| v.as_str()),
                Some("object")
            );
        }
    }

    #[test]
    fn the_whole_list_stays_under_twenty_five_kilobytes() {
        // 20 KiB held the page, link and object tools; the five database tools take 4 more.
        let json = serde_json::to_string(catalogue()).unwrap_or_default();
        assert!(json.len() < 25 * 1024, "tools/list is {} bytes", json.len());
    }

    #[test]
    fn object_tools_follow_the_serve_app() {
        use quire_kernel::{AccountId, Apps, KeyId, PrincipalKind, ProjectId, Tier};
        let with = |kind| Principal {
            account_id: AccountId::new(),
            kind,
            home_project_id: ProjectId::new(),
            is_platform_admin: false,
        };
        let key = |apps: &[App]| {
            with(PrincipalKind::Key {
                key_id: KeyId::new(),
                tier: Tier::App(Apps::new(apps.iter().copied()).unwrap_or_else(|| unreachable!())),
            })
        };
        let names = |p: &Principal| -> Vec<String> {
            listed_for(p)
                .into_iter()
                .map(|t| t.name.into_owned())
                .filter(|n| n.contains("object") || n == "create_upload")
                .collect()
        };
        assert_eq!(
            names(&key(&[App::Serve])),
            [
                "list_objects",
                "update_object",
                "delete_object",
                "create_upload"
            ]
        );
        assert!(names(&key(&[App::Page, App::Link])).is_empty());
        let page_reader = with(PrincipalKind::OAuthClient {
            client_id: "c".into(),
            scopes: quire_kernel::Scopes::from_words(["page:read"])
                .unwrap_or_else(|| unreachable!()),
        });
        assert!(names(&page_reader).is_empty());
    }
}
