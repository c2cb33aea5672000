//! The tools: their catalogue (names, descriptions that say their side effects, input and
//! output schemas, annotations) and their calls, each the same use case a REST handler
//! calls, refused with the same codes. A refusal is a tool result with `isError: true` and
//! the text `"<code>: <message>. <next step>"`, so the model can correct itself.

mod args;
mod calls;
mod databases;
mod links;
mod objects;
mod output;

use std::sync::{Arc, OnceLock};

use quire_edge::ApiError;
use quire_kernel::{App, Principal};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;

pub use calls::call;

/// The tools that change something: hidden from, and refused to, a read-only credential.
pub const WRITE_TOOLS: [&str; 4] = ["publish_page", "add_files", "update_page", "delete_page"];

/// The link tools that change something: they need write access to links.
pub const LINK_WRITE_TOOLS: [&str; 3] = ["create_link", "update_link", "delete_link"];

/// The link tools that only read: they need `link` in the credential's apps.
pub const LINK_READ_TOOLS: [&str; 2] = ["list_links", "link_stats"];

/// The object tools that change something: they need write access to `serve`, the app of
/// the object API.
pub const OBJECT_WRITE_TOOLS: [&str; 3] = ["update_object", "delete_object", "create_upload"];

/// The object tools that only read: they need `serve` in the credential's apps.
pub const OBJECT_READ_TOOLS: [&str; 1] = ["list_objects"];

/// The database tools that change something (SQL may; the keys may turn the data API on,
/// or be rotated): they need write access to `base`, the app of the database API.
pub const DATABASE_WRITE_TOOLS: [&str; 4] = [
    "create_database",
    "run_sql",
    "database_keys",
    "rotate_database_keys",
];

/// The database tools that only read: they need `base` in the credential's apps.
pub const DATABASE_READ_TOOLS: [&str; 1] = ["list_databases"];

/// How a tool behaves, as its annotations say.
#[derive(Debug, Clone, Copy)]
struct Kind {
    read_only: bool,
    destructive: bool,
    idempotent: bool,
}

const READ: Kind = Kind {
    read_only: true,
    destructive: false,
    idempotent: true,
};

/// A schema as short as it can be and still say the same to a client: no `$schema` (the
/// 2020-12 default), no integer `format`s (`minimum` says unsigned), no `default: null`, and
/// an optional field that is never `null` typed as what it is (only fields whose description
/// names `null` take it), no doc of a named type. An output schema keeps only names and
/// types: the model reads the values themselves, and the tool's description says what they
/// mean. The whole list stays a few thousand tokens of the model's context.
fn compact(schema: &mut JsonObject, output: bool) {
    schema.remove("$schema");
    if schema.get("default") == Some(&serde_json::Value::Null) {
        schema.remove("default");
    }
    if output {
        for key in ["description", "format", "minimum", "required"] {
            schema.remove(key);
        }
    } else if schema.remove("format").is_some() && schema.get("minimum") == Some(&0.into()) {
        schema.insert("minimum".into(), 0.into());
    }
    let required: Vec<String> = schema
        .get("required")
        .and_then(|r| r.as_array())
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if let Some(serde_json::Value::Object(properties)) = schema.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            let serde_json::Value::Object(property) = property else {
                continue;
            };
            let says_null = property
                .get("description")
                .and_then(|d| d.as_str())
                .is_some_and(|d| d.contains("`null`"));
            if !required.contains(name)
                && !says_null
                && let Some(serde_json::Value::Array(types)) = property.get("type")
                && types.len() == 2
                && let Some(only) = types.iter().find(|t| t.as_str() != Some("null")).cloned()
            {
                property.insert("type".into(), only);
            }
            compact(property, output);
        }
    }
    for key in ["items", "$defs"] {
        match schema.get_mut(key) {
            Some(serde_json::Value::Object(inner)) if key == "items" => compact(inner, output),
            Some(serde_json::Value::Object(defs)) => {
                for def in defs.values_mut() {
                    if let serde_json::Value::Object(def) = def {
                        // A type's own doc (`One file of a bundle.`): its name says it.
                        def.remove("description");
                        compact(def, output);
                    }
                }
            }
            _ => {}
        }
    }
}

fn compacted(schema: &Arc<JsonObject>, output: bool) -> Arc<JsonObject> {
    let mut schema = schema.as_ref().clone();
    compact(&mut schema, output);
    Arc::new(schema)
}

