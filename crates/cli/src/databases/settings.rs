//! `quire db settings DB [--aggregates on|off] [--explain on|off] [--tx-rollback on|off]
//! [--max-rows N|none] [--schemas a,b]`: the data API's settings that PostgREST leaves off
//! by default, shown, or changed by the flags given (`PATCH …/data-api`), the rest kept.

use clap::Args;
use reqwest::Method;
use serde_json::{Map, Value};

use super::{DATABASES, Target, id_of, resolve};
use crate::api::{Api, Failure};
use crate::{Output, out};

/// The settings to change; none shows them.
#[derive(Debug, Args)]
pub(crate) struct SettingsArgs {
    #[command(flatten)]
    target: Target,
    /// `count()`, `sum()`, `avg()`, `min()`, `max()` in `select`.
    #[arg(long, value_name = "on|off", value_parser = on_off)]
    aggregates: Option<bool>,
    /// A request's plan, `Accept: application/vnd.pgrst.plan`.
    #[arg(long, value_name = "on|off", value_parser = on_off)]
    explain: Option<bool>,
    /// `Prefer: tx=rollback`: a write answered, then rolled back.
    #[arg(long, value_name = "on|off", value_parser = on_off)]
    tx_rollback: Option<bool>,
    /// Most rows a read or a call answers; `none` removes the cap.
    #[arg(long, value_name = "N|none", value_parser = max_rows)]
    max_rows: Option<MaxRows>,
    /// The schemas requests reach, comma-separated, the default first (`public,api`).
    #[arg(long, value_name = "a,b")]
    schemas: Option<String>,
}

#[derive(Debug, Clone, Copy)]
enum MaxRows {
    Cap(u64),
    None,
}

fn on_off(given: &str) -> Result<bool, String> {
    match given {
        "on" | "true" | "yes" => Ok(true),
        "off" | "false" | "no" => Ok(false),
        _ => Err("give on or off".to_owned()),
    }
}

fn max_rows(given: &str) -> Result<MaxRows, String> {
    if given == "none" {
        return Ok(MaxRows::None);
    }
    given
        .parse()
        .map(MaxRows::Cap)
        .map_err(|_| "give a whole number, or none for no cap".to_owned())
}

impl SettingsArgs {
    /// The body of the change, or `None` when no flag asks for one.
    fn change(&self) -> Option<Value> {
        let mut body = Map::new();
        let switches = [
            ("aggregates", self.aggregates),
            ("explain", self.explain),
            ("txRollback", self.tx_rollback),
        ];
        for (field, on) in switches {
            if let Some(on) = on {
                body.insert(field.into(), Value::Bool(on));
            }
        }
        match self.max_rows {
            Some(MaxRows::Cap(n)) => body.insert("maxRows".into(), Value::from(n)),
            Some(MaxRows::None) => body.insert("maxRows".into(), Value::Null),
            None => None,
        };
        if let Some(schemas) = &self.schemas {
            let names: Vec<Value> = schemas.split(',').map(|s| Value::from(s.trim())).collect();
            body.insert("exposedSchemas".into(), Value::Array(names));
        }
        (!body.is_empty()).then_some(Value::Object(body))
    }
}

pub(crate) async fn run(api: &Api, args: SettingsArgs) -> Result<Output, Failure> {
    let name = args.target.database.clone();
    let Some(change) = args.change() else {
        let found = resolve(api, &args.target).await?;
        let text = settings_text(&name, &found["dataApi"]["settings"]);
        return Ok(out(found["dataApi"]["settings"].clone(), text));
    };
    let id = id_of(api, &args.target).await?;
    let changed = api
        .call(
            Method::PATCH,
            &format!("{DATABASES}/{id}/data-api"),
            Some(&change),
        )
        .await?;
    let mut text = format!(
        "Changed the data API settings of {name}.\n\n{}",
        settings_text(&name, &changed["dataApi"]["settings"])
    );
    if let Some(missing) = missing_note(&name, &changed["dataApi"]["missingSchemas"]) {
        text.push_str(&format!("\n\n{missing}"));
    }
    Ok(out(changed, text))
}

fn on(v: &Value) -> &'static str {
    if v == true { "on" } else { "off" }
}

