//! Loading the configuration: defaults, the file, the environment, and refusals.

use super::*;
use std::collections::HashMap;

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |k| map.get(k).cloned()
}

#[test]
fn defaults_need_no_setup() {
    let c = Config::load(Some(Path::new("/nonexistent/none.toml")), env_of(&[]));
    assert!(matches!(c, Err(ConfigError::Read(..))));
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("quire.toml");
    std::fs::write(&empty, "").unwrap();
    let c = Config::load(Some(&empty), env_of(&[])).unwrap();
    assert_eq!(c, Config::default());
    assert_eq!(c.database_url, "sqlite://./data/quire.db");
}

#[test]
fn environment_overrides_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("quire.toml");
    std::fs::write(
        &file,
        "listen = \"0.0.0.0:9000\"\ndatabase_url = \"postgres://db/quire\"\nworkers = 3\n\
         pin_workers = true\n",
    )
    .unwrap();
    let c = Config::load(
        Some(&file),
        env_of(&[
            ("QUIRE_LISTEN", "127.0.0.1:7000"),
            ("QUIRE_MAX_PAGE_BYTES", "1234"),
        ]),
    )
    .unwrap();
    assert_eq!(c.listen, "127.0.0.1:7000");
    assert_eq!(c.max_page_bytes, 1234);
    assert_eq!(c.database_url, "postgres://db/quire");
    assert_eq!(c.workers, 3);
    assert!(c.pin_workers);
    let c = Config::load(Some(&file), env_of(&[("QUIRE_PIN_WORKERS", "false")])).unwrap();
    assert!(!c.pin_workers);
}

#[test]
fn bad_values_are_named() {
    let err = Config::load(None, env_of(&[("QUIRE_WORKERS", "many")])).unwrap_err();
    assert!(err.to_string().contains("QUIRE_WORKERS"), "{err}");
    let err = Config::load(None, env_of(&[("QUIRE_MAX_PAGE_BYTES", "-1")])).unwrap_err();
    assert!(
        err.to_string()
            .contains("QUIRE_MAX_PAGE_BYTES must be a whole number"),
        "{err}"
    );
    let err = Config::load(None, env_of(&[("QUIRE_PIN_WORKERS", "yes")])).unwrap_err();
    assert!(
        err.to_string()
            .contains("QUIRE_PIN_WORKERS must be true or false"),
        "{err}"
    );
    let err = Config::load(None, env_of(&[("QUIRE_LOG_FORMAT", "xml")])).unwrap_err();
    assert!(err.to_string().contains("pretty or json"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("quire.toml");
    std::fs::write(&file, "lisen = \"typo\"\n").unwrap();
    let err = Config::load(Some(&file), env_of(&[])).unwrap_err();
    assert!(err.to_string().contains("lisen"), "{err}");
}