fn tool<I: JsonSchema + 'static, O: JsonSchema + 'static>(
    name: &'static str,
    description: &'static str,
    kind: Kind,
) -> Tool {
    let mut tool = Tool::new(name, description, Arc::new(JsonObject::new()))
        .with_input_schema::<I>()
        .with_output_schema::<O>();
    tool.input_schema = compacted(&tool.input_schema, false);
    tool.output_schema = tool.output_schema.as_ref().map(|s| compacted(s, true));
    let annotations = ToolAnnotations::new()
        .read_only(kind.read_only)
        .open_world(false);
    // The destructive and idempotent hints mean nothing for a read-only tool (MCP says so).
    tool.annotate(if kind.read_only {
        annotations
    } else {
        annotations
            .destructive(kind.destructive)
            .idempotent(kind.idempotent)
    })
}

/// Every tool, in a fixed order (clients cache the list).
#[must_use]
pub fn catalogue() -> &'static [Tool] {
    static TOOLS: OnceLock<Vec<Tool>> = OnceLock::new();
    TOOLS.get_or_init(|| {
        let mut tools = vec![
            tool::<args::NoArgs, output::ProjectsOut>(
                "list_projects",
                "List the account's projects (slug, name, status). Read-only.",
                READ,
            ),
            tool::<args::ListPagesArgs, output::PagesOut>(
                "list_pages",
                "List pages of a project, newest first, with their URLs and access. Paginated: pass nextCursor as cursor. Read-only.",
                READ,
            ),
            tool::<args::GetPageArgs, output::PageDetailOut>(
                "get_page",
                "Get one page by id, slug, public id, alias or URL; optionally its file list (at most 200). Never returns file contents. Read-only.",
                READ,
            ),
            tool::<args::ReadFileArgs, output::FileSliceOut>(
                "read_page_file",
                "Read bytes of one file of a page: 32 KiB by default, at most 256 KiB per call; text as utf8, other bytes as base64. Use offset to continue. Read-only.",
                READ,
            ),
            tool::<args::PublishArgs, output::PublishedOut>(
                "publish_page",
                "Publish a new page from files and return its URL. Private unless access is given: ask the user before making it public. Pass request_id so a retry returns the first result instead of a duplicate.",
                Kind {
                    read_only: false,
                    destructive: false,
                    idempotent: true,
                },
            ),
            tool::<args::AddFilesArgs, output::FilesAddedOut>(
                "add_files",
                "Add files to an existing page; a file at the same path is replaced and visitors see the new content at once. Use it to send a large site in several calls.",
                Kind {
                    read_only: false,
                    destructive: true,
                    idempotent: true,
                },
            ),
            tool::<args::UpdatePageArgs, output::PageOut>(
                "update_page",
                "Change a page's title, slug, access (ask before public), password, expiry, view budget, alias or allow list, or archive/restore it. Visitors are affected at once.",
                Kind {
                    read_only: false,
                    destructive: true,
                    idempotent: true,
                },
            ),
            tool::<args::DeletePageArgs, output::DeletedOut>(
                "delete_page",
                "Delete a page, its files and short link for good; its URLs stop working. Ask the user first; confirm must repeat the page's slug.",
                Kind {
                    read_only: false,
                    destructive: true,
                    idempotent: true,
                },
            ),
            tool::<args::ListSharedArgs, output::SharedOut>(
                "list_shared_pages",
                "List pages other accounts shared with this account (allow lists naming it), most recent first. Paginated. Read-only.",
                READ,
            ),
            tool::<links::CreateLinkArgs, links::LinkOut>(
                "create_link",
                "Shorten an http(s) URL; public unless access is given. maxViews counts people only (previews never spend).",
                Kind {
                    read_only: false,
                    destructive: false,
                    idempotent: false,
                },
            ),
            tool::<links::ListLinksArgs, links::LinksOut>(
                "list_links",
                "List a project's short links, newest first, with views against their budget. Read-only.",
                READ,
            ),
            tool::<links::UpdateLinkArgs, links::LinkOut>(
                "update_link",
                "Change a link's URL (same short URL), access, password, expiry, budget or alias, or archive it.",
                Kind {
                    read_only: false,
                    destructive: true,
                    idempotent: true,
                },
            ),
            tool::<links::DeleteLinkArgs, links::LinkDeletedOut>(
                "delete_link",
                "Delete a link and its counts for good. Ask the user first; confirm must repeat its code.",
                Kind {
                    read_only: false,
                    destructive: true,
                    idempotent: true,
                },
            ),
            tool::<links::LinkArgs, links::LinkStatsOut>(
                "link_stats",
                "A link's views per day over 30 days, bot views apart, and referrer hosts. Read-only.",
                READ,
            ),
            tool::<objects::ListObjectsArgs, objects::ObjectsOut>(
                "list_objects",
                "List a project's objects (files shared by URL), newest first. Read-only.",
                READ,
            ),
            tool::<objects::UpdateObjectArgs, objects::ObjectOut>(
                "update_object",
                "Change an object's fields or policy (ask before public), or archive/restore it.",
                Kind {
                    read_only: false,
                    destructive: true,
                    idempotent: true,
                },
            ),
            tool::<objects::DeleteObjectArgs, objects::ObjectDeletedOut>(
                "delete_object",
                "Delete an object, its bytes and short link for good. Ask the user first; confirm must repeat its slug.",
                Kind {
                    read_only: false,
                    destructive: true,
                    idempotent: true,
                },
            ),
            tool::<objects::CreateUploadArgs, objects::UploadOut>(
                "create_upload",
                "A one-time URL (15 min) and curl line to upload one file as a new object from a shell; its bytes skip the chat. Private unless access is given.",
                Kind {
                    read_only: false,
                    destructive: false,
                    idempotent: false,
                },
            ),
        ];
        tools.extend(databases::catalogue());
        tools
    })
}

