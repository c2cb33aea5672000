//! `quire links` as a person uses it: shorten a URL, list with views against the budget,
//! change the target under the same short URL, read the counts, draw the QR code, delete.

use std::time::Duration;

use crate::cli::User;
use crate::harness::{Backend, eventually, on_both_backends, setup};

on_both_backends!(links_are_shortened_changed_counted_and_deleted_from_the_cli);

async fn links_are_shortened_changed_counted_and_deleted_from_the_cli(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let user = User::new(&srv);
    let run = |args: &[&str]| {
        let out = user
            .command(args)
            .env("QUIRE_KEY", &ann.key)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (code, out, err) = run(&[
        "links",
        "create",
        "https://example.com/launch",
        "--alias",
        "cli-link",
        "--max-views",
        "3",
        "--title",
        "Launch",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let short = format!("{}/s/cli-link", srv.pages);
    assert!(
        out.contains(&short) && out.contains("https://example.com/launch"),
        "{out}"
    );

    let (_, listed, _) = run(&["links", "list"]);
    assert!(
        listed.contains(&short) && listed.contains("0/3 views"),
        "{listed}"
    );

    let (code, out, err) = run(&[
        "--json",
        "links",
        "update",
        "cli-link",
        "--url",
        "https://example.org/v2",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let updated: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(updated["url"], "https://example.org/v2");
    assert_eq!(updated["shortUrl"], short);

    let client = crate::harness::client()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let followed = client.get(&short).send().await.unwrap();
    assert_eq!(followed.status().as_u16(), 302);
    assert_eq!(followed.headers()["location"], "https://example.org/v2");
    eventually("the view shows in the stats", || async {
        let (_, out, _) = run(&["--json", "links", "stats", "cli-link"]);
        serde_json::from_str::<serde_json::Value>(&out).is_ok_and(|s| s["total"] == 1)
    })
    .await;
    let (_, stats, _) = run(&["links", "stats", "cli-link"]);
    assert!(stats.starts_with("1 views"), "{stats}");

    let (code, drawn, _) = run(&["links", "qr", "cli-link"]);
    assert_eq!(code, Some(0));
    assert!(drawn.contains('█') && drawn.contains(&short), "{drawn}");
    let svg = user.home.path().join("link.svg");
    let (code, _, err) = run(&["links", "qr", "cli-link", "--svg", svg.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));

    let (code, _, err) = run(&["links", "create", "ftp://example.com/"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("invalid_url"), "{err}");

    let (code, out, _) = run(&["links", "delete", "cli-link"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("Deleted"), "{out}");
    let (code, _, err) = run(&["links", "get", "cli-link"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("no link of yours"), "{err}");
}
