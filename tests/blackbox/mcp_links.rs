//! The link tools of the agent endpoint, on both databases: shorten, list, change, count
//! and delete a link with the REST API's rules and codes.

use serde_json::json;

use crate::harness::{Backend, on_both_backends, setup};
use crate::mcp::{call, tool_error};

on_both_backends!(agents_shorten_change_count_and_delete_links);

async fn agents_shorten_change_count_and_delete_links(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let made = call(
        &srv,
        &ann.key,
        "create_link",
        json!({"url": "https://example.com/report", "alias": "agent-link", "max_views": 5}),
    )
    .await;
    assert_eq!(made.status, 200, "{}", made.text);
    let link = &made.body["result"]["structuredContent"];
    assert_eq!(
        link["shortUrl"],
        format!("{}/s/agent-link", srv.pages),
        "{}",
        made.text
    );
    assert_eq!(link["access"], "public");
    assert_eq!(link["maxViews"], 5);

    let refused = tool_error(
        &call(
            &srv,
            &ann.key,
            "create_link",
            json!({"url": "ftp://example.com/"}),
        )
        .await,
    );
    assert!(
        refused.starts_with("invalid_url: url is not an absolute http or https URL"),
        "{refused}"
    );
    let taken = tool_error(
        &call(
            &srv,
            &ann.key,
            "create_link",
            json!({"url": "https://example.com/", "alias": "agent-link"}),
        )
        .await,
    );
    assert!(taken.starts_with("alias_conflict:"), "{taken}");

    let listed = call(&srv, &ann.key, "list_links", json!({"q": "report"})).await;
    assert_eq!(
        listed.body["result"]["structuredContent"]["links"][0]["id"],
        link["id"]
    );

    let changed = call(
        &srv,
        &ann.key,
        "update_link",
        json!({"link": "agent-link", "url": "https://example.org/report-v2", "max_views": null}),
    )
    .await;
    let changed = &changed.body["result"]["structuredContent"];
    assert_eq!(changed["url"], "https://example.org/report-v2");
    assert_eq!(changed["shortUrl"], link["shortUrl"]);
    assert!(changed.get("maxViews").is_none(), "{changed}");

    let stats = call(&srv, &ann.key, "link_stats", json!({"link": "agent-link"})).await;
    assert_eq!(
        stats.body["result"]["structuredContent"]["total"], 0,
        "{}",
        stats.text
    );

    let unconfirmed = tool_error(
        &call(
            &srv,
            &ann.key,
            "delete_link",
            json!({"link": "agent-link", "confirm": "yes"}),
        )
        .await,
    );
    assert!(unconfirmed.starts_with("invalid_request:"), "{unconfirmed}");
    let deleted = call(
        &srv,
        &ann.key,
        "delete_link",
        json!({"link": "agent-link", "confirm": "agent-link"}),
    )
    .await;
    assert_eq!(
        deleted.body["result"]["structuredContent"]["deleted"],
        link["id"]
    );
    let gone = tool_error(&call(&srv, &ann.key, "link_stats", json!({"link": "agent-link"})).await);
    assert!(gone.starts_with("not_found:"), "{gone}");

    // A key without `link` is refused the link tools, with the scope's code.
    let (page_key, _) = srv.mint(&ann.key, &["page"], None).await;
    let hidden = tool_error(&call(&srv, &page_key, "list_links", json!({})).await);
    assert!(hidden.starts_with("insufficient_scope:"), "{hidden}");
}
