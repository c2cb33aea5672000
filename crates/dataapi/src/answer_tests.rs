//! What the answer says besides its rows: the schema by profile (and the `search_path` the
//! plan asks for), `max-affected`, an upsert's status, CSV, `Preference-Applied`.

use crate::tests::{cache, req};
use crate::{PlanRow, RestRequest, SchemaCache, plan, respond};

fn row(page_total: i64) -> PlanRow {
    PlanRow {
        page_total,
        body: Some("[]".into()),
        ..PlanRow::default()
    }
}

#[test]
fn a_profile_picks_an_exposed_schema_and_the_answer_names_it() {
    let mut personal = cache().table("items").unwrap().clone();
    personal.schema = "personal".into();
    let two = SchemaCache::from_parts(
        vec![cache().table("items").unwrap().clone(), personal],
        Vec::new(),
    )
    .exposing(vec!["public".into(), "personal".into()]);

    let mut r = req("GET", "items", "", "");
    r.accept_profile = Some("personal");
    // A write's profile header is not a read's.
    r.content_profile = Some("public");
    let p = plan(&r, &two).unwrap();
    assert!(p.sql.contains("FROM \"personal\".\"items\""), "{}", p.sql);
    // The transaction's `search_path`: the schema, then `public`, as PostgREST sets it.
    assert_eq!(p.search_path(), "\"personal\", \"public\"");
    let a = respond(&p, row(0)).unwrap();
    assert_eq!(a.header("Content-Profile"), Some("personal"));

    let mut w = req("POST", "items", "", r#"{"id": 1}"#);
    w.content_profile = Some("personal");
    w.accept_profile = Some("public");
    let p = plan(&w, &two).unwrap();
    assert!(
        p.sql.contains("INSERT INTO \"personal\".\"items\""),
        "{}",
        p.sql
    );

    // Several schemas exposed and none asked for: the default, and the answer says so.
    let p = plan(&req("GET", "items", "", ""), &two).unwrap();
    assert!(p.sql.contains("FROM \"public\".\"items\""));
    assert_eq!(p.search_path(), "\"public\"");
    assert_eq!(
        respond(&p, row(0)).unwrap().header("Content-Profile"),
        Some("public")
    );

    // One schema exposed, none asked for: no `Content-Profile`, as PostgREST.
    let p = plan(&req("GET", "items", "", ""), &cache()).unwrap();
    assert_eq!(respond(&p, row(0)).unwrap().header("Content-Profile"), None);

    let mut r = req("DELETE", "items", "id=eq.1", "");
    r.content_profile = Some("nosuchschema");
    let e = plan(&r, &two).unwrap_err();
    assert_eq!((e.status, e.code.as_str()), (406, "PGRST106"));
    assert_eq!(
        e.message,
        "The schema must be one of the following: public, personal"
    );
    // A table only another schema has is not found in this one.
    let mut r = req("GET", "items", "", "");
    r.accept_profile = Some("public");
    let only_personal = SchemaCache::from_parts(
        vec![{
            let mut t = cache().table("items").unwrap().clone();
            t.schema = "personal".into();
            t
        }],
        Vec::new(),
    )
    .exposing(vec!["public".into(), "personal".into()]);
    let e = plan(&r, &only_personal).unwrap_err();
    assert_eq!(
        (e.code.as_str(), e.message.as_str()),
        (
            "PGRST205",
            "Could not find the table 'public.items' in the schema cache"
        )
    );
}

#[test]
fn max_affected_is_enforced_only_when_strict() {
    let patch = |prefer: &'static str| {
        let r = RestRequest {
            prefer: Some(prefer),
            ..req("PATCH", "items", "id=gt.0", r#"{"name": "x"}"#)
        };
        plan(&r, &cache()).unwrap()
    };
    let p = patch("handling=strict, max-affected=2");
    let a = respond(&p, row(2)).unwrap();
    assert_eq!(
        a.header("Preference-Applied"),
        Some("handling=strict, max-affected=2")
    );
    let e = respond(&p, row(3)).unwrap_err();
    assert_eq!((e.status, e.code.as_str()), (400, "PGRST124"));
    assert_eq!(e.details.as_deref(), Some("The query affects 3 rows"));
    // Lenient (or no handling): ignored, and not applied.
    let p = patch("handling=lenient, max-affected=2");
    let a = respond(&p, row(3)).unwrap();
    assert_eq!(a.header("Preference-Applied"), Some("handling=lenient"));
    let p = patch("max-affected=2");
    assert!(respond(&p, row(3)).is_ok());
    // A number that does not read is no preference at all, and not refused.
    let p = patch("handling=strict, max-affected=lots");
    assert!(respond(&p, row(9)).is_ok());
    // Not on inserts, as PostgREST.
    let r = RestRequest {
        prefer: Some("handling=strict, max-affected=1"),
        ..req("POST", "items", "", r#"[{"id": 1}, {"id": 2}]"#)
    };
    assert!(respond(&plan(&r, &cache()).unwrap(), row(2)).is_ok());
}

#[test]
fn an_upsert_that_only_merged_answers_200() {
    let upsert = |resolution: &'static str| {
        let r = RestRequest {
            prefer: Some(resolution),
            ..req("POST", "items", "", r#"{"id": 1, "name": "x"}"#)
        };
        plan(&r, &cache()).unwrap()
    };
    let merge = upsert("resolution=merge-duplicates");
    assert!(
        merge.sql.contains("set_config('pgrst.inserted'"),
        "{}",
        merge.sql
    );
    assert!(merge.sql.contains("AS inserted FROM"), "{}", merge.sql);
    let merged = PlanRow {
        page_total: 1,
        inserted: None,
        ..PlanRow::default()
    };
    assert_eq!(respond(&merge, merged).unwrap().status, 200);
    let inserted = PlanRow {
        page_total: 1,
        inserted: Some(1),
        ..PlanRow::default()
    };
    assert_eq!(respond(&merge, inserted).unwrap().status, 201);
    // Ignoring duplicates, or a plain insert, is 201 whatever happened.
    let ignore = upsert("resolution=ignore-duplicates");
    assert!(!ignore.sql.contains("pgrst.inserted"));
    assert_eq!(respond(&ignore, row(0)).unwrap().status, 201);
}

#[test]
fn a_counted_head_of_part_of_the_rows_is_partial_content() {
    let r = RestRequest {
        prefer: Some("count=exact"),
        ..req("HEAD", "items", "limit=2", "")
    };
    let p = plan(&r, &cache()).unwrap();
    let a = respond(
        &p,
        PlanRow {
            total: Some(5),
            page_total: 2,
            ..PlanRow::default()
        },
    )
    .unwrap();
    assert_eq!(
        (a.status, a.header("Content-Range"), a.body.as_deref()),
        (206, Some("0-1/5"), None)
    );
}

#[test]
fn csv_is_served_and_taken() {
    let mut r = req("GET", "items", "select=id,name", "");
    r.accept = Some("text/csv");
    let p = plan(&r, &cache()).unwrap();
    assert!(p.sql.contains("json_object_keys"), "{}", p.sql);
    let a = respond(
        &p,
        PlanRow {
            page_total: 1,
            body: Some("id,name\n1,x".into()),
            ..PlanRow::default()
        },
    )
    .unwrap();
    assert_eq!(a.header("Content-Type"), Some("text/csv; charset=utf-8"));
    assert_eq!(a.body.as_deref(), Some("id,name\n1,x"));

    let mut w = req("POST", "items", "", "id,name\n1,x\n2,NULL\n");
    w.content_type = Some("text/csv");
    let p = plan(&w, &cache()).unwrap();
    assert!(
        p.sql
            .contains("INSERT INTO \"public\".\"items\" (\"id\", \"name\")")
    );
    assert_eq!(
        p.params,
        [Some(
            r#"[{"id":"1","name":"x"},{"id":"2","name":null}]"#.to_owned()
        )]
    );
}
