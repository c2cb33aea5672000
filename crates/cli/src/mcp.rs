//! `quire mcp`: the server's MCP endpoint (`{server}/mcp`) and client configurations ready
//! to paste: Claude Code's command and a JSON `mcpServers` entry. Clients sign in through
//! the browser (OAuth) on first use; with `--key`, the same configurations carry the stored
//! key as an `Authorization` header instead. The key is printed only then. Nothing is sent
//! to the server.

use serde_json::{Value, json};

use crate::api::{Api, Failure};
use crate::{Output, out, pretty};

/// The name the configurations give the server in the client.
const NAME: &str = "quire";

pub fn mcp(api: &Api, with_key: bool) -> Result<Output, Failure> {
    let url = format!("{}/mcp", api.server);
    let key = if with_key {
        Some(api.key.clone().ok_or_else(|| {
            Failure::local(
                "no key to print: run `quire login` or set QUIRE_KEY, or leave out --key",
            )
        })?)
    } else {
        None
    };
    let header = key.as_ref().map(|k| format!("Bearer {k}"));
    let mut claude_code = format!("claude mcp add --transport http {NAME} {url}");
    let mut entry = json!({ "type": "http", "url": url });
    if let Some(h) = &header {
        claude_code.push_str(&format!(" --header \"Authorization: {h}\""));
        entry["headers"] = json!({ "Authorization": h });
    }
    let servers = json!({ "mcpServers": { NAME: entry } });
    let answer = json!({
        "endpoint": url,
        "claude_code": claude_code,
        "config": servers,
        "auth": if with_key { "api_key" } else { "oauth" },
    });
    let text = text(&url, &claude_code, &servers, with_key);
    Ok(out(answer, text))
}

fn text(url: &str, claude_code: &str, servers: &Value, with_key: bool) -> String {
    let how = if with_key {
        "These carry your API key: keep them out of shared files and repositories. Revoke the \
         key under Keys in the dashboard if it leaks."
    } else {
        "On first use the client opens your browser: sign in, choose the project it works in \
         and whether it may only read, and approve. Connected agents are listed, and \
         disconnected, under Agents in the dashboard.\nTo use your API key instead of signing \
         in (for clients without OAuth), run `quire mcp --key`: it prints the key."
    };
    format!(
        "MCP endpoint: {url}\n\nClaude Code:\n  {claude_code}\n\nOther MCP clients (an \
         mcpServers entry; in VS Code the key is \"servers\"):\n{}\n\n{how}\n",
        pretty(servers)
    )
}
