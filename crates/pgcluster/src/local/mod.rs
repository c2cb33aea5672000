//! [`LocalCluster`]: a private PostgreSQL cluster in Quire's data folder, for
//! `QUIRE_DATABASES=local`, run as Quire's child process.
//!
//! Layout under the data folder: `postgres/` (the cluster, made once by `initdb`),
//! `postgres-run/` (its unix socket, `0700`), `postgres.password` (the superuser `quire`'s
//! password, `0600`) and `postgres.log` (the server's output, appended).
//!
//! The server listens on no TCP address (`listen_addresses = ''`), only on a socket in a
//! folder that only its own user may enter (root passes any folder): nothing else on the
//! machine reaches it. Authentication is still `scram-sha-256` for every connection, so the
//! databases' roles log in with their passwords exactly as on an operator's cluster, and a
//! reader of the socket alone learns nothing.
//!
//! PostgreSQL refuses to run as root. When Quire is root (CI, containers), `initdb` and
//! `postgres` run as the `postgres` system user (its uid and gid set on the child, no
//! `runuser`), which then owns `postgres/` and `postgres-run/`; the data folder gains the
//! search bit for others (`o+x`) so that user can reach them.
//!
//! The server is stopped when the [`LocalCluster`] is stopped or dropped: `SIGINT` (a fast
//! shutdown: sessions ended, a clean checkpoint; `SIGTERM` would wait for every client to
//! leave), then `SIGQUIT` after 10 s, then `SIGKILL`. If Quire itself is killed, the server
//! outlives it, and the next start fails on its lock file naming the old process.

mod host;

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use host::find_binaries;
use host::{RunAs, hand_over, let_through, run_as};
use quire_kernel::InfraError;
use rustix::process::{Pid, Signal, kill_process};
use tokio_postgres::NoTls;

/// The socket's "port": it names the socket file, in a folder no other server uses.
const PORT: u16 = 5432;
const SUPERUSER: &str = "quire";
const INITDB_DEADLINE: Duration = Duration::from_secs(120);
const START_DEADLINE: Duration = Duration::from_secs(30);
/// Bytes a unix socket's path may have (`sun_path`, with its NUL).
const SOCKET_PATH_MAX: usize = 107;

/// A running private cluster. Stopped when dropped. `Debug` leaves out the URL, which
/// holds the superuser's password.
pub struct LocalCluster {
    child: Option<Child>,
    url: String,
    data_dir: PathBuf,
}

impl std::fmt::Debug for LocalCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalCluster")
            .field("data_dir", &self.data_dir)
            .field("pid", &self.pid())
            .finish_non_exhaustive()
    }
}

impl LocalCluster {
    /// Makes the cluster under `data_dir` if it is not there yet, starts it, and waits until
    /// it takes connections.
    ///
    /// # Errors
    /// No `initdb`/`postgres` on the machine; root without a `postgres` user; `initdb` or
    /// the server failing (the message ends with the tail of its output); the server not
    /// answering within 30 s.
    pub async fn start(data_dir: &Path) -> Result<Self, InfraError> {
        std::fs::create_dir_all(data_dir).map_err(|e| io("creating the data folder", &e))?;
        let data_dir = data_dir
            .canonicalize()
            .map_err(|e| io("finding the data folder", &e))?;
        let pgdata = data_dir.join("postgres");
        let socket_dir = data_dir.join("postgres-run");
        let bin = find_binaries(Some(&pgdata)).ok_or_else(|| {
            InfraError::new(
                "QUIRE_DATABASES=local needs PostgreSQL's `initdb` and `postgres`: none on PATH \
                 nor in /usr/lib/postgresql/*/bin (install PostgreSQL's server package)",
            )
        })?;
        let socket = socket_dir.join(format!(".s.PGSQL.{PORT}"));
        if socket.as_os_str().len() > SOCKET_PATH_MAX {
            return Err(InfraError::new(format!(
                "QUIRE_DATABASES=local: the socket path {} is longer than a unix socket's {} \
                 bytes; choose a shorter data folder",
                socket.display(),
                SOCKET_PATH_MAX
            )));
        }
        let user = run_as()?;
        if let Some(user) = user {
            let_through(&data_dir, user)?;
        }
        make_private_dir(&socket_dir, user)?;
        let password = password(&data_dir.join("postgres.password"))?;
        let log_path = data_dir.join("postgres.log");
        if !pgdata.join("PG_VERSION").is_file() {
            make_private_dir(&pgdata, user)?;
            initdb(&bin, &pgdata, &socket_dir, &password, user, &log_path).await?;
        }
        let child = spawn_server(&bin, &pgdata, &socket_dir, user, &log_path)?;
        let url = admin_url(&socket_dir, &password);
        let mut cluster = Self {
            child: Some(child),
            url,
            data_dir,
        };
        cluster.wait_ready(&pgdata, &log_path).await?;
        Ok(cluster)
    }

