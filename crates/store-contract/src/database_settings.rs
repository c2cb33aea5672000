//! The data API's settings on a database's record: written whole as the domain gives them,
//! each field read back as written, only on a ready record, and only over the settings the
//! writer read (so of two racing changes neither undoes the other unseen).

use std::sync::Arc;

use quire_accounts::AccountStore;
use quire_databases::{DataApiSettings, Database, DatabaseRecords};
use quire_kernel::{Clock, DatabaseId};
use quire_testkit::fixtures::FixedClock;
use time::Duration;
use uuid::Uuid;

use super::databases::{database_in, ready_database};
use super::support::seed;

fn everything_on() -> DataApiSettings {
    DataApiSettings {
        exposed_schemas: vec!["api".into(), "public".into(), "Reports_2$".into()],
        max_rows: Some(1_000_000),
        aggregates: true,
        explain: true,
        tx_rollback: true,
    }
}

pub(super) async fn data_api_settings_change_only_from_the_settings_read<
    S: AccountStore + DatabaseRecords + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;

    // A provisioning record takes no settings; a new one has PostgREST's defaults.
    let d = database_in(&ann, ann.project.id, "tuned", &clock);
    s.insert_database(&d).await.unwrap();
    let defaults = DataApiSettings::default();
    let on = everything_on();
    assert!(
        !s.set_data_api_settings(d.id, &defaults, &on, clock.now())
            .await
            .unwrap()
    );
    s.delete_database(d.id).await.unwrap();
    let d = ready_database(s.as_ref(), &d, &clock).await;
    assert_eq!(
        s.database(d.id).await.unwrap().unwrap().data_api_settings,
        defaults
    );

    clock.advance(Duration::seconds(1));
    let at = clock.now();
    assert!(
        s.set_data_api_settings(d.id, &defaults, &on, at)
            .await
            .unwrap()
    );
    let changed = Database {
        data_api_settings: on.clone(),
        updated_at: at,
        ..d.clone()
    };
    assert_eq!(s.database(d.id).await.unwrap(), Some(changed.clone()));
    assert_eq!(
        s.database_by_slug("tuned").await.unwrap(),
        Some(changed.clone())
    );

    // Written over settings that are no longer there: nothing changes, whichever field
    // differs (a cap of rows and none included).
    let later = at + Duration::seconds(1);
    let mut stale = vec![defaults.clone()];
    let changes: [fn(&mut DataApiSettings); 6] = [
        |x| x.max_rows = None,
        |x| x.max_rows = Some(5),
        |x| x.exposed_schemas.truncate(2),
        |x| x.aggregates = false,
        |x| x.explain = false,
        |x| x.tx_rollback = false,
    ];
    for change in changes {
        let mut other = on.clone();
        change(&mut other);
        stale.push(other);
    }
    for from in &stale {
        assert!(
            !s.set_data_api_settings(d.id, from, &defaults, later)
                .await
                .unwrap(),
            "{from:?}"
        );
    }
    assert_eq!(s.database(d.id).await.unwrap(), Some(changed));

    // Over the settings read: back to the defaults, a cap of none among them.
    assert!(
        s.set_data_api_settings(d.id, &on, &defaults, later)
            .await
            .unwrap()
    );
    let back = s.database(d.id).await.unwrap().unwrap();
    assert_eq!(back.data_api_settings, defaults);
    assert_eq!(back.updated_at, later);

    // Gone, or being deleted: `false`.
    assert!(
        !s.set_data_api_settings(DatabaseId(Uuid::now_v7()), &defaults, &on, later)
            .await
            .unwrap()
    );
    assert!(s.mark_deleting(d.id, later).await.unwrap());
    assert!(
        !s.set_data_api_settings(d.id, &defaults, &on, later)
            .await
            .unwrap()
    );
}
