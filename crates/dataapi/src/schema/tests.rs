//! Reading the cache: type names, functions, and the relationships its keys give.

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
