//! A connection that speaks PostgreSQL's extended query protocol itself, for the data API's
//! requests. A client library sends `Sync` after every statement, so a request's `BEGIN`,
//! role and claims, statement and `COMMIT` cost four `ReadyForQuery` answers, each flushed
//! by the server and woken for by the client; here they go as one write under one `Sync`
//! and come back as one answer (PostgreSQL's pipeline mode, as libpq's). Every statement is
//! prepared by name on first use, in the same write, and kept per connection; values are
//! bound as text and every column comes back as text.
//!
//! The connection has no task of its own: the request that holds it writes and reads it, so
//! a request dropped halfway leaves it mid-answer, and the pool closes it (`Lent::clean`).

use std::collections::HashMap;
use std::io;
use std::path::Path;
use std::time::Duration;

use bytes::BytesMut;
use fallible_iterator::FallibleIterator;
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, SCRAM_SHA_256, ScramSha256};
use postgres_protocol::message::backend::{ErrorResponseBody, Message};
use postgres_protocol::message::frontend;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};
use tokio_postgres::Config;
use tokio_postgres::config::Host;

/// The type every parameter is declared with: `text`.
const TEXT_OID: u32 = 25;

/// Most statements one connection keeps prepared; past it they are closed and the cache
/// starts again.
const STATEMENTS_KEPT: usize = 256;

/// What PostgreSQL said when it refused a statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DbError {
    pub sqlstate: String,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
}

/// Why an exchange failed.
#[derive(Debug)]
pub(crate) enum WireError {
    /// PostgreSQL refused a statement; the connection is still usable.
    Db(DbError),
    /// The connection broke or spoke out of turn; it is no longer usable.
    Broken(String),
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Db(e) => write!(f, "{} ({})", e.message, e.sqlstate),
            Self::Broken(e) => f.write_str(e),
        }
    }
}

impl From<io::Error> for WireError {
    fn from(e: io::Error) -> Self {
        Self::Broken(format!("the connection failed: {e}"))
    }
}

/// A row: each column's text, `None` for NULL.
pub(crate) type Row = Vec<Option<String>>;

/// One statement of a pipeline and the values of its parameters.
pub(crate) struct Step<'a> {
    pub sql: &'a str,
    pub params: &'a [Option<&'a str>],
}

/// What a pipeline came back with: the rows of each step that ran (steps after a refused
/// one are skipped by the server), the refusal if any, and the transaction status after the
/// `Sync` (`I` idle, `T` in a transaction, `E` in a failed one).
#[derive(Debug)]
pub(crate) struct Answer {
    pub rows: Vec<Vec<Row>>,
    pub refused: Option<DbError>,
    pub status: u8,
}

enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    async fn read_buf(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        match self {
            Self::Tcp(s) => s.read_buf(buf).await,
            Self::Unix(s) => s.read_buf(buf).await,
        }
    }

    async fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Self::Tcp(s) => s.write_all(bytes).await,
            Self::Unix(s) => s.write_all(bytes).await,
        }
    }
}

pub(crate) struct Wire {
    stream: Stream,
    read: BytesMut,
    write: BytesMut,
    /// Statement text to the name it is prepared under on this connection.
    statements: HashMap<String, String>,
    /// Names to close with the next pipeline (a cache that started again).
    to_close: Vec<String>,
    named: u64,
    /// The schema generation the statements were prepared under.
    generation: u64,
    broken: bool,
}