/// Whether `principal` sees tool `name`: write tools need write access to pages (links for
/// the link tools, which need `link` even to read; `serve` for the object tools, `base` for
/// the database tools), and
/// `list_projects` a credential that may list projects (not an app key).
#[must_use]
pub fn visible_to(principal: &Principal, name: &str) -> bool {
    if WRITE_TOOLS.contains(&name) {
        return principal.can_write(App::Page);
    }
    if LINK_WRITE_TOOLS.contains(&name) {
        return principal.can_write(App::Link);
    }
    if LINK_READ_TOOLS.contains(&name) {
        return principal.has_app(App::Link);
    }
    if OBJECT_WRITE_TOOLS.contains(&name) {
        return principal.can_write(App::Serve);
    }
    if OBJECT_READ_TOOLS.contains(&name) {
        return principal.has_app(App::Serve);
    }
    if DATABASE_WRITE_TOOLS.contains(&name) {
        return principal.can_write(App::Base);
    }
    if DATABASE_READ_TOOLS.contains(&name) {
        return principal.has_app(App::Base);
    }
    if name == "list_projects" {
        return principal.is_master() || principal.is_oauth_client();
    }
    true
}

/// The tools `principal` may call, in catalogue order.
#[must_use]
pub fn listed_for(principal: &Principal) -> Vec<Tool> {
    catalogue()
        .iter()
        .filter(|t| visible_to(principal, &t.name))
        .cloned()
        .collect()
}

/// A refusal, as the model reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    pub code: String,
    pub message: String,
}

impl ToolError {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Self {
            code: code.to_owned(),
            message: message.into(),
        }
    }

    /// What the model should do next, by code.
    fn next_step(&self) -> String {
        match self.code.as_str() {
            "invalid_request" | "invalid_limit" | "invalid_cursor" | "invalid_body"
            | "invalid_slug" => "Fix the arguments and call again.".into(),
            "sql_error" => "Fix the SQL and call again.".into(),
            "database_service_unavailable" => {
                "Tell the user: the server's operator must turn the database service on.".into()
            }
            "not_found" if self.message.contains("database") => {
                "Check the database with list_databases.".into()
            }
            "not_found" if self.message.contains("object") => {
                "Check the object with list_objects.".into()
            }
            "not_found" => "Check the page with list_pages.".into(),
            "invalid_url" | "url_too_long" | "url_credentials" | "url_loop" | "url_denied" => {
                "Give another http(s) URL.".into()
            }
            "slug_conflict" | "slug_taken" => {
                "Choose another slug (or update the existing page).".into()
            }
            "alias_conflict" => "Choose another alias.".into(),
            "password_required" => "Pass a password, or choose another access.".into(),
            "payload_too_large" => {
                "Send fewer or smaller files: publish a few, then add the rest with add_files."
                    .into()
            }
            "insufficient_scope" if self.message.contains("`base`") => {
                "This credential cannot reach databases; ask the user for a key with the base app."
                    .into()
            }
            "insufficient_scope" => {
                "This credential cannot do this; ask the user for access with the page scope on that project.".into()
            }
            "rate_limited" => "Wait, then retry.".into(),
            _ => "Retry later; if it persists, tell the user.".into(),
        }
    }

    /// `"<code>: <message>. <next step>"`.
    #[must_use]
    pub fn text(&self) -> String {
        format!(
            "{}: {}. {}",
            self.code,
            self.message.trim_end_matches('.'),
            self.next_step()
        )
    }
}

impl From<ApiError> for ToolError {
    fn from(e: ApiError) -> Self {
        Self::new(e.code(), e.message())
    }
}

/// Maps a domain error the way the REST API does (the same code, the same message).
pub(crate) fn refused<E>(e: E) -> ToolError
where
    ApiError: From<E>,
{
    ToolError::from(ApiError::from(e))
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

    #[test]
    fn errors_read_code_message_and_next_step() {
        let e = ToolError::new("slug_conflict", "slug \"a\" is taken.");
        assert_eq!(
            e.text(),
            "slug_conflict: slug \"a\" is taken. Choose another slug (or update the existing page)."
        );
    }
}
