//! A column's text (what the simple query protocol returns) as JSON, by its type.
//!
//! Booleans, integers and finite floats become JSON booleans and numbers; `json` and
//! `jsonb` their JSON; `numeric` stays a string, since a JSON number read as a double would
//! lose digits; everything else (dates, uuids, arrays, `NaN`, user types) is PostgreSQL's own
//! text for it. A domain is mapped as its base type.

use serde_json::{Number, Value};
use tokio_postgres::types::{Kind, Type};

/// How one column's values are turned into JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ValueKind {
    Bool,
    Integer,
    Float,
    Json,
    Text,
}

impl ValueKind {
    pub(crate) fn of(ty: &Type) -> Self {
        if let Kind::Domain(base) = ty.kind() {
            return Self::of(base);
        }
        match *ty {
            Type::BOOL => Self::Bool,
            Type::INT2 | Type::INT4 | Type::INT8 | Type::OID => Self::Integer,
            Type::FLOAT4 | Type::FLOAT8 => Self::Float,
            Type::JSON | Type::JSONB => Self::Json,
            _ => Self::Text,
        }
    }

    /// `text` (never NULL here) as JSON; text that does not read as the type says (which
    /// PostgreSQL does not send) stays a string.
    pub(crate) fn to_json(self, text: &str) -> Value {
        let typed = match self {
            Self::Bool => match text {
                "t" => Some(Value::Bool(true)),
                "f" => Some(Value::Bool(false)),
                _ => None,
            },
            Self::Integer => text
                .parse::<i64>()
                .map(Number::from)
                .or_else(|_| text.parse::<u64>().map(Number::from))
                .ok()
                .map(Value::Number),
            // `Infinity` and `NaN` have no JSON number.
            Self::Float => text
                .parse::<f64>()
                .ok()
                .and_then(Number::from_f64)
                .map(Value::Number),
            Self::Json => serde_json::from_str(text).ok(),
            Self::Text => None,
        };
        typed.unwrap_or_else(|| Value::String(text.to_owned()))
    }
}

/// A row's values: NULL as JSON null, the rest by their column's kind.
pub(crate) fn row_to_json(kinds: &[ValueKind], texts: &[Option<String>]) -> Vec<Value> {
    texts
        .iter()
        .enumerate()
        .map(|(i, text)| match text {
            None => Value::Null,
            Some(t) => kinds.get(i).copied().unwrap_or(ValueKind::Text).to_json(t),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds_of_types() {
        assert_eq!(ValueKind::of(&Type::BOOL), ValueKind::Bool);
        assert_eq!(ValueKind::of(&Type::INT8), ValueKind::Integer);
        assert_eq!(ValueKind::of(&Type::FLOAT4), ValueKind::Float);
        assert_eq!(ValueKind::of(&Type::JSONB), ValueKind::Json);
        for text in [
            Type::NUMERIC,
            Type::TEXT,
            Type::UUID,
            Type::TIMESTAMPTZ,
            Type::INT4_ARRAY,
        ] {
            assert_eq!(ValueKind::of(&text), ValueKind::Text, "{text}");
        }
    }

    #[test]
    fn texts_as_json() {
        assert_eq!(ValueKind::Bool.to_json("t"), json!(true));
        assert_eq!(
            ValueKind::Integer.to_json("-9223372036854775808"),
            json!(i64::MIN)
        );
        assert_eq!(
            ValueKind::Integer.to_json("4294967295"),
            json!(4_294_967_295_u64)
        );
        assert_eq!(ValueKind::Float.to_json("0.1"), json!(0.1));
        assert_eq!(ValueKind::Float.to_json("NaN"), json!("NaN"));
        assert_eq!(ValueKind::Float.to_json("-Infinity"), json!("-Infinity"));
        assert_eq!(ValueKind::Json.to_json(r#"{"a": [1]}"#), json!({"a": [1]}));
        assert_eq!(ValueKind::Text.to_json("12.50"), json!("12.50"));
    }

    #[test]
    fn nulls_and_missing_kinds() {
        let row = row_to_json(
            &[ValueKind::Integer],
            &[Some("1".into()), None, Some("t".into())],
        );
        assert_eq!(row, vec![json!(1), Value::Null, json!("t")]);
    }
}