impl Wire {
    /// Connects and logs in as `config` says: its first reachable host (TCP or a unix
    /// socket's directory), with a password by SCRAM-SHA-256, MD5 or in clear as the server
    /// asks, or none under `trust`.
    ///
    /// # Errors
    /// `Broken` when no host answers in the connect timeout; `Db` when the server refuses
    /// the login.
    pub async fn connect(config: &Config) -> Result<Self, WireError> {
        let timeout = config
            .get_connect_timeout()
            .copied()
            .unwrap_or(Duration::from_secs(5));
        let mut last = WireError::Broken("no host to connect to".to_owned());
        for (i, host) in config.get_hosts().iter().enumerate() {
            let port = config
                .get_ports()
                .get(i)
                .or_else(|| config.get_ports().first())
                .copied()
                .unwrap_or(5432);
            let opened = tokio::time::timeout(timeout, async {
                let stream = match host {
                    Host::Tcp(name) => {
                        let s = TcpStream::connect((name.as_str(), port)).await?;
                        s.set_nodelay(true)?;
                        Stream::Tcp(s)
                    }
                    Host::Unix(dir) => Stream::Unix(
                        UnixStream::connect(Path::new(dir).join(format!(".s.PGSQL.{port}")))
                            .await?,
                    ),
                };
                let mut wire = Self {
                    stream,
                    read: BytesMut::with_capacity(8192),
                    write: BytesMut::with_capacity(1024),
                    statements: HashMap::new(),
                    to_close: Vec::new(),
                    named: 0,
                    generation: 0,
                    broken: false,
                };
                wire.login(config).await?;
                Ok::<_, WireError>(wire)
            })
            .await;
            match opened {
                Ok(Ok(wire)) => return Ok(wire),
                Ok(Err(e @ WireError::Db(_))) => return Err(e),
                Ok(Err(e)) => last = e,
                Err(_) => last = WireError::Broken("connecting timed out".to_owned()),
            }
        }
        Err(last)
    }

    async fn login(&mut self, config: &Config) -> Result<(), WireError> {
        let user = config.get_user().unwrap_or("postgres");
        let mut params = vec![("user", user), ("client_encoding", "UTF8")];
        if let Some(db) = config.get_dbname() {
            params.push(("database", db));
        }
        if let Some(name) = config.get_application_name() {
            params.push(("application_name", name));
        }
        frontend::startup_message(params, &mut self.write)?;
        self.flush().await?;
        let password = config.get_password().unwrap_or_default();
        let mut scram: Option<ScramSha256> = None;
        loop {
            match self.message().await? {
                Message::AuthenticationOk => break,
                Message::AuthenticationCleartextPassword => {
                    frontend::password_message(password, &mut self.write)?;
                    self.flush().await?;
                }
                Message::AuthenticationMd5Password(body) => {
                    let hash = md5_hash(user.as_bytes(), password, body.salt());
                    frontend::password_message(hash.as_bytes(), &mut self.write)?;
                    self.flush().await?;
                }
                Message::AuthenticationSasl(body) => {
                    let mut mechanisms = body.mechanisms();
                    let mut offered = false;
                    while let Some(m) = mechanisms.next()? {
                        offered |= m == SCRAM_SHA_256;
                    }
                    if !offered {
                        return Err(WireError::Broken(
                            "the server offers no SASL mechanism this client has".to_owned(),
                        ));
                    }
                    let s = ScramSha256::new(password, ChannelBinding::unsupported());
                    frontend::sasl_initial_response(SCRAM_SHA_256, s.message(), &mut self.write)?;
                    self.flush().await?;
                    scram = Some(s);
                }
                Message::AuthenticationSaslContinue(body) => {
                    let s = scram.as_mut().ok_or_else(|| out_of_turn("SASL continue"))?;
                    s.update(body.data())?;
                    frontend::sasl_response(s.message(), &mut self.write)?;
                    self.flush().await?;
                }
                Message::AuthenticationSaslFinal(body) => {
                    scram
                        .as_mut()
                        .ok_or_else(|| out_of_turn("SASL final"))?
                        .finish(body.data())?;
                }
                Message::ErrorResponse(body) => return Err(WireError::Db(db_error(&body)?)),
                _ => return Err(out_of_turn("an authentication message")),
            }
        }
        loop {
            match self.message().await? {
                Message::ReadyForQuery(_) => return Ok(()),
                Message::ErrorResponse(body) => return Err(WireError::Db(db_error(&body)?)),
                _ => {}
            }
        }
    }

