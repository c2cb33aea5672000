//! `quire upload` and `quire objects` as a person uses them: upload a file with a policy,
//! list it, download it back byte for byte, change it, give it new bytes under the same
//! URL, delete it; refusals keep the server's code and exit 1.

use crate::cli::User;
use crate::harness::{Backend, on_both_backends, setup};

on_both_backends!(files_are_uploaded_downloaded_replaced_and_deleted_from_the_cli);

async fn files_are_uploaded_downloaded_replaced_and_deleted_from_the_cli(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let user = User::new(&srv);
    let run = |args: &[&str]| {
        let out = user
            .command(args)
            .current_dir(user.home.path())
            .env("QUIRE_KEY", &ann.key)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    // Over one piece of the upload, and not a whole number of them.
    let bytes: Vec<u8> = (0..700_001u32).map(|i| (i % 251) as u8).collect();
    let file = user.home.path().join("Annual report.pdf");
    std::fs::write(&file, &bytes).unwrap();

    let (code, out, err) = run(&[
        "--json",
        "upload",
        file.to_str().unwrap(),
        "--title",
        "Annual report",
        "--access",
        "public",
        "--max-views",
        "5",
        "--alias",
        "annual",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let object: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(object["filename"], "Annual report.pdf");
    assert_eq!(object["contentType"], "application/pdf");
    assert_eq!(object["sizeBytes"], bytes.len());
    assert_eq!(object["sha256"], crate::harness::sha256sum(&bytes));
    assert_eq!(object["maxViews"], 5);
    assert_eq!(object["slug"], "annual-report");

    let (_, listed, _) = run(&["objects", "list"]);
    assert!(
        listed.contains(&format!("{}/annual-report", srv.owner("ann")))
            && listed.contains("0/5 downloads"),
        "{listed}"
    );

    let (code, _, err) = run(&["objects", "download", "annual", "-o", "back.pdf"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        std::fs::read(user.home.path().join("back.pdf")).unwrap(),
        bytes
    );

    let (code, out, err) = run(&[
        "--json",
        "objects",
        "update",
        "annual-report",
        "--title",
        "Report 2026",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let updated: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(updated["title"], "Report 2026");

    let second = user.home.path().join("v2.pdf");
    std::fs::write(&second, b"second version").unwrap();
    let (code, out, err) = run(&[
        "--json",
        "objects",
        "replace",
        "annual",
        second.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let replaced: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(replaced["id"], object["id"]);
    assert_eq!(replaced["url"], object["url"]);
    assert_eq!(replaced["sizeBytes"], 14);

    // A refusal keeps the server's code.
    let (code, _, err) = run(&["upload", file.to_str().unwrap(), "--alias", "annual"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("alias_conflict"), "{err}");

    let (code, _, err) = run(&["objects", "delete", "annual"]);
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = run(&["objects", "get", "annual"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("no object of yours"), "{err}");
}
