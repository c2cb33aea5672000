//! `quire mcp`: the endpoint of the configured server and the configurations to paste,
//! without the key unless `--key` asks for it (and then from the stored login or
//! `QUIRE_KEY`); `--key` with no key is an error. Nothing is sent to the server.

use serde_json::json;

use crate::cli::User;

fn user_of(server: &str) -> User {
    User {
        home: tempfile::tempdir().unwrap(),
        server: server.to_owned(),
    }
}

#[test]
fn quire_mcp_prints_the_endpoint_and_configurations_and_the_key_only_when_asked() {
    // No server listens there: nothing is sent.
    let user = user_of("https://quire.example/");
    let key = format!("qk_{}", "K".repeat(43));
    std::fs::create_dir_all(user.config_dir()).unwrap();
    std::fs::write(
        user.config_dir().join("config.json"),
        json!({"server": "https://quire.example", "key": key}).to_string(),
    )
    .unwrap();

    let text = user.ok(&["mcp"]);
    assert!(
        text.contains("MCP endpoint: https://quire.example/mcp\n"),
        "{text}"
    );
    assert!(
        text.contains("claude mcp add --transport http quire https://quire.example/mcp\n"),
        "{text}"
    );
    assert!(text.contains("\"mcpServers\""), "{text}");
    assert!(text.contains("quire mcp --key"), "{text}");
    assert!(!text.contains(&key), "never the key unless asked: {text}");
    let answer = user.ok_json(&["mcp"]);
    assert_eq!(
        answer,
        json!({
            "endpoint": "https://quire.example/mcp",
            "claude_code": "claude mcp add --transport http quire https://quire.example/mcp",
            "config": {"mcpServers": {"quire": {"type": "http", "url": "https://quire.example/mcp"}}},
            "auth": "oauth",
        })
    );

    // --key: the stored key as the Authorization header, in both forms.
    let answer = user.ok_json(&["mcp", "--key"]);
    let header = format!("Bearer {key}");
    assert_eq!(answer["auth"], "api_key");
    assert_eq!(
        answer["claude_code"],
        format!(
            "claude mcp add --transport http quire https://quire.example/mcp --header \"Authorization: {header}\""
        )
    );
    assert_eq!(
        answer["config"]["mcpServers"]["quire"],
        json!({"type": "http", "url": "https://quire.example/mcp", "headers": {"Authorization": header}})
    );
    let text = user.ok(&["mcp", "--key"]);
    assert!(text.contains(&header) && text.contains("keep them out of shared files"));

    // QUIRE_KEY wins over the stored key; --server (or QUIRE_URL) over the stored server.
    let other = user
        .command(&["--json", "mcp", "--key", "--server", "http://127.0.0.1:9/"])
        .env("QUIRE_KEY", "qk_from_env")
        .output()
        .unwrap();
    let answer: serde_json::Value = serde_json::from_slice(&other.stdout).unwrap();
    assert_eq!(answer["endpoint"], "http://127.0.0.1:9/mcp");
    assert_eq!(
        answer["config"]["mcpServers"]["quire"]["headers"]["Authorization"],
        "Bearer qk_from_env"
    );

    // No key anywhere: --key is refused, without --key all is well.
    let fresh = user_of("https://quire.example");
    let (_, err) = fresh.fails(&["mcp", "--key"]);
    assert!(
        err.contains("no key to print") && err.contains("quire login"),
        "{err}"
    );
    assert!(fresh.ok(&["mcp"]).contains("https://quire.example/mcp"));
}
