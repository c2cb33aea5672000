//! The `tools/list` answer as a client reads it (names, descriptions, input and output
//! schemas, annotations), compared with a reviewed snapshot: a description, schema or hint
//! that changes reaches every model that uses the endpoint, so it shows in review. The list
//! depends on the credential; the full one (a master key's) is pinned whole, and the
//! smallest any credential sees is pinned by name, with that credential.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use quire_kernel::{
    AccountId, App, Apps, KeyId, Principal, PrincipalKind, ProjectId, Scopes, Tier,
};
use serde_json::{Value, json};

use crate::tools::{catalogue, listed_for};

fn principal(kind: PrincipalKind) -> Principal {
    Principal {
        account_id: AccountId::new(),
        kind,
        home_project_id: ProjectId::new(),
        is_platform_admin: false,
    }
}

fn key(tier: Tier) -> Principal {
    principal(PrincipalKind::Key {
        key_id: KeyId::new(),
        tier,
    })
}

/// Every non-empty subset of `items`, in a fixed order.
fn subsets<T: Copy>(items: &[T]) -> Vec<Vec<T>> {
    (1..1_u32 << items.len())
        .map(|mask| {
            items
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, item)| *item)
                .collect()
        })
        .collect()
}

/// Every kind of credential the endpoint admits, labelled: a master key, the dashboard's
/// session, an app key of each set of apps, a bearer token of each set of scope words (the
/// registry's tests walk them too).
pub(crate) fn credentials() -> Vec<(String, Principal)> {
    let mut all = vec![
        ("master key".to_owned(), key(Tier::Master)),
        ("dashboard".to_owned(), principal(PrincipalKind::Dashboard)),
    ];
    for apps in subsets(&App::ALL) {
        let label = apps.iter().map(|a| a.as_str()).collect::<Vec<_>>();
        let apps = Apps::new(apps).unwrap();
        all.push((
            format!("app key: {}", label.join(" ")),
            key(Tier::App(apps)),
        ));
    }
    for words in subsets(&Scopes::vocabulary()) {
        let scopes = Scopes::from_words(words.iter().copied()).unwrap();
        all.push((
            format!("OAuth client: {}", words.join(" ")),
            principal(PrincipalKind::OAuthClient {
                client_id: "client".into(),
                scopes,
            }),
        ));
    }
    all
}

fn names(principal: &Principal) -> Vec<String> {
    listed_for(principal)
        .into_iter()
        .map(|t| t.name.into_owned())
        .collect()
}

#[test]
fn the_full_list_is_the_reviewed_catalogue() {
    let full = listed_for(&key(Tier::Master));
    // A master key sees every tool: the snapshot is the whole catalogue.
    assert_eq!(full, catalogue());
    insta::assert_json_snapshot!(json!({ "tools": full }));
}

#[test]
fn the_smallest_list_is_the_reviewed_one() {
    let (credential, smallest) = credentials()
        .into_iter()
        .map(|(label, p)| (label, names(&p)))
        .min_by_key(|(_, names)| names.len())
        .unwrap();
    let answer: Value = json!({ "credential": credential, "tools": smallest });
    insta::assert_json_snapshot!(answer);
}