    /// The superuser's connection string, for [`crate::PgCluster::connect`].
    #[must_use]
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The server's process id while it runs.
    #[must_use]
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    #[must_use]
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Stops the server and waits for it to exit.
    ///
    /// # Errors
    /// The server could not be signalled or waited for.
    pub async fn stop(mut self) -> Result<(), InfraError> {
        let Some(child) = self.child.take() else {
            return Ok(());
        };
        tokio::task::spawn_blocking(move || shut_down(child))
            .await
            .map_err(|e| InfraError::new(format!("stopping PostgreSQL: {e}")))?
    }

    /// Waits until the server takes connections. A connection alone does not prove it is
    /// this child's: a server already running on the folder answers on the same socket
    /// while the child fails on its lock file. So the server counts as ready once
    /// `postmaster.pid` also names the child.
    async fn wait_ready(&mut self, pgdata: &Path, log_path: &Path) -> Result<(), InfraError> {
        let mut config: tokio_postgres::Config = self
            .url
            .parse()
            .map_err(|e| InfraError::new(format!("the local cluster's URL: {e}")))?;
        config.connect_timeout(Duration::from_secs(2));
        let started = Instant::now();
        loop {
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                self.child = None;
                return Err(InfraError::new(format!(
                    "PostgreSQL exited while starting ({status}); its output ends with:\n{}",
                    log_tail(log_path)
                )));
            }
            match config.connect(NoTls).await {
                Ok(_) if self.pid().is_some() && postmaster_pid(pgdata) == self.pid() => {
                    return Ok(());
                }
                Ok(_) if started.elapsed() < START_DEADLINE => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Ok(_) => {
                    return Err(InfraError::new(format!(
                        "another PostgreSQL (pid {:?}) answers on {}: another Quire uses this \
                         data folder, or an earlier one left it running",
                        postmaster_pid(pgdata),
                        pgdata.display()
                    )));
                }
                Err(e) if e.code().is_some_and(|c| c.code() == "28P01") => {
                    return Err(InfraError::new(
                        "the local cluster refuses the password in postgres.password: restore \
                         the file, or remove the postgres folder to start afresh",
                    ));
                }
                Err(_) if started.elapsed() < START_DEADLINE => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(e) => {
                    return Err(InfraError::new(format!(
                        "PostgreSQL did not take connections within {} s ({e}); its output ends \
                         with:\n{}",
                        START_DEADLINE.as_secs(),
                        log_tail(log_path)
                    )));
                }
            }
        }
    }
}

impl Drop for LocalCluster {
    fn drop(&mut self) {
        if let Some(child) = self.child.take()
            && let Err(e) = shut_down(child)
        {
            tracing::warn!(error = %e.chain(), "stopping the local PostgreSQL");
        }
    }
}

/// The process id on the first line of the cluster's `postmaster.pid`.
fn postmaster_pid(pgdata: &Path) -> Option<u32> {
    std::fs::read_to_string(pgdata.join("postmaster.pid"))
        .ok()?
        .lines()
        .next()?
        .trim()
        .parse()
        .ok()
}

/// Fast shutdown, then immediate, then kill, each given its time.
fn shut_down(mut child: Child) -> Result<(), InfraError> {
    let pid = i32::try_from(child.id())
        .ok()
        .and_then(Pid::from_raw)
        .ok_or_else(|| InfraError::new("PostgreSQL's process id is not a pid"))?;
    for (signal, grace) in [
        (Signal::INT, Duration::from_secs(10)),
        (Signal::QUIT, Duration::from_secs(5)),
        (Signal::KILL, Duration::from_secs(5)),
    ] {
        if child
            .try_wait()
            .map_err(|e| io("waiting for PostgreSQL", &e))?
            .is_some()
        {
            return Ok(());
        }
        // It may exit between the check and the signal; waiting below settles that.
        let _ = kill_process(pid, signal);
        let until = Instant::now() + grace;
        while Instant::now() < until {
            if child
                .try_wait()
                .map_err(|e| io("waiting for PostgreSQL", &e))?
                .is_some()
            {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    Err(InfraError::new(format!(
        "PostgreSQL (pid {pid:?}) outlived SIGKILL"
    )))
}

fn io(what: &str, e: &std::io::Error) -> InfraError {
    InfraError::new(format!("{what}: {e}"))
}

/// A folder only PostgreSQL's user may enter.
fn make_private_dir(dir: &Path, user: Option<RunAs>) -> Result<(), InfraError> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io(&format!("creating {}", dir.display()), &e)),
    }
    hand_over(dir, user)
}

/// The superuser's password: the stored one, or a new one stored before `initdb` runs, so
/// a crash between the two leaves a password that a second `initdb` takes again.
fn password(path: &Path) -> Result<String, InfraError> {
    if let Ok(stored) = std::fs::read_to_string(path) {
        let stored = stored.trim().to_owned();
        if !stored.is_empty() {
            return Ok(stored);
        }
    }
    let password = quire_kernel::secret::random_url_token();
    let partial = path.with_extension("password.partial");
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&partial)
        .map_err(|e| io("storing the local cluster's password", &e))?;
    file.write_all(password.as_bytes())
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&partial, path))
        .map_err(|e| io("storing the local cluster's password", &e))?;
    Ok(password)
}

