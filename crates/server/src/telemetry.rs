//! Logs: to standard error, pretty or JSON (`QUIRE_LOG_FORMAT`), filtered by `RUST_LOG`.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// The platform's TLS verifier logs each certificate it refuses as an ERROR of its own, and
/// the certificate is chosen by whoever names a client metadata document's URL (anyone, with
/// no account): its lines are off unless `RUST_LOG` names its target. Quire's own line says
/// the fetch failed and why, at info (`quire-documents`).
const VERIFIER: &str = "rustls_platform_verifier";

/// `RUST_LOG` (`info` when unset or unreadable), with [`VERIFIER`] off unless it names it.
fn filter(rust_log: Option<&str>) -> EnvFilter {
    let filter = rust_log
        .and_then(|spec| EnvFilter::try_new(spec).ok())
        .unwrap_or_else(|| EnvFilter::new("info"));
    if rust_log.is_some_and(|spec| spec.contains(VERIFIER)) {
        return filter;
    }
    match format!("{VERIFIER}=off").parse() {
        Ok(directive) => filter.add_directive(directive),
        Err(_) => filter,
    }
}

pub(crate) fn init_logging(format: &str) {
    let rust_log = std::env::var("RUST_LOG").ok();
    // Colours only for a person at a terminal: a log file or journal would keep the escapes.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter(rust_log.as_deref()))
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    if format == "json" {
        builder.json().init();
    } else {
        builder.init();
    }
}

#[cfg(test)]
mod tests {
    use super::filter;

    #[test]
    fn the_verifiers_lines_are_off_unless_named() {
        for (rust_log, shown) in [
            (None, "info,rustls_platform_verifier=off"),
            (Some("debug"), "debug,rustls_platform_verifier=off"),
            (Some("==nonsense=="), "info,rustls_platform_verifier=off"),
            (
                Some("info,rustls_platform_verifier=debug"),
                "rustls_platform_verifier=debug,info",
            ),
        ] {
            let directives: Vec<String> = filter(rust_log)
                .to_string()
                .split(',')
                .map(str::to_owned)
                .collect();
            let mut expected: Vec<&str> = shown.split(',').collect();
            let mut got: Vec<&str> = directives.iter().map(String::as_str).collect();
            expected.sort_unstable();
            got.sort_unstable();
            assert_eq!(got, expected, "{rust_log:?}");
        }
    }
}
