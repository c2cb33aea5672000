//! Opening a connection: the first reachable host of the configuration, and the login the
//! server asks for.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use bytes::BytesMut;
use fallible_iterator::FallibleIterator;
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, SCRAM_SHA_256, ScramSha256};
use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;
use tokio::net::{TcpStream, UnixStream};
use tokio_postgres::Config;
use tokio_postgres::config::Host;

use super::{Stream, Wire, WireError, db_error, out_of_turn};

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
            let opened = tokio::time::timeout(timeout, async {
                let stream = match host {
                    Host::Tcp(name) => {
                        let s = TcpStream::connect((name.as_str(), port)).await?;
                        s.set_nodelay(true)?;
                        if config.get_keepalives() {
                            // As tokio-postgres does: a peer that vanished is noticed.
                            socket2::SockRef::from(&s).set_tcp_keepalive(
                                &socket2::TcpKeepalive::new()
                                    .with_time(config.get_keepalives_idle()),
                            )?;
                        }
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
        loop {
            match self.message().await? {
                Message::ReadyForQuery(_) => return Ok(()),
                Message::ErrorResponse(body) => return Err(WireError::Db(db_error(&body)?)),
                _ => {}
            }
        }
    }
}
