//! A function as the cache's statement lists it, read into what the planner calls: its
//! input arguments (named, or one unnamed that takes the body), what it returns, and
//! whether PostgREST could call it at all.

use serde::Deserialize;

use super::load::{RawColumn, checked_type, public};
use super::{Argument, Column, Function, Returns, SchemaError, Volatility};

/// The types PostgREST passes a raw body to, as a function's one unnamed argument.
const RAW_BODY_TYPES: [&str; 5] = ["bytea", "json", "jsonb", "text", "xml"];

#[derive(Deserialize)]
struct RawArg {
    name: String,
    #[serde(rename = "type")]
    type_name: String,
    mode: String,
}

#[derive(Deserialize)]
pub(super) struct RawFunction {
    #[serde(default = "public")]
    schema: String,
    name: String,
    volatility: String,
    returns_set: bool,
    return_type: String,
    return_kind: String,
    return_columns: Option<Vec<RawColumn>>,
    #[serde(default)]
    return_table: Option<String>,
    args: Vec<RawArg>,
    defaults: usize,
}

impl RawFunction {
    pub(super) fn into_function(self) -> Result<Option<Function>, SchemaError> {
        let (inputs, outputs): (Vec<RawArg>, Vec<RawArg>) = self
            .args
            .into_iter()
            .partition(|a| matches!(a.mode.as_str(), "i" | "b" | "v"));
        // Named notation cannot pass an unnamed argument: PostgREST keeps such a function
        // only when that argument is its only one and a raw body can be it.
        let unnamed = inputs.iter().filter(|a| a.name.is_empty()).count();
        let callable = unnamed == 0
            || (inputs.len() == 1 && RAW_BODY_TYPES.contains(&inputs[0].type_name.as_str()));
        if !callable {
            return Ok(None);
        }
        let outputs: Vec<_> = outputs
            .into_iter()
            .filter(|a| a.mode != "i" && a.mode != "v")
            .map(|a| RawColumn {
                name: a.name,
                type_name: a.type_name,
                nullable: true,
                has_default: false,
                default: None,
            })
            .collect();
        let returns = match self.return_kind.as_str() {
            "void" => Returns::Void,
            "scalar" => Returns::Scalar(checked_type(self.return_type)?),
            "composite" => Returns::Composite(columns(self.return_columns.unwrap_or_default())?),
            "record" if !outputs.is_empty() => {
                // INOUT arguments are both inputs and result columns.
                let mut cols = columns(outputs)?;
                for a in inputs.iter().filter(|a| a.mode == "b") {
                    cols.push(Column {
                        name: a.name.clone(),
                        type_name: checked_type(a.type_name.clone())?,
                        nullable: true,
                        has_default: false,
                        default: None,
                    });
                }
                Returns::Composite(cols)
            }
            _ => return Ok(None),
        };
        let first_optional = inputs.len().saturating_sub(self.defaults);
        let args = inputs
            .into_iter()
            .enumerate()
            .map(|(i, a)| {
                Ok(Argument {
                    required: i < first_optional,
                    variadic: a.mode == "v",
                    type_name: checked_type(a.type_name)?,
                    name: a.name,
                })
            })
            .collect::<Result<_, SchemaError>>()?;
        let volatility = match self.volatility.as_str() {
            "i" => Volatility::Immutable,
            "s" => Volatility::Stable,
            _ => Volatility::Volatile,
        };
        Ok(Some(Function {
            schema: self.schema,
            name: self.name,
            args,
            returns_set: self.returns_set,
            returns,
            returns_table: self.return_table,
            volatility,
        }))
    }
}

fn columns(raw: Vec<RawColumn>) -> Result<Vec<Column>, SchemaError> {
    raw.into_iter().map(RawColumn::into_column).collect()
}
