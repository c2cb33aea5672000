//! SQLite keeps times as text: the text must sort as the times do and read back exactly.

use quire_store::SQLITE_TIME;
use time::{OffsetDateTime, PrimitiveDateTime};

#[test]
fn sqlite_time_text_sorts_as_time() {
    let a = OffsetDateTime::from_unix_timestamp(1_700_000_000).unwrap();
    let b = a + time::Duration::microseconds(1);
    let fa = a.format(SQLITE_TIME).unwrap();
    let fb = b.format(SQLITE_TIME).unwrap();
    assert!(fa < fb, "{fa} {fb}");
    assert_eq!(fa.len(), fb.len());
    assert_eq!(
        PrimitiveDateTime::parse(&fb, SQLITE_TIME)
            .unwrap()
            .assume_utc(),
        b
    );
}
