//! Changing a page's fields and policy against the in-memory fakes: a failed link update
//! leaves the record as it was, and the policy fields are checked in the page's order.

#[allow(dead_code)] // the lease tests' clock and timer are not used here
use crate::common;

use quire_pages::{PageError, PatchRequest, PublishRequest};
use quire_testkit::memory::Op;

use common::{publish, publish_aliased, world};

#[tokio::test]
async fn a_failed_link_update_reverts_the_page_record() {
    let w = world().await;
    let view = w.pages.publish(&w.ann, publish("Original")).await.unwrap();
    w.pages
        .publish(&w.ann, publish_aliased("Other", "taken"))
        .await
        .unwrap();
    let before = w.store.snapshot();
    let patch = || PatchRequest {
        title: Some("Renamed".into()),
        slug: Some("renamed".into()),
        status: Some("archived".into()),
        policy: quire_links::PolicyPatch {
            access: Some("public".into()),
            ..quire_links::PolicyPatch::default()
        },
        ..PatchRequest::default()
    };
    w.store.fail(Op::UpdateLink);
    assert!(matches!(
        w.pages.update(&w.ann, view.page.id, patch()).await,
        Err(PageError::Infra(_))
    ));
    w.store.heal();
    assert_eq!(w.store.snapshot(), before, "record not reverted");
    let conflict = PatchRequest {
        policy: quire_links::PolicyPatch {
            alias: Some(Some("taken".into())),
            ..patch().policy
        },
        ..patch()
    };
    assert_eq!(
        w.pages
            .update(&w.ann, view.page.id, conflict)
            .await
            .unwrap_err(),
        PageError::AliasConflict
    );
    assert_eq!(w.store.snapshot(), before);
    let updated = w.pages.update(&w.ann, view.page.id, patch()).await.unwrap();
    assert_eq!(updated.page.title, "Renamed");
    assert!(updated.page.archived_at.is_some());
    assert_eq!(
        updated.link.unwrap().policy.access,
        quire_links::Access::Public
    );
}

#[tokio::test]
async fn password_rules_on_patch() {
    let w = world().await;
    let view = w.pages.publish(&w.ann, publish("P")).await.unwrap();
    let to_password = PatchRequest {
        policy: quire_links::PolicyPatch {
            access: Some("password".into()),
            ..quire_links::PolicyPatch::default()
        },
        ..PatchRequest::default()
    };
    assert_eq!(
        w.pages
            .update(&w.ann, view.page.id, to_password)
            .await
            .unwrap_err(),
        PageError::PasswordRequired
    );
    let with = PatchRequest {
        policy: quire_links::PolicyPatch {
            access: Some("password".into()),
            password: Some(Some("open sesame".into())),
            ..quire_links::PolicyPatch::default()
        },
        ..PatchRequest::default()
    };
    let v = w.pages.update(&w.ann, view.page.id, with).await.unwrap();
    assert!(v.link.unwrap().has_password());
    let stored = w.store.snapshot().links[0].password_hash.clone().unwrap();
    assert!(stored.starts_with("$argon2id$") && !stored.contains("open sesame"));
    let clear = PatchRequest {
        policy: quire_links::PolicyPatch {
            password: Some(None),
            ..quire_links::PolicyPatch::default()
        },
        ..PatchRequest::default()
    };
    assert_eq!(
        w.pages
            .update(&w.ann, view.page.id, clear)
            .await
            .unwrap_err(),
        PageError::PasswordRequired
    );
}

/// Of several bad policy fields, a page is told of the first in its order: on publish the
/// allow list is checked last, after the password; on patch after the alias.
#[tokio::test]
async fn several_bad_policy_fields_are_refused_in_the_pages_order() {
    let w = world().await;
    let bad_alias_and_allow = PublishRequest {
        policy: quire_links::PolicyInput {
            alias: Some("a".into()),
            allow: vec!["nobody_here".into()],
            ..quire_links::PolicyInput::default()
        },
        ..publish("Doubly bad")
    };
    assert!(matches!(
        w.pages.publish(&w.ann, bad_alias_and_allow).await.unwrap_err(),
        PageError::Invalid(m) if m.starts_with("alias ")
    ));
    let no_password_and_bad_allow = PublishRequest {
        policy: quire_links::PolicyInput {
            access: Some("password".into()),
            allow: vec!["nobody_here".into()],
            ..quire_links::PolicyInput::default()
        },
        ..publish("Doubly bad")
    };
    assert_eq!(
        w.pages
            .publish(&w.ann, no_password_and_bad_allow)
            .await
            .unwrap_err(),
        PageError::PasswordRequired
    );
    let view = w.pages.publish(&w.ann, publish("P")).await.unwrap();
    let patch = PatchRequest {
        policy: quire_links::PolicyPatch {
            access: Some("password".into()),
            alias: Some(Some("a".into())),
            allow: Some(vec!["nobody_here".into()]),
            ..quire_links::PolicyPatch::default()
        },
        ..PatchRequest::default()
    };
    assert!(matches!(
        w.pages.update(&w.ann, view.page.id, patch.clone()).await.unwrap_err(),
        PageError::Invalid(m) if m.starts_with("alias ")
    ));
    let patch = PatchRequest {
        policy: quire_links::PolicyPatch {
            alias: None,
            ..patch.policy
        },
        ..patch
    };
    assert!(matches!(
        w.pages.update(&w.ann, view.page.id, patch).await.unwrap_err(),
        PageError::Invalid(m) if m.contains("nobody_here")
    ));
}
