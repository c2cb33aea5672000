//! A fresh PostgreSQL database per test.
//!
//! `QUIRE_TEST_POSTGRES_URL` names a server and a database to connect to for `CREATE
//! DATABASE` (e.g. `postgres://postgres@127.0.0.1:5432/postgres`). A test that asks for one
//! carries `#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: …")]`, so where the variable
//! is unset it is reported as ignored and never gets here (docs/decisions/test-skips.md);
//! here, unset or unreachable, it fails.

use tokio_postgres::NoTls;

/// A database created for one test and dropped (with its connections) when this is dropped.
#[derive(Debug)]
pub struct TestDatabase {
    admin_url: String,
    name: String,
    /// URL of the new database.
    pub url: String,
}

fn replace_database(url: &str, db: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let path_start = base[scheme_end..]
        .find('/')
        .map_or(base.len(), |i| scheme_end + i);
    let mut out = format!("{}/{db}", &base[..path_start]);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    out
}

impl TestDatabase {
    /// Creates `quire_test_<random>`.
    ///
    /// # Panics
    /// When PostgreSQL is not configured or not reachable: a test that needs it is reported
    /// as ignored where it is not configured, so here it must be.
    pub async fn create() -> Self {
        let admin_url =
            std::env::var("QUIRE_TEST_POSTGRES_URL").expect("QUIRE_TEST_POSTGRES_URL is set");
        let (client, conn) = tokio_postgres::connect(&admin_url, NoTls)
            .await
            .unwrap_or_else(|e| panic!("cannot connect to QUIRE_TEST_POSTGRES_URL: {e}"));
        tokio::spawn(conn);
        let name = format!("quire_test_{}", uuid::Uuid::new_v4().simple());
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .expect("CREATE DATABASE");
        // A test database is thrown away after its test: a commit need not wait for the WAL
        // to reach the disk (1.5 ms a commit on the build machines, 0.05 ms without), which
        // the PostgreSQL half of the suite would pay many thousands of times. Visibility and
        // isolation are unchanged; only a crash of the server could lose the last commits.
        client
            .batch_execute(&format!(
                "ALTER DATABASE {name} SET synchronous_commit = off"
            ))
            .await
            .expect("ALTER DATABASE");
        let url = replace_database(&admin_url, &name);
        Self {
            admin_url,
            name,
            url,
        }
    }

    /// Runs one statement against the server's admin database (to simulate outages).
    ///
    /// # Panics
    /// When the statement fails.
    pub async fn admin(&self, sql: &str) {
        let (client, conn) = tokio_postgres::connect(&self.admin_url, NoTls)
            .await
            .expect("admin connect");
        tokio::spawn(conn);
        client.batch_execute(sql).await.expect("admin statement");
    }

    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let admin_url = self.admin_url.clone();
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        // Drop cannot await; a short-lived runtime on its own thread does the cleanup.
        let done = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            rt.block_on(async {
                let (client, conn) = tokio_postgres::connect(&admin_url, NoTls).await.ok()?;
                tokio::spawn(conn);
                client.batch_execute(&sql).await.ok()
            })
        });
        let _ = done.join();
    }
}

#[cfg(test)]
mod tests {
    use super::replace_database;

    #[test]
    fn database_name_is_swapped_keeping_host_and_options() {
        assert_eq!(
            replace_database("postgres://u@h:5432/postgres", "x"),
            "postgres://u@h:5432/x"
        );
        assert_eq!(
            replace_database("postgres://u@h/postgres?sslmode=disable", "x"),
            "postgres://u@h/x?sslmode=disable"
        );
        assert_eq!(replace_database("postgres://h", "x"), "postgres://h/x");
    }
}
