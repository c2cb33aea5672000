//! A connection that speaks PostgreSQL's extended query protocol itself, for the data API's
//! requests. tokio-postgres sends `Sync` after every statement, so a request's `BEGIN`,
//! role and claims, statement and `COMMIT` cost four `ReadyForQuery` answers, each flushed
//! by the server and woken for by the client; here they go as one write under one `Sync`
//! and come back as one answer (PostgreSQL's pipeline mode, as libpq's). Every statement is
//! prepared by name on first use, in the same write, and kept per connection; values are
//! bound as text and every column comes back as text.
//!
//! The connection has no task of its own: the request that holds it writes and reads it, so
//! a request dropped halfway leaves it mid-answer, and the pool closes it (`Lent::clean`).
//! Its backend may still be running then, so a connection knows who its backend is (the
//! key data of its login, and its start) and whether it is waiting for an answer
//! ([`Wire::left_running`]), for the pool to end what it left (`abandon.rs`).

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::time::Duration;

use bytes::BytesMut;
use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend::{ErrorResponseBody, Message};
use postgres_protocol::message::frontend;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};

/// The type every parameter is declared with: `text`.
const TEXT_OID: u32 = 25;

/// The most read buffer a connection keeps between answers.
const READ_KEPT: usize = 1 << 20;

/// Most statements one connection keeps prepared; past it they are closed and the cache
/// starts again.
const STATEMENTS_KEPT: usize = 256;

/// What PostgreSQL said when it refused a statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbError {
    pub sqlstate: String,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
}

/// Why an exchange failed.
#[derive(Debug)]
pub enum WireError {
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
pub type Row = Vec<Option<String>>;

/// One statement of a pipeline and the values of its parameters.
pub struct Step<'a> {
    pub sql: &'a str,
    pub params: &'a [Option<&'a str>],
}

/// The statement only: values may be a request's claims, which no log is to hold.
impl std::fmt::Debug for Step<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Step")
            .field("sql", &self.sql)
            .field("params", &self.params.len())
            .finish()
    }
}

impl Step<'static> {
    pub const BEGIN: Self = Self::bare("BEGIN");
    pub const COMMIT: Self = Self::bare("COMMIT");
    pub const ROLLBACK: Self = Self::bare("ROLLBACK");

    /// A statement without parameters.
    pub const fn bare(sql: &'static str) -> Self {
        Self { sql, params: &[] }
    }
}

/// What a pipeline came back with: the rows of each step that ran (steps after a refused
/// one are skipped by the server), the refusal if any, and the transaction status after the
/// `Sync` (`I` idle, `T` in a transaction, `E` in a failed one).
#[derive(Debug)]
pub struct Answer {
    pub rows: Vec<Vec<Row>>,
    pub refused: Option<DbError>,
    pub status: u8,
}

enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

/// Where a connection went: its cancel request goes there on a connection of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Peer {
    Tcp(String, u16),
    /// A unix socket's path.
    Unix(PathBuf),
}

/// The backend a connection logged in to: its key data, for a cancel, and its start (as
/// `quire_databases::BACKEND_IDENTITY_SQL` reads it), for a terminate that never takes a
/// newer backend under a reused pid for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Backend {
    pub pid: i32,
    pub secret: i32,
    pub started: i64,
}

/// What a connection let go of mid-answer may have left running, and how to reach it.
#[derive(Debug, Clone)]
pub(crate) struct Leftover {
    pub peer: Peer,
    pub backend: Backend,
    pub connect_timeout: Duration,
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

pub struct Wire {
    stream: Stream,
    peer: Peer,
    connect_timeout: Duration,
    /// Known once logged in.
    backend: Option<Backend>,
    /// Between sending a pipeline and reading its `ReadyForQuery`: the server may be
    /// running it.
    in_flight: bool,
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

impl std::fmt::Debug for Wire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wire")
            .field("statements", &self.statements.len())
            .field("broken", &self.broken)
            .finish_non_exhaustive()
    }
}

impl Wire {
    /// Whether the connection broke: it must not serve another request.
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// What its backend may still be running, when a pipeline was sent and its answer not
    /// all read (the request was dropped, or broke mid-answer).
    pub(crate) fn left_running(&self) -> Option<Leftover> {
        let backend = self.backend.filter(|_| self.in_flight)?;
        Some(Leftover {
            peer: self.peer.clone(),
            backend,
            connect_timeout: self.connect_timeout,
        })
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
        if self.broken {
            return Err(WireError::Broken(
                "the connection broke in an earlier exchange".to_owned(),
            ));
        }
        let outcome = self.exchange(steps).await;
        match outcome {
            Ok(_) => self.in_flight = false,
            Err(_) => {
                self.broken = true;
                self.write.clear();
            }
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
        // A text twice in one pipeline is parsed once.
        let mut parsing: Vec<Option<String>> = Vec::with_capacity(steps.len());
        for (i, step) in steps.iter().enumerate() {
            let parsed_before = steps[..i]
                .iter()
                .zip(&parsing)
                .find_map(|(s, name)| name.as_ref().filter(|_| s.sql == step.sql));
            let known = self.statements.get(step.sql).or(parsed_before).cloned();
            let name = match known {
                Some(name) => {
                    parsing.push(None);
                    name
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
        self.in_flight = true;
        self.flush().await?;

        for _ in &closing {
            match self.message().await? {
                Message::CloseComplete => {}
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
                    match refused.as_ref().map(|e| e.sqlstate.as_str()) {
                        // The server has none of the statements this connection thinks it
                        // prepared (a function ran `DEALLOCATE ALL`): prepare afresh.
                        Some("26000") => self.statements.clear(),
                        // A plan PostgreSQL calls stale (a table changed under a prepared
                        // statement before the schema's notification came): the same.
                        Some("0A000") => self.forget_statements(),
                        _ => {}
                    }
                    if self.read.is_empty() && self.read.capacity() > READ_KEPT {
                        // One large answer must not stay allocated while the connection
                        // waits in the pool.
                        self.read = BytesMut::with_capacity(8192);
                    }
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

mod login;
#[cfg(test)]
mod tests;