    /// Whether the connection broke: it must not serve another request.
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// Drops every prepared statement (closing them on the server with the next pipeline)
    /// when the schema `generation` changed, so no plan outlives the DDL that changed its
    /// types.
    pub fn at_generation(&mut self, generation: u64) {
        if self.generation != generation {
            self.forget_statements();
            self.generation = generation;
        }
    }

    /// Forgets the prepared statements (PostgreSQL said a plan no longer fits).
    pub fn forget_statements(&mut self) {
        self.to_close
            .extend(self.statements.drain().map(|(_, name)| name));
    }

    /// Sends `steps` as one pipeline under one `Sync` and reads the whole answer.
    ///
    /// # Errors
    /// `Broken` when the connection fails or answers out of turn; the connection is then
    /// marked broken. A statement PostgreSQL refuses is not an error here but the answer's
    /// `refused`.
    pub async fn pipeline(&mut self, steps: &[Step<'_>]) -> Result<Answer, WireError> {
        let outcome = self.exchange(steps).await;
        if outcome.is_err() {
            self.broken = true;
        }
        outcome
    }

    /// One statement's rows, in a transaction of its own unless one is open.
    ///
    /// # Errors
    /// `Db` when PostgreSQL refuses it, `Broken` as for [`Wire::pipeline`].
    pub async fn query(
        &mut self,
        sql: &str,
        params: &[Option<&str>],
    ) -> Result<Vec<Row>, WireError> {
        let answer = self.pipeline(&[Step { sql, params }]).await?;
        match answer.refused {
            Some(e) => Err(WireError::Db(e)),
            None => Ok(answer.rows.into_iter().next().unwrap_or_default()),
        }
    }

    async fn exchange(&mut self, steps: &[Step<'_>]) -> Result<Answer, WireError> {
        if self.statements.len() + steps.len() > STATEMENTS_KEPT {
            self.forget_statements();
        }
        let closing = std::mem::take(&mut self.to_close);
        for name in &closing {
            frontend::close(b'S', name, &mut self.write)?;
        }
        // Which steps parse now, under which names; recorded once PostgreSQL accepts them.
        let mut parsing: Vec<Option<String>> = Vec::with_capacity(steps.len());
        for step in steps {
            let name = match self.statements.get(step.sql) {
                Some(name) => {
                    parsing.push(None);
                    name.clone()
                }
                None => {
                    self.named += 1;
                    let name = format!("q{}", self.named);
                    frontend::parse(
                        &name,
                        step.sql,
                        std::iter::repeat_n(TEXT_OID, step.params.len()),
                        &mut self.write,
                    )?;
                    parsing.push(Some(name.clone()));
                    name
                }
            };
            frontend::bind(
                "",
                &name,
                std::iter::empty(),
                step.params.iter(),
                |value, buf| {
                    Ok(match value {
                        Some(text) => {
                            buf.extend_from_slice(text.as_bytes());
                            postgres_protocol::IsNull::No
                        }
                        None => postgres_protocol::IsNull::Yes,
                    })
                },
                [0],
                &mut self.write,
            )
            .map_err(|e| match e {
                frontend::BindError::Conversion(e) => WireError::Broken(e.to_string()),
                frontend::BindError::Serialization(e) => e.into(),
            })?;
            frontend::execute("", 0, &mut self.write)?;
        }
        frontend::sync(&mut self.write);
        self.flush().await?;

        for _ in &closing {
            match self.message().await? {
                Message::CloseComplete => {}
                Message::ErrorResponse(body) => {
                    return self.fail_early(db_error(&body)?).await;
                }
                _ => return Err(out_of_turn("closing a statement")),
            }
        }
        let mut rows: Vec<Vec<Row>> = Vec::with_capacity(steps.len());
        let mut current: Vec<Row> = Vec::new();
        let mut refused = None;
        loop {
            match self.message().await? {
                Message::ParseComplete => {
                    if let (Some(step), Some(Some(name))) =
                        (steps.get(rows.len()), parsing.get(rows.len()))
                    {
                        self.statements.insert(step.sql.to_owned(), name.clone());
                    }
                }
                Message::BindComplete => {}
                Message::DataRow(body) => {
                    let buffer = body.buffer();
                    let mut columns = body.ranges();
                    let mut row = Vec::new();
                    while let Some(range) = columns.next()? {
                        row.push(match range {
                            Some(r) => Some(
                                std::str::from_utf8(&buffer[r])
                                    .map_err(|_| out_of_turn("a column not in UTF-8"))?
                                    .to_owned(),
                            ),
                            None => None,
                        });
                    }
                    current.push(row);
                }
                Message::CommandComplete(_) | Message::EmptyQueryResponse => {
                    rows.push(std::mem::take(&mut current));
                }
                Message::ErrorResponse(body) => refused = Some(db_error(&body)?),
                Message::ReadyForQuery(body) => {
                    return Ok(Answer {
                        rows,
                        refused,
                        status: body.status(),
                    });
                }
                _ => return Err(out_of_turn("a pipeline's answer")),
            }
        }
    }

    /// A refusal before any step ran: the rest of the answer is skipped up to the `Sync`.
    async fn fail_early(&mut self, error: DbError) -> Result<Answer, WireError> {
        loop {
            if let Message::ReadyForQuery(body) = self.message().await? {
                return Ok(Answer {
                    rows: Vec::new(),
                    refused: Some(error),
                    status: body.status(),
                });
            }
        }
    }

    async fn flush(&mut self) -> Result<(), WireError> {
        let bytes = self.write.split();
        self.stream.write_all(&bytes).await?;
        Ok(())
    }

    /// The next message, past notices, parameter changes and notifications (the server may
    /// send those at any time).
    async fn message(&mut self) -> Result<Message, WireError> {
        loop {
            if let Some(message) = Message::parse(&mut self.read)? {
                match message {
                    Message::NoticeResponse(_)
                    | Message::ParameterStatus(_)
                    | Message::NotificationResponse(_)
                    | Message::BackendKeyData(_) => continue,
                    other => return Ok(other),
                }
            }
            if self.stream.read_buf(&mut self.read).await? == 0 {
                return Err(WireError::Broken(
                    "the server closed the connection".to_owned(),
                ));
            }
        }
    }
}

fn out_of_turn(what: &str) -> WireError {
    WireError::Broken(format!("the server answered out of turn: {what}"))
}

fn db_error(body: &ErrorResponseBody) -> Result<DbError, WireError> {
    let mut error = DbError {
        sqlstate: String::new(),
        message: String::new(),
        detail: None,
        hint: None,
    };
    let mut fields = body.fields();
    while let Some(field) = fields.next()? {
        let value = String::from_utf8_lossy(field.value_bytes()).into_owned();
        match field.type_() {
            b'C' => error.sqlstate = value,
            b'M' => error.message = value,
            b'D' => error.detail = Some(value),
            b'H' => error.hint = Some(value),
            _ => {}
        }
    }
    Ok(error)
}

/// Against a real PostgreSQL (`QUIRE_TEST_POSTGRES_URL`, skipped when unset). Logins with a
/// password by SCRAM over a unix socket are exercised by the private cluster's black-box
/// test, whose cluster asks for them.
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::print_stdout)]
mod tests {
    use super::*;

