//! What every page people look at must pass in Chromium: axe-core with no serious or critical
//! violation, and a phone's width (390 CSS px) with no sideways scroll. Each audit saves a
//! desktop and a phone screenshot under `target/debug/screenshots/` for a person to look at.
//!
//! axe-core is the npm package, installed by `.ci/run` under `target/axe` (no lock file, a
//! pinned version); `QUIRE_AXE_JS` names another copy. A test that audits carries
//! `#[cfg_attr(no_axe, ignore = …)]`, so it is reported ignored where axe-core is missing,
//! and the audit fails without it.

use std::path::PathBuf;

use reqwest::Method;
use serde_json::{Value, json};

use crate::browser::Driver;

/// The width of a common phone, in CSS pixels.
pub(crate) const PHONE_WIDTH: u64 = 390;
const DESKTOP: (u64, u64) = (1280, 900);

fn axe_source() -> String {
    let path = std::env::var_os("QUIRE_AXE_JS").map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../target/axe/node_modules/axe-core/axe.min.js")
        },
        PathBuf::from,
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "axe-core ({}: {e}): npm install --prefix target/axe axe-core",
            path.display()
        )
    })
}

impl Driver {
    pub(crate) async fn resize(&self, width: u64, height: u64) {
        self.cmd(
            Method::POST,
            "/window/rect",
            Some(json!({ "width": width, "height": height })),
        )
        .await;
    }

    pub(crate) async fn script(&self, script: &str) -> Value {
        self.cmd(
            Method::POST,
            "/execute/sync",
            Some(json!({ "script": script, "args": [] })),
        )
        .await
    }

    /// Audits the page the browser shows now (see the module's doc); `name` names its
    /// screenshots and its failures.
    pub(crate) async fn audit(&self, name: &str) {
        let url = self.url().await;
        self.resize(DESKTOP.0, DESKTOP.1).await;
        self.screenshot(&format!("{name}-desktop")).await;
        let axe = axe_source();
        self.script(&axe).await;
        let report = self
            .cmd(
                Method::POST,
                "/execute/async",
                Some(json!({
                    "script": "const done = arguments[arguments.length - 1]; \
                        axe.run(document, { resultTypes: ['violations'] }) \
                          .then(r => done(r.violations.map(v => ({ id: v.id, impact: v.impact, \
                             help: v.help, nodes: v.nodes.map(n => n.target.join(' ')) })))) \
                          .catch(e => done([{ id: 'axe-error', impact: 'critical', help: String(e), nodes: [] }]));",
                    "args": [],
                })),
            )
            .await;
        let serious: Vec<&Value> = report
            .as_array()
            .expect("axe answers a list")
            .iter()
            .filter(|v| matches!(v["impact"].as_str(), Some("serious" | "critical")))
            .collect();
        assert!(
            serious.is_empty(),
            "{name} ({url}) has serious accessibility violations: {}",
            serde_json::to_string_pretty(&serious).unwrap()
        );
        self.resize(PHONE_WIDTH, 844).await;
        let widths = self
            .script(
                "return [document.documentElement.scrollWidth, document.documentElement.clientWidth];",
            )
            .await;
        let (scroll, client) = (widths[0].as_u64().unwrap(), widths[1].as_u64().unwrap());
        self.screenshot(&format!("{name}-phone")).await;
        assert!(
            client <= PHONE_WIDTH && scroll <= client,
            "{name} ({url}) scrolls sideways at {PHONE_WIDTH} px: content {scroll} px in a {client} px viewport"
        );
        self.resize(DESKTOP.0, DESKTOP.1).await;
    }
}
