//! The metrics endpoint over HTTP, on both databases: `GET /metrics` on
//! `QUIRE_METRICS_LISTEN` only, never on the public listeners, counting exactly what the
//! server was asked to do: API requests by route template and status, pages-origin answers
//! and bytes, cache lookups, view leases of a budget, publishes, a mail sent off the request
//! path, janitor runs, and the pool and connections read at the scrape. No secret and no raw
//! path reaches a label.

use serde_json::json;

use crate::dashboard::Browser;
use crate::harness::{Backend, Server, TestDb, eventually, on_both_backends};
use crate::serving::{PAGES, publish, site, visit, with};

on_both_backends!(the_metrics_count_what_the_server_did_and_only_there);

/// The sum of the samples of `name` whose labels include every pair of `labels`; `None`
/// when there is none.
pub(crate) fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let mut found = None;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let Some((series, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let (series_name, series_labels) = match series.split_once('{') {
            Some((n, rest)) => (n, rest.strip_suffix('}').unwrap_or(rest)),
            None => (series, ""),
        };
        if series_name != name {
            continue;
        }
        let pairs: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
        if pairs.iter().all(|p| {
            series_labels
                .split("\",")
                .any(|l| l.trim_end_matches('"') == p.trim_end_matches('"'))
        }) {
            *found.get_or_insert(0.0) += value.parse::<f64>().unwrap();
        }
    }
    found
}