    async fn connect() -> Option<Wire> {
        let Ok(url) = std::env::var("QUIRE_TEST_POSTGRES_URL") else {
            println!("skipped: QUIRE_TEST_POSTGRES_URL is not set");
            return None;
        };
        Some(Wire::connect(&url.parse().unwrap()).await.unwrap())
    }

    const BEGIN: Step<'static> = Step {
        sql: "BEGIN",
        params: &[],
    };
    const COMMIT: Step<'static> = Step {
        sql: "COMMIT",
        params: &[],
    };

    fn text(rows: &[Row]) -> Vec<Option<&str>> {
        rows.iter()
            .flat_map(|r| r.iter().map(Option::as_deref))
            .collect()
    }

    #[tokio::test]
    async fn one_pipeline_is_one_transaction_and_its_statements_are_kept() {
        let Some(mut wire) = connect().await else {
            return;
        };
        let set = "SELECT set_config('quire.test', $1, true)";
        let read = "SELECT current_setting('quire.test', true), $1::text IS NULL";
        for value in ["one", "two"] {
            let answer = wire
                .pipeline(&[
                    BEGIN,
                    Step {
                        sql: set,
                        params: &[Some(value)],
                    },
                    Step {
                        sql: read,
                        params: &[None],
                    },
                    COMMIT,
                ])
                .await
                .unwrap();
            assert!(answer.refused.is_none(), "{answer:?}");
            assert_eq!(answer.status, b'I');
            assert_eq!(answer.rows.len(), 4);
            assert_eq!(text(&answer.rows[2]), [Some(value), Some("t")]);
        }
        // The setting was local to each transaction, and four statements were prepared
        // once each for both pipelines.
        let after = wire.query(read, &[Some("x")]).await.unwrap();
        assert_eq!(text(&after), [Some(""), Some("f")]);
        assert_eq!(wire.statements.len(), 4);
        let prepared = wire
            .query("SELECT count(*) FROM pg_prepared_statements", &[])
            .await
            .unwrap();
        assert_eq!(text(&prepared), [Some("5")]);
    }

    #[tokio::test]
    async fn a_refused_step_skips_the_rest_and_leaves_the_transaction_failed() {
        let Some(mut wire) = connect().await else {
            return;
        };
        let answer = wire
            .pipeline(&[
                BEGIN,
                Step {
                    sql: "SELECT 1 / $1::int",
                    params: &[Some("0")],
                },
                Step {
                    sql: "SELECT 2",
                    params: &[],
                },
                COMMIT,
            ])
            .await
            .unwrap();
        let refused = answer.refused.unwrap();
        assert_eq!(refused.sqlstate, "22012");
        assert_eq!(refused.message, "division by zero");
        assert_eq!(answer.rows.len(), 1, "only BEGIN completed");
        assert_eq!(answer.status, b'E');
        let rolled = wire
            .pipeline(&[Step {
                sql: "ROLLBACK",
                params: &[],
            }])
            .await
            .unwrap();
        assert_eq!(rolled.status, b'I');
        assert!(!wire.is_broken());

        // A statement PostgreSQL cannot parse is refused and never taken as prepared.
        let Err(WireError::Db(e)) = wire.query("SELEC 1", &[]).await else {
            panic!("a syntax error is a refusal");
        };
        assert_eq!(e.sqlstate, "42601");
        assert!(!wire.statements.contains_key("SELEC 1"));
        assert_eq!(
            text(&wire.query("SELECT 'still here'", &[]).await.unwrap()),
            [Some("still here")]
        );
    }

    #[tokio::test]
    async fn forgotten_statements_are_closed_on_the_server() {
        let Some(mut wire) = connect().await else {
            return;
        };
        for n in 0..3 {
            let sql = format!("SELECT {n}");
            wire.query(&sql, &[]).await.unwrap();
        }
        wire.at_generation(1);
        assert!(wire.statements.is_empty());
        let prepared = wire
            .query("SELECT count(*) FROM pg_prepared_statements", &[])
            .await
            .unwrap();
        assert_eq!(
            text(&prepared),
            [Some("1")],
            "only the count's own statement"
        );
    }

    #[tokio::test]
    async fn a_connection_the_server_ends_is_broken() {
        let Some(mut wire) = connect().await else {
            return;
        };
        let ended = wire
            .query("SELECT pg_terminate_backend(pg_backend_pid())", &[])
            .await;
        assert!(matches!(
            ended,
            Err(WireError::Db(_)) | Err(WireError::Broken(_))
        ));
        let next = wire.query("SELECT 1", &[]).await;
        assert!(matches!(next, Err(WireError::Broken(_))), "{next:?}");
        assert!(wire.is_broken());
    }
}
