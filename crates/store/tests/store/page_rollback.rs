//! Rollback of a page's file writes: a fault injected inside the transaction that swaps a
//! page's whole manifest (after the old rows are deleted, after the new ones are inserted)
//! leaves the old manifest and totals, and the same replace then succeeds.

use std::sync::Arc;

use quire_accounts::{AccountService, CreateAccount};
use quire_kernel::{Clock, PageId, SystemClock};
use quire_pages::{FileEntry, Limits, Page, PageStatus, PageStore, PutFilesError};
use quire_store::Database;
use quire_testkit::ThreadOffload;

use crate::common;
use common::on_both_databases;

fn file(path: &str, size: u64) -> FileEntry {
    FileEntry {
        path: path.into(),
        size_bytes: size,
        content_type: "text/html; charset=utf-8".into(),
        sha256: format!("{size:0>64}"),
    }
}

async fn replace_files_rolls_back(db: Database) {
    db.migrate().await.expect("migrate");
    let db = Arc::new(db);
    let clock = SystemClock;
    let svc = AccountService::new(db.clone(), Arc::new(clock), Arc::new(ThreadOffload));
    let ann = svc
        .create(CreateAccount {
            password: Some("a long password".into()),
            ..quire_testkit::fixtures::new_account("ann")
        })
        .await
        .expect("create");
    let now = clock.now();
    let old = vec![file("index.html", 3), file("old.css", 4)];
    let page = Page {
        id: PageId::new(),
        public_id: "ROLLBACK01".into(),
        account_id: ann.account.id,
        project_id: ann.project.id,
        slug: "site".into(),
        title: "Site".into(),
        entrypoint: "index.html".into(),
        status: PageStatus::Active,
        size_bytes: 7,
        file_count: 2,
        created_at: now,
        updated_at: now,
        archived_at: None,
        database: None,
    };
    db.insert_pending(&page, &old, now + time::Duration::minutes(1))
        .await
        .unwrap();
    db.mark_ready(page.id).await.unwrap();
    let new = vec![file("index.html", 9)];
    let later = now + time::Duration::minutes(5);
    for step in ["replace_files:cleared", "write_manifest:inserted"] {
        db.fail_at(step);
        let err = db
            .replace_files(page.id, &new, &Limits::default(), later)
            .await
            .unwrap_err();
        assert!(matches!(err, PutFilesError::Infra(_)), "{step}: {err:?}");
        assert_eq!(db.files(page.id).await.unwrap(), old, "{step}");
        let stored = db.page(page.id).await.unwrap().unwrap();
        assert_eq!((stored.size_bytes, stored.file_count), (7, 2), "{step}");
        assert!(stored.updated_at < later, "{step}: updatedAt unchanged");
    }
    let replaced = db
        .replace_files(page.id, &new, &Limits::default(), later)
        .await
        .unwrap();
    assert_eq!(replaced.totals.file_count, 1);
    assert_eq!(db.files(page.id).await.unwrap(), new);
}

on_both_databases!(replace_files_rolls_back,);
