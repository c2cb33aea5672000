//! A tool as `tools/list` shows it: the schemas of its argument and output types, as
//! schemars writes them but compacted so the whole list stays a few thousand tokens of a
//! model's context, and its annotations.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;

/// The tool `name`, with `description`, the compacted schemas of `I` and `O`, and
/// `annotations`.
pub(super) fn described<I: JsonSchema + 'static, O: JsonSchema + 'static>(
    name: &'static str,
    description: &'static str,
    annotations: ToolAnnotations,
) -> Tool {
    let mut tool = Tool::new(name, description, Arc::new(JsonObject::new()))
        .with_input_schema::<I>()
        .with_output_schema::<O>();
    tool.input_schema = compacted(&tool.input_schema, false);
    tool.output_schema = tool.output_schema.as_ref().map(|s| compacted(s, true));
    tool.annotate(annotations)
}

/// A schema as short as it can be and still say the same to a client: no `$schema` (the
/// 2020-12 default), no integer `format`s (`minimum` says unsigned), no `default: null`, and
/// an optional field that is never `null` typed as what it is (only fields whose description
/// names `null` take it), no doc of a named type. An output schema keeps only names and
/// types: the model reads the values themselves, and the tool's description says what they
/// mean. The whole list stays a few thousand tokens of the model's context.
fn compact(schema: &mut JsonObject, output: bool) {
    schema.remove("$schema");
    if schema.get("default") == Some(&serde_json::Value::Null) {
        schema.remove("default");
    }
    if output {
        for key in ["description", "format", "minimum", "required"] {
            schema.remove(key);
        }
    } else if schema.remove("format").is_some() && schema.get("minimum") == Some(&0.into()) {
        schema.insert("minimum".into(), 0.into());
    }
    let required: Vec<String> = schema
        .get("required")
        .and_then(|r| r.as_array())
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if let Some(serde_json::Value::Object(properties)) = schema.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            let serde_json::Value::Object(property) = property else {
                continue;
            };
            let says_null = property
                .get("description")
                .and_then(|d| d.as_str())
                .is_some_and(|d| d.contains("`null`"));
            if !required.contains(name)
                && !says_null
                && let Some(serde_json::Value::Array(types)) = property.get("type")
                && types.len() == 2
                && let Some(only) = types.iter().find(|t| t.as_str() != Some("null")).cloned()
            {
                property.insert("type".into(), only);
            }
            compact(property, output);
        }
    }
    for key in ["items", "$defs"] {
        match schema.get_mut(key) {
            Some(serde_json::Value::Object(inner)) if key == "items" => compact(inner, output),
            Some(serde_json::Value::Object(defs)) => {
                for def in defs.values_mut() {
                    if let serde_json::Value::Object(def) = def {
                        // A type's own doc (`One file of a bundle.`): its name says it.
                        def.remove("description");
                        compact(def, output);
                    }
                }
            }
            _ => {}
        }
    }
}

fn compacted(schema: &Arc<JsonObject>, output: bool) -> Arc<JsonObject> {
    let mut schema = schema.as_ref().clone();
    compact(&mut schema, output);
    Arc::new(schema)
}