/// The settings, a line each, with what each turns on.
pub(crate) fn settings_text(name: &str, s: &Value) -> String {
    let schemas: Vec<&str> = s["exposedSchemas"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let max_rows = s["maxRows"]
        .as_u64()
        .map_or_else(|| "no cap".to_owned(), |n| n.to_string());
    let lines = [
        (
            "schemas",
            format!("{} (the first is the default)", schemas.join(", ")),
        ),
        ("max rows", max_rows),
        ("aggregates", on(&s["aggregates"]).to_owned()),
        ("explain", on(&s["explain"]).to_owned()),
        ("tx=rollback", on(&s["txRollback"]).to_owned()),
    ];
    let mut text = format!("Data API settings of {name}:");
    for (k, v) in lines {
        text.push_str(&format!("\n  {k:<12}{v}"));
    }
    text
}

/// The settings in one line, for a database's details: what differs from PostgREST's
/// defaults.
pub(crate) fn summary(slug: &str, s: &Value) -> String {
    let mut parts = Vec::new();
    let schemas: Vec<&str> = s["exposedSchemas"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if schemas != ["public"] && !schemas.is_empty() {
        parts.push(format!("schemas {}", schemas.join(", ")));
    }
    if let Some(n) = s["maxRows"].as_u64() {
        parts.push(format!("max rows {n}"));
    }
    let on: Vec<&str> = [
        ("aggregates", "aggregates"),
        ("explain", "explain"),
        ("txRollback", "tx=rollback"),
    ]
    .into_iter()
    .filter(|(field, _)| s[*field] == true)
    .map(|(_, name)| name)
    .collect();
    if !on.is_empty() {
        parts.push(format!("{} on", on.join(", ")));
    }
    if parts.is_empty() {
        format!("PostgREST's defaults (quire db settings {slug})")
    } else {
        parts.join("; ")
    }
}

/// A warning naming the exposed schemas the database does not have yet.
fn missing_note(name: &str, missing: &Value) -> Option<String> {
    let names: Vec<&str> = missing
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    (!names.is_empty()).then(|| {
        format!(
            "warning: {name} has no schema {} yet; requests reach it once it is made \
             (create schema …, and grant usage on it to anon, authenticated, service_role)",
            names.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use serde_json::json;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: SettingsArgs,
    }

    fn parsed(args: &[&str]) -> Result<SettingsArgs, clap::Error> {
        let mut all = vec!["settings"];
        all.extend_from_slice(args);
        Cli::try_parse_from(all).map(|c| c.args)
    }

    #[test]
    fn the_flags_given_make_the_change_and_none_shows() {
        assert_eq!(parsed(&["shop"]).unwrap().change(), None);
        let change = parsed(&[
            "shop",
            "--aggregates",
            "on",
            "--explain",
            "off",
            "--max-rows",
            "500",
            "--schemas",
            "public, api",
        ])
        .unwrap()
        .change();
        assert_eq!(
            change,
            Some(json!({
                "aggregates": true,
                "explain": false,
                "maxRows": 500,
                "exposedSchemas": ["public", "api"]
            }))
        );
        let change = parsed(&["shop", "--max-rows", "none", "--tx-rollback", "yes"])
            .unwrap()
            .change();
        assert_eq!(change, Some(json!({ "maxRows": null, "txRollback": true })));
        assert!(parsed(&["shop", "--aggregates", "maybe"]).is_err());
        assert!(parsed(&["shop", "--max-rows", "-1"]).is_err());
    }

    #[test]
    fn settings_read_a_line_each_and_missing_schemas_are_warned_of() {
        let s = json!({
            "exposedSchemas": ["api", "public"],
            "maxRows": null,
            "aggregates": true,
            "explain": false,
            "txRollback": false
        });
        assert_eq!(
            settings_text("shop", &s),
            "Data API settings of shop:\n  schemas     api, public (the first is the default)\n  \
             max rows    no cap\n  aggregates  on\n  explain     off\n  tx=rollback off"
        );
        assert_eq!(summary("shop", &s), "schemas api, public; aggregates on");
        let defaults = json!({
            "exposedSchemas": ["public"],
            "maxRows": null,
            "aggregates": false,
            "explain": false,
            "txRollback": false
        });
        assert_eq!(
            summary("shop", &defaults),
            "PostgREST's defaults (quire db settings shop)"
        );
        assert_eq!(missing_note("shop", &json!([])), None);
        assert_eq!(missing_note("shop", &Value::Null), None);
        assert!(
            missing_note("shop", &json!(["api"]))
                .unwrap()
                .starts_with("warning: shop has no schema api yet")
        );
    }
}