pub(crate) async fn scrape(srv: &Server) -> String {
    let addr = srv
        .metrics
        .as_deref()
        .expect("the metrics listener's address");
    let r = srv
        .http
        .get(format!("http://{addr}/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let kind = r.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(kind.starts_with("text/plain; version=0.0.4"), "{kind}");
    r.text().await.unwrap()
}

async fn the_metrics_count_what_the_server_did_and_only_there(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let srv = db.start_with(&[
        ("QUIRE_METRICS_LISTEN", "127.0.0.1:0"),
        ("QUIRE_JANITOR_INTERVAL_SECS", "1"),
    ]);
    // Not on either public listener.
    srv.call("GET", "/metrics", None, None)
        .await
        .assert_status(404);
    assert_eq!(visit(&srv, "/metrics").await.status, 404);

    let projects = "/api/platform/v1/projects";
    for _ in 0..3 {
        srv.get(projects, &ann.key).await.assert_status(200);
    }
    // The last character changed (a key ending in `x` would otherwise stay itself).
    let last = if ann.key.ends_with('x') { 'y' } else { 'x' };
    let wrong_key = format!("{}{last}", &ann.key[..ann.key.len() - 1]);
    srv.get(projects, &wrong_key)
        .await
        .assert_error(401, "invalid_api_key");
    let public = publish(&srv, &ann.key, site("open")).await;
    let budgeted = publish(&srv, &ann.key, with(site("counted"), "maxViews", json!(5))).await;
    let page_id = public["id"].as_str().unwrap();
    srv.get(&format!("{PAGES}/{page_id}"), &ann.key)
        .await
        .assert_status(200);

    let mut bytes = 0;
    for _ in 0..3 {
        let r = visit(&srv, "/ann/open/").await;
        assert_eq!(r.status, 200);
        bytes += r.text.len();
    }
    let mut statuses = Vec::new();
    for _ in 0..7 {
        let r = visit(&srv, "/ann/counted/").await;
        statuses.push(r.status);
        bytes += r.text.len();
    }
    assert_eq!(statuses, [200, 200, 200, 200, 200, 410, 410]);
    // A password reset: its mail is sent off the request path.
    let reset = Browser::new(&srv)
        .post("/account/reset", &[("email", "ann@example.com")])
        .await;
    assert_eq!(reset.status, 200);

    eventually("a janitor run and the reset mail are counted", || async {
        let text = scrape(&srv).await;
        sample(&text, "quire_janitor_runs_total", &[]).is_some_and(|n| n >= 1.0)
            && sample(&text, "quire_mail_dispatched_total", &[("outcome", "sent")]) == Some(1.0)
    })
    .await;
    let text = scrape(&srv).await;

    let requests = |method, route, status| {
        sample(
            &text,
            "quire_http_requests_total",
            &[("method", method), ("route", route), ("status", status)],
        )
    };
    assert_eq!(requests("GET", projects, "200"), Some(3.0), "{text}");
    assert_eq!(requests("GET", projects, "401"), Some(1.0));
    assert_eq!(requests("POST", PAGES, "201"), Some(2.0));
    // The route as registered, never the page's id.
    assert_eq!(requests("GET", "/api/page/v1/pages/{id}", "200"), Some(1.0));
    assert!(!text.contains(page_id) && !text.contains(&ann.key[8..]));
    assert_eq!(
        sample(
            &text,
            "quire_http_request_duration_seconds_count",
            &[("method", "GET"), ("route", projects)],
        ),
        Some(4.0)
    );
    assert!(text.contains("# TYPE quire_http_request_duration_seconds histogram"));

    let pages = |status| sample(&text, "quire_pages_requests_total", &[("status", status)]);
    assert_eq!((pages("200"), pages("410")), (Some(8.0), Some(2.0)));
    assert_eq!(pages("404"), Some(1.0));
    let sent = sample(&text, "quire_pages_response_bytes_total", &[]).unwrap();
    assert!(
        sent >= bytes as f64,
        "{sent} bytes counted, {bytes} received"
    );
    assert_eq!(
        sample(&text, "quire_pages_request_duration_seconds_count", &[]),
        Some(11.0)
    );
    let lookups = |cache, result| {
        sample(
            &text,
            "quire_cache_lookups_total",
            &[("cache", cache), ("result", result)],
        )
        .unwrap_or(0.0)
    };
    assert!(lookups("serving_pages_front", "hit") >= 1.0);
    assert!(lookups("serving_pages_front", "miss") >= 1.0);
    assert!(lookups("serving_files", "hit") >= 1.0);
    assert!(lookups("api_keys", "hit") >= 1.0);

    // Each of the 5 views came from a block of one (near the end of a budget), then none.
    assert_eq!(
        sample(&text, "quire_budget_views_leased_total", &[]),
        Some(5.0)
    );
    assert_eq!(
        sample(&text, "quire_budget_leases_total", &[("result", "granted")]),
        Some(5.0)
    );
    assert!(
        sample(
            &text,
            "quire_budget_leases_total",
            &[("result", "exhausted")]
        )
        .is_some_and(|n| n >= 1.0)
    );

    let published = |outcome| {
        sample(
            &text,
            "quire_publish_duration_seconds_count",
            &[("operation", "publish"), ("outcome", outcome)],
        )
    };
    assert_eq!(published("ok"), Some(2.0));
    let size = |page: &serde_json::Value| page["sizeBytes"].as_f64().unwrap();
    assert_eq!(
        sample(
            &text,
            "quire_publish_bytes_sum",
            &[("operation", "publish")]
        ),
        Some(size(&public) + size(&budgeted))
    );

    assert_eq!(sample(&text, "quire_mail_queue_depth", &[]), Some(0.0));
    assert_eq!(
        sample(&text, "quire_janitor_pass_failures_total", &[]),
        None
    );
    let pool = |state| sample(&text, "quire_db_pool_connections", &[("state", state)]).unwrap();
    assert!(pool("max") >= 1.0 && pool("open") <= pool("max") && pool("in_use") <= pool("open"));
    assert!(sample(&text, "quire_db_pool_wait_seconds_count", &[]).is_some_and(|n| n > 0.0));
    // The scrape's own connection is open on neither public listener.
    assert!(sample(&text, "quire_open_connections", &[("listener", "api")]).is_some());
    assert!(sample(&text, "quire_open_connections", &[("listener", "pages")]).is_some());
}