async fn initdb(
    bin: &Path,
    pgdata: &Path,
    socket_dir: &Path,
    password: &str,
    user: Option<RunAs>,
    log_path: &Path,
) -> Result<(), InfraError> {
    // initdb reads the password from a file: one in the socket folder, which only its user
    // may enter, removed once read.
    let pwfile = socket_dir.join("initdb.pw");
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&pwfile)
        .map_err(|e| io("writing initdb's password file", &e))?;
    file.write_all(password.as_bytes())
        .map_err(|e| io("writing initdb's password file", &e))?;
    drop(file);
    hand_over(&pwfile, user)?;
    let mut command = tokio::process::Command::new(bin.join("initdb"));
    command
        .arg("-D")
        .arg(pgdata)
        .arg("-U")
        .arg(SUPERUSER)
        .arg("--auth=scram-sha-256")
        .arg(format!("--pwfile={}", pwfile.display()))
        // UTF-8 everywhere, with byte-order collation: the one locale every machine has.
        .args(["--encoding=UTF8", "--locale=C"])
        .current_dir(socket_dir)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    if let Some(user) = user {
        command.uid(user.uid).gid(user.gid);
    }
    let output = tokio::time::timeout(INITDB_DEADLINE, command.output()).await;
    let _ = std::fs::remove_file(&pwfile);
    let output = output
        .map_err(|_| InfraError::new("initdb did not finish within 120 s"))?
        .map_err(|e| io("running initdb", &e))?;
    // Its output goes to the server's log, for whoever reads that later.
    if let Ok(mut log) = OpenOptions::new().create(true).append(true).open(log_path) {
        let _ = log.write_all(&output.stdout);
        let _ = log.write_all(&output.stderr);
    }
    if output.status.success() {
        Ok(())
    } else {
        Err(InfraError::new(format!(
            "initdb failed ({}); its output ends with:\n{}",
            output.status,
            log_tail(log_path)
        )))
    }
}

fn spawn_server(
    bin: &Path,
    pgdata: &Path,
    socket_dir: &Path,
    user: Option<RunAs>,
    log_path: &Path,
) -> Result<Child, InfraError> {
    let log = OpenOptions::new()
        .create(true)
        .append(true)
        .open(log_path)
        .map_err(|e| io("opening postgres.log", &e))?;
    let log_err = log
        .try_clone()
        .map_err(|e| io("opening postgres.log", &e))?;
    let dir = socket_dir.display().to_string();
    if dir.contains('"') {
        return Err(InfraError::new(
            "the data folder's path may not hold a `\"`",
        ));
    }
    let mut command = Command::new(bin.join("postgres"));
    command
        .arg("-D")
        .arg(pgdata)
        .args(["-c", "listen_addresses="])
        // Quoted: the setting is a list, split at commas outside quotes.
        .arg("-c")
        .arg(format!("unix_socket_directories=\"{dir}\""))
        .args(["-c", "unix_socket_permissions=0700"])
        .arg("-c")
        .arg(format!("port={PORT}"))
        // Failing statements are not copied into the log: tenants' SQL is theirs, and the
        // log is kept forever.
        .args(["-c", "log_min_error_statement=panic"])
        .current_dir(socket_dir)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err);
    if let Some(user) = user {
        command.uid(user.uid).gid(user.gid);
    }
    command.spawn().map_err(|e| io("starting postgres", &e))
}

/// The superuser's URL: the socket folder percent-encoded as the host, as libpq and
/// tokio-postgres read it.
fn admin_url(socket_dir: &Path, password: &str) -> String {
    let mut host = String::new();
    for b in socket_dir.as_os_str().as_encoded_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            host.push(char::from(*b));
        } else {
            host.push_str(&format!("%{b:02X}"));
        }
    }
    format!("postgresql://{SUPERUSER}:{password}@{host}:{PORT}/postgres")
}

/// The last lines of the server's log, for an error message.
fn log_tail(log_path: &Path) -> String {
    let Ok(mut file) = File::open(log_path) else {
        return "(no log)".into();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = file.seek(SeekFrom::Start(len.saturating_sub(4096)));
    let mut bytes = Vec::new();
    let _ = file.read_to_end(&mut bytes);
    // The cut may fall inside a character.
    let tail = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = tail.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_postgres::config::Host;

    #[test]
    fn the_url_names_the_socket_folder() {
        let url = admin_url(Path::new("/tmp/a b/postgres-run"), "pw-_x");
        let config: tokio_postgres::Config = url.parse().expect("parses");
        assert_eq!(
            config.get_hosts(),
            [Host::Unix(PathBuf::from("/tmp/a b/postgres-run"))]
        );
        assert_eq!(config.get_ports(), [PORT]);
        assert_eq!(config.get_user(), Some(SUPERUSER));
        assert_eq!(config.get_password(), Some(&b"pw-_x"[..]));
        assert_eq!(config.get_dbname(), Some("postgres"));
    }
}
