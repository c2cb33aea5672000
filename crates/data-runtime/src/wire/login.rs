//! Opening a connection: the first reachable host of the configuration, the login the
//! server asks for, and who the backend is; and a cancel request to that backend.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use bytes::BytesMut;
use fallible_iterator::FallibleIterator;
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, SCRAM_SHA_256, ScramSha256};
use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;
use quire_databases::BACKEND_IDENTITY_SQL;
use tokio::net::{TcpStream, UnixStream};
use tokio_postgres::Config;
use tokio_postgres::config::Host;

use super::{Backend, Leftover, Peer, Stream, Wire, WireError, db_error, out_of_turn};

impl Peer {
    async fn open(&self, keepalive: Option<Duration>) -> std::io::Result<Stream> {
        Ok(match self {
            Self::Tcp(name, port) => {
                let s = TcpStream::connect((name.as_str(), *port)).await?;
                s.set_nodelay(true)?;
                if let Some(idle) = keepalive {
                    // As tokio-postgres does: a peer that vanished is noticed.
                    socket2::SockRef::from(&s)
                        .set_tcp_keepalive(&socket2::TcpKeepalive::new().with_time(idle))?;
                }
                Stream::Tcp(s)
            }
            Self::Unix(path) => Stream::Unix(UnixStream::connect(path).await?),
        })
    }
}

impl Leftover {
    /// Asks the server to cancel what the backend runs (a `CancelRequest` with its key
    /// data, on a connection of its own, which the server closes without an answer).
    pub(crate) async fn cancel(&self) -> Result<(), WireError> {
        tokio::time::timeout(self.connect_timeout, async {
            let mut stream = self.peer.open(None).await?;
            let mut message = BytesMut::with_capacity(16);
            frontend::cancel_request(self.backend.pid, self.backend.secret, &mut message);
            stream.write_all(&message).await?;
            // The server closes it once it has read the request.
            let mut rest = BytesMut::with_capacity(16);
            while stream.read_buf(&mut rest).await? > 0 {}
            Ok::<(), WireError>(())
        })
        .await
        .map_err(|_| WireError::Broken("a cancel request timed out".to_owned()))?
    }
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
        if !config.get_hostaddrs().is_empty() {
            // Refused rather than ignored: a connection elsewhere than the owner's would be
            // a surprise.
            return Err(WireError::Broken(
                "hostaddr is not supported for the data API's connections: name the host"
                    .to_owned(),
            ));
        }
        let mut last = WireError::Broken("no host to connect to".to_owned());
        for (i, host) in config.get_hosts().iter().enumerate() {
            let port = config
                .get_ports()
                .get(i)
                .or_else(|| config.get_ports().first())
                .copied()
                .unwrap_or(5432);
            let peer = match host {
                Host::Tcp(name) => Peer::Tcp(name.clone(), port),
                Host::Unix(dir) => Peer::Unix(Path::new(dir).join(format!(".s.PGSQL.{port}"))),
            };
            let keepalive = config
                .get_keepalives()
                .then(|| config.get_keepalives_idle());
            let opened = tokio::time::timeout(timeout, async {
                let mut wire = Self {
                    stream: peer.open(keepalive).await?,
                    peer,
                    connect_timeout: timeout,
                    backend: None,
                    in_flight: false,
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
        let user = config
            .get_user()
            .ok_or_else(|| WireError::Broken("the configuration names no user".to_owned()))?;
        let mut params = vec![("user", user), ("client_encoding", "UTF8")];
        if let Some(options) = config.get_options() {
            params.push(("options", options));
        }
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
        let mut key = None;
        loop {
            // `message` passes over the key data, which only a login sends.
            let message = match Message::parse(&mut self.read)? {
                Some(message) => message,
                None => {
                    if self.stream.read_buf(&mut self.read).await? == 0 {
                        return Err(WireError::Broken(
                            "the server closed the connection".to_owned(),
                        ));
                    }
                    continue;
                }
            };
            match message {
                Message::BackendKeyData(body) => key = Some((body.process_id(), body.secret_key())),
                Message::ReadyForQuery(_) => break,
                Message::ErrorResponse(body) => return Err(WireError::Db(db_error(&body)?)),
                _ => {}
            }
        }
        let (pid, secret) = key.ok_or_else(|| out_of_turn("a login without key data"))?;
        let started = self.backend_start(pid).await?;
        self.backend = Some(Backend {
            pid,
            secret,
            started,
        });
        Ok(())
    }

    /// The backend's start, by the simple protocol (so no statement is left prepared).
    async fn backend_start(&mut self, pid: i32) -> Result<i64, WireError> {
        frontend::query(BACKEND_IDENTITY_SQL, &mut self.write)?;
        self.flush().await?;
        let mut found = None;
        let mut refused = None;
        loop {
            match self.message().await? {
                Message::RowDescription(_) | Message::CommandComplete(_) => {}
                Message::DataRow(body) => {
                    let buffer = body.buffer();
                    let mut columns = body.ranges();
                    let mut text = |what| -> Result<String, WireError> {
                        let range = columns.next()?.flatten().ok_or_else(|| out_of_turn(what))?;
                        std::str::from_utf8(&buffer[range])
                            .map(str::to_owned)
                            .map_err(|_| out_of_turn(what))
                    };
                    let said: i32 = text("a backend's pid")?
                        .parse()
                        .map_err(|_| out_of_turn("a backend's pid"))?;
                    let started: i64 = text("a backend's start")?
                        .parse()
                        .map_err(|_| out_of_turn("a backend's start"))?;
                    if said != pid {
                        return Err(out_of_turn("a pid other than the key data's"));
                    }
                    found = Some(started);
                }
                Message::ErrorResponse(body) => refused = Some(db_error(&body)?),
                Message::ReadyForQuery(_) => break,
                _ => return Err(out_of_turn("the backend's start")),
            }
        }
        if let Some(e) = refused {
            return Err(WireError::Db(e));
        }
        found.ok_or_else(|| out_of_turn("no row for the backend's start"))
    }
}
