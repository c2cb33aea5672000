//! Reading the cache: type names, functions, and the relationships its keys and views give.

use super::*;

#[test]
fn type_names_are_plain_type_expressions() {
    for good in [
        "integer",
        "character varying",
        "timestamp with time zone",
        "text[]",
        "\"My Type\"",
        "extensions.citext",
        "\"we\"\"ird\"[]",
    ] {
        assert!(checked_type(good.to_owned()).is_ok(), "{good}");
    }
    for bad in [
        "",
        "int; drop table x",
        "\"open",
        "$$",
        "numeric(1,2)",
        "a'b",
    ] {
        assert!(checked_type(bad.to_owned()).is_err(), "{bad}");
    }
}

#[test]
fn functions_read_their_inputs_defaults_and_result_columns() {
    let json = r#"{"tables": [], "functions": [
      {"name": "f", "volatility": "s", "returns_set": true, "return_type": "record",
       "return_kind": "record", "return_columns": null, "defaults": 1,
       "args": [{"name": "a", "type": "integer", "mode": "i"},
                {"name": "b", "type": "text", "mode": "i"},
                {"name": "x", "type": "bigint", "mode": "t"}]},
      {"name": "trg", "volatility": "v", "returns_set": false, "return_type": "trigger",
       "return_kind": "pseudo", "return_columns": null, "defaults": 0, "args": []}
    ]}"#;
    let cache = SchemaCache::from_json(json).unwrap();
    let f = &cache.functions("f")[0];
    assert_eq!(f.args.len(), 2);
    assert!(f.args[0].required && !f.args[1].required);
    assert_eq!(f.volatility, Volatility::Stable);
    assert!(matches!(&f.returns, Returns::Composite(c) if c.len() == 1 && c[0].name == "x"));
    assert!(cache.functions("trg").is_empty());
}

#[test]
fn foreign_keys_and_view_definitions_give_relationships() {
    let table = |name: &str, cols: &str, key: &str| {
        format!(
            r#"{{"name": "{name}", "insertable": true, "updatable": true, "deletable": true,
                "columns": [{cols}], "primary_key": [{key}]}}"#
        )
    };
    let json = format!(
        r#"{{"tables": [{}, {}, {}], "functions": [],
          "relations": [
            {{"oid": 10, "name": "users", "view": false, "columns": {{"1": "username"}}}},
            {{"oid": 11, "name": "messages", "view": false,
              "columns": {{"1": "id", "2": "username"}}}},
            {{"oid": 12, "name": "people", "view": true, "columns": {{"1": "who"}},
              "definition": "({{QUERY :targetList ({{TARGETENTRY :resno 1 :resname who :resorigtbl 10 :resorigcol 1 :resjunk false}})}})"}}
          ],
          "foreign_keys": [{{"name": "messages_username_fkey", "table": "messages",
            "columns": ["username"], "foreign_table": "users",
            "foreign_columns": ["username"], "one_to_one": false}}]}}"#,
        table(
            "users",
            r#"{"name": "username", "type": "text"}"#,
            r#""username""#
        ),
        table(
            "messages",
            r#"{"name": "id", "type": "integer"}, {"name": "username", "type": "text"}"#,
            r#""id""#
        ),
        table("people", r#"{"name": "who", "type": "text"}"#, ""),
    );
    let cache = SchemaCache::from_json(&json).unwrap();
    let r = cache.find_rel("messages", "users", None).unwrap();
    assert_eq!(r.cardinality, Cardinality::ManyToOne);
    let r = cache.find_rel("people", "messages", None).unwrap();
    assert_eq!(
        (&r.cardinality, r.columns.as_slice(), r.table_is_view),
        (
            &Cardinality::OneToMany,
            [("who".to_owned(), "username".to_owned())].as_slice(),
            true
        )
    );
    // A cache JSON from before relationships were loaded still reads, with none.
    let old = r#"{"tables": [], "functions": []}"#;
    assert!(
        SchemaCache::from_json(old)
            .unwrap()
            .relationships
            .values()
            .all(HashMap::is_empty)
    );
}

#[test]
fn an_unnamed_argument_is_kept_only_alone_and_of_a_raw_body_type() {
    let function = |name: &str, args: &str| {
        format!(
            r#"{{"name": "{name}", "volatility": "v", "returns_set": false,
            "return_type": "integer", "return_kind": "scalar", "return_columns": null,
            "defaults": 0, "args": [{args}]}}"#
        )
    };
    let unnamed = |ty: &str| format!(r#"{{"name": "", "type": "{ty}", "mode": "i"}}"#);
    let named = r#"{"name": "b", "type": "integer", "mode": "i"}"#;
    let json = format!(
        r#"{{"schemas": ["public"], "tables": [], "functions": [{}, {}, {}, {}]}}"#,
        function("raw_json", &unnamed("json")),
        function("raw_int", &unnamed("integer")),
        function("two", &format!("{}, {named}", unnamed("text"))),
        function("text_too", &unnamed("text")),
    );
    let cache = SchemaCache::from_json(&json).unwrap();
    assert!(cache.functions("raw_json")[0].unnamed().is_some());
    assert!(cache.functions("text_too")[0].unnamed().is_some());
    assert!(cache.functions("raw_int").is_empty());
    assert!(cache.functions("two").is_empty());
}
