//! The tables a database leaves open to `anon`, on the fakes: a fetched database says
//! them, a list does not until asked (each costs a connection to its database), the answer
//! to SQL says what it left, and a database whose tables cannot be read says nothing
//! rather than failing.

use std::sync::Arc;

use quire_databases::{NewDatabase, OpenTable};
use quire_testkit::World;
use quire_testkit::databases::MemoryCluster;

fn notes() -> OpenTable {
    OpenTable {
        name: "notes".into(),
        kind: "table".into(),
        privileges: vec!["select".into(), "insert".into()],
    }
}

#[tokio::test]
async fn a_database_says_its_open_tables_and_a_list_when_asked() {
    let cluster = Arc::new(MemoryCluster::new());
    let w = World::builder()
        .accounts(&["ann"])
        .cluster(cluster.clone())
        .build()
        .await;
    let ann = w.master("ann");
    let databases = &w.services.databases;
    let new = |slug: &str| NewDatabase {
        slug: slug.into(),
        ..NewDatabase::default()
    };
    let open = databases.create(&ann, new("open")).await.unwrap();
    let closed = databases.create(&ann, new("closed")).await.unwrap();
    let unread = databases.create(&ann, new("unread")).await.unwrap();
    cluster.open_tables_in(&open.database.names(), vec![notes()]);
    cluster.open_tables_unreadable(&unread.database.names(), true);

    let id = |v: &quire_databases::DatabaseView| v.database.id;
    let got = databases.get(&ann, id(&open)).await.unwrap();
    assert_eq!(got.open_tables, Some(vec![notes()]));
    let got = databases.get(&ann, id(&closed)).await.unwrap();
    assert_eq!(got.open_tables, Some(vec![]));
    // Not read: said as unknown, the rest of the database as ever.
    let got = databases.get(&ann, id(&unread)).await.unwrap();
    assert_eq!(
        (got.open_tables, got.database.slug.as_str()),
        (None, "unread")
    );

    let (mut listed, _) = databases.list(&ann, None).await.unwrap();
    assert!(listed.iter().all(|v| v.open_tables.is_none()));
    databases.open_tables_of(&mut listed).await;
    let said: Vec<_> = listed
        .iter()
        .map(|v| (v.database.slug.as_str(), v.open_tables.clone()))
        .collect();
    assert_eq!(
        said,
        [
            ("unread", None),
            ("closed", Some(vec![])),
            ("open", Some(vec![notes()]))
        ]
    );

    // The SQL's answer says what it left.
    let ran = databases.query(&ann, id(&open), "select 1").await.unwrap();
    assert_eq!(ran.open_tables, Some(vec![notes()]));
    let ran = databases
        .query(&ann, id(&unread), "select 1")
        .await
        .unwrap();
    assert_eq!(ran.open_tables, None);
}
