//! One client's connection: its requests read, answered and written in turn (pipelined
//! requests too), under the deadlines of [`WireLimits`].

use std::cell::Cell;
use std::io::IoSlice;
use std::mem::MaybeUninit;
use std::net::IpAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep, timeout_at};

use super::Handler;
use super::framing::{
    Framing, MAX_HEAD, MAX_HEADERS, bad_request, frame, head_too_large, pipelined, shed_cookies,
    split_target,
};
use super::message::{Pieces, Request, Response};
use super::server::WireLimits;
use super::turns::Turn;
use super::writing::{write_answer, write_both};
/// Pipelined answers are gathered up to this size before they are written.
const GATHER: usize = 64 * 1024;
/// After answering with a close, what the client still sends is read and dropped for this
/// long: closing on unread data makes the kernel send a reset, which can destroy the answer
/// before the client has read it.
const LINGER: Duration = Duration::from_secs(1);
const LINGER_BYTES: usize = 64 * 1024;
/// At most this much of a file is sent by one `sendfile` call, so one large download does
/// not hold its worker while others wait.
const SENDFILE_CHUNK: usize = 1024 * 1024;

/// What waiting for a request gave.
enum Next {
    Request(Framing),
    /// The client closed, went idle past the keep-alive, or the server is stopping.
    Closed,
    Refuse(Response),
}

/// A connection's state between requests.
pub(super) struct Connection<H> {
    pub stream: TcpStream,
    pub peer: IpAddr,
    /// The client already held its share of connections when this one opened.
    pub over_share: bool,
    pub handler: H,
    pub limits: Arc<WireLimits>,
    /// The worker is stopping: answer what is in flight, then close.
    pub stopping: Rc<Cell<bool>>,
    /// The worker's turn on its core, shared by its connections.
    pub turn: Rc<Turn>,
    /// Set while waiting for a request with nothing of it received: the worker closes such
    /// connections at once when it stops (by aborting their task).
    pub idle: Rc<Cell<bool>>,
    pub accepted: Instant,
    /// The deadline of the wait for a request. One timer for the connection's life: moving
    /// it later, as each keep-alive wait does, costs no work in the timer wheel.
    pub wait: Pin<Box<Sleep>>,
}

impl<H: Handler> Connection<H> {
    /// Serves requests until the client closes, a deadline passes or the server stops.
    pub(super) async fn serve(mut self) {
        let mut buf = BytesMut::with_capacity(4096);
        let mut out: Vec<u8> = Vec::with_capacity(4096);
        let mut first = true;
        loop {
            let framing = match self.next_head(&mut buf, first).await {
                Next::Request(framing) => framing,
                Next::Closed => return,
                Next::Refuse(response) => return self.refuse(&mut out, &response).await,
            };
            first = false;
            if self.over_share {
                let response = Response::refusal(
                    503,
                    "too_many_connections",
                    "too many connections from your address; close some and try again",
                );
                return self.refuse(&mut out, &response).await;
            }
            if framing.body_len > self.limits.max_body {
                let response = Response::refusal(
                    413,
                    "payload_too_large",
                    "the request body is larger than this origin takes",
                );
                return self.refuse(&mut out, &response).await;
            }
            let total = framing.head_len + framing.body_len;
            if buf.len() < total {
                match self.read_body(&mut buf, framing, total).await {
                    Ok(()) => {}
                    Err(Some(response)) => return self.refuse(&mut out, &response).await,
                    Err(None) => return,
                }
            }
            let (response, is_head) = self.answer(&buf[..total], framing.head_len).await;
            buf.advance(total);
            let keep_alive = framing.keep_alive && !response.closes() && !self.stopping.get();
            let large = write_answer(&mut out, &response, is_head, keep_alive, framing.http10);
            if let Some((length, pieces)) = response.take_stream() {
                if is_head {
                    drop(pieces);
                } else {
                    if self.write_out(&out, large.as_deref()).await.is_err() {
                        return;
                    }
                    out.clear();
                    if self.write_pieces(length, pieces).await.is_err() {
                        return;
                    }
                    self.turn.after_answer();
                    if !keep_alive {
                        return self.linger().await;
                    }
                    continue;
                }
            }
            let more = keep_alive && large.is_none() && pipelined(&buf);
            if !more || out.len() >= GATHER {
                if self.write_out(&out, large.as_deref()).await.is_err() {
                    return;
                }
                out.clear();
                self.turn.after_answer();
            }
            if !keep_alive {
                return self.linger().await;
            }
        }
    }

    /// Waits for a complete request head. The first request's head must arrive within the
    /// header timeout of the accept; later ones within it of their first byte, after at most
    /// the keep-alive of idleness.
    async fn next_head(&mut self, buf: &mut BytesMut, first: bool) -> Next {
        let (header_timeout, keep_alive) = (self.limits.header_timeout, self.limits.keep_alive);
        let mut deadline = first.then(|| self.accepted + header_timeout);
        loop {
            if !buf.is_empty() {
                let refusal = match frame(buf) {
                    Ok(Some(framing)) if framing.head_len <= MAX_HEAD => {
                        return Next::Request(framing);
                    }
                    Ok(Some(_)) => Some(head_too_large()),
                    Ok(None) if buf.len() > MAX_HEAD => Some(head_too_large()),
                    Ok(None) => None,
                    // Too many header lines: some may be cookies to shed.
                    Err(response) if response.status() == 431 => Some(response),
                    Err(response) => return Next::Refuse(response),
                };
                if let Some(refusal) = refusal {
                    if shed_cookies(buf, |name| self.handler.owns_cookie(name)) {
                        continue;
                    }
                    return Next::Refuse(refusal);
                }
                deadline.get_or_insert_with(|| Instant::now() + header_timeout);
            } else if self.stopping.get() {
                return Next::Closed;
            }
            let until = deadline.unwrap_or_else(|| Instant::now() + keep_alive);
            if buf.capacity() - buf.len() < 1024 {
                buf.reserve(4096);
            }
            self.idle.set(buf.is_empty());
            self.wait.as_mut().reset(until);
            let read = tokio::select! {
                biased;
                read = self.stream.read_buf(buf) => Some(read),
                () = self.wait.as_mut() => None,
            };
            self.idle.set(false);
            match read {
                None if buf.is_empty() => return Next::Closed,
                None => {
                    return Next::Refuse(Response::refusal(
                        408,
                        "request_timeout",
                        "the request's head did not arrive in time",
                    ));
                }
                Some(Ok(0) | Err(_)) => return Next::Closed,
                Some(Ok(_)) => {}
            }
        }
    }

    /// Reads the rest of a body of declared length by the edge's body deadline. `Err(None)`:
    /// the client went away; `Err(Some(_))`: the answer to give before closing.
    async fn read_body(
        &mut self,
        buf: &mut BytesMut,
        framing: Framing,
        total: usize,
    ) -> Result<(), Option<Response>> {
        let length = u64::try_from(framing.body_len).unwrap_or(u64::MAX);
        let allowed = self.limits.edge.body_deadline(Some(length));
        let deadline = Instant::now() + allowed;
        if framing.expect_continue {
            let sent = timeout_at(
                deadline,
                self.stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n"),
            )
            .await;
            if !matches!(sent, Ok(Ok(()))) {
                return Err(None);
            }
        }
        buf.reserve(total - buf.len());
        while buf.len() < total {
            match timeout_at(deadline, self.stream.read_buf(buf)).await {
                Err(_) => {
                    let secs = allowed.as_secs();
                    tracing::info!(deadline_secs = secs, "request body not received in time");
                    return Err(Some(Response::refusal(
                        408,
                        "request_timeout",
                        &format!("the request body did not arrive within {secs} s"),
                    )));
                }
                Ok(Ok(0) | Err(_)) => return Err(None),
                Ok(Ok(_)) => {}
            }
        }
        Ok(())
    }

    /// The handler's answer to the request in `message` (its head, then its body).
    async fn answer(&self, message: &[u8], head_len: usize) -> (Response, bool) {
        let mut parsed = [const { MaybeUninit::uninit() }; MAX_HEADERS];
        let mut request = httparse::Request::new(&mut []);
        // The head parsed whole when it was framed; it parses the same again.
        if !matches!(
            request.parse_with_uninit_headers(&message[..head_len], &mut parsed),
            Ok(httparse::Status::Complete(_))
        ) {
            return (bad_request("the request could not be read"), false);
        }
        let method = request.method.unwrap_or("");
        let Some((authority, path, query)) = split_target(request.path.unwrap_or("")) else {
            return (bad_request("the request's target is not a path"), false);
        };
        // RFC 9112 §3.2.2 makes an absolute-form target's authority the host; a Host that
        // names another would route a proxy that reads it to someone else: refused.
        if let Some(authority) = authority {
            let host = request
                .headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case("host"))
                .map_or(&b""[..], |h| h.value);
            if !host.trim_ascii().eq_ignore_ascii_case(authority.as_bytes()) {
                return (
                    bad_request("the request's target and its Host name different hosts"),
                    false,
                );
            }
        }
        let request = Request {
            method,
            path,
            query,
            headers: request.headers,
            peer: self.peer,
            body: &message[head_len..],
        };
        (self.handler.handle(&request).await, method == "HEAD")
    }

    /// Writes the gathered answers, then a large body that follows them, by the edge's
    /// deadline for that many bytes: a client that does not read cannot hold the
    /// connection for ever.
    async fn write_out(&mut self, out: &[u8], large: Option<&[u8]>) -> Result<(), ()> {
        let (mut out, mut large) = (out, large.unwrap_or_default());
        // Most answers fit the socket's buffer at once: then no deadline needs arming.
        match self
            .stream
            .try_write_vectored(&[IoSlice::new(out), IoSlice::new(large)])
        {
            Ok(sent) if sent == out.len() + large.len() => return Ok(()),
            Ok(sent) => {
                let of_out = sent.min(out.len());
                out = &out[of_out..];
                large = &large[sent - of_out..];
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => return Err(()),
        }
        let bytes = out.len() + large.len();
        let allowed = self
            .limits
            .edge
            .body_deadline(Some(u64::try_from(bytes).unwrap_or(u64::MAX)));
        let deadline = Instant::now() + allowed;
        let write = write_both(&mut self.stream, out, large);
        match timeout_at(deadline, write).await {
            Ok(Ok(())) => Ok(()),
            _ => Err(()),
        }
    }

    /// Sends a streamed body of `length` bytes as its pieces come, by the edge's deadline for
    /// that many bytes. A source that fails, or gives more or fewer bytes than promised,
    /// ends the connection: the client sees a body cut short, never a wrong one.
    async fn write_pieces(&mut self, length: u64, mut pieces: Box<dyn Pieces>) -> Result<(), ()> {
        let deadline = Instant::now() + self.limits.edge.body_deadline(Some(length));
        if let Some((file, offset)) = pieces.file() {
            return self.send_file(&file, offset, length, deadline).await;
        }
        let mut sent = 0u64;
        while sent < length {
            let piece = match timeout_at(deadline, pieces.next_piece()).await {
                Ok(Some(Ok(piece))) => piece,
                Ok(Some(Err(e))) => {
                    tracing::warn!(error = %e, "a streamed body failed half-way");
                    return Err(());
                }
                Ok(None) | Err(_) => return Err(()),
            };
            if sent + piece.len() as u64 > length {
                return Err(());
            }
            sent += piece.len() as u64;
            match timeout_at(deadline, self.stream.write_all(&piece)).await {
                Ok(Ok(())) => {}
                _ => return Err(()),
            }
        }
        Ok(())
    }

    /// Sends `length` bytes of `file` from `offset` with `sendfile(2)`, as the socket takes
    /// them, by `deadline`. A file shorter than promised ends the connection, as a failing
    /// stream does. The file's pages come from the page cache as nginx's `sendfile on`
    /// does; a read from a cold disk waits on the worker.
    async fn send_file(
        &mut self,
        file: &std::fs::File,
        offset: u64,
        length: u64,
        deadline: Instant,
    ) -> Result<(), ()> {
        let mut at = offset;
        let end = offset + length;
        while at < end {
            match timeout_at(deadline, self.stream.writable()).await {
                Ok(Ok(())) => {}
                _ => return Err(()),
            }
            let count = usize::try_from(end - at)
                .unwrap_or(SENDFILE_CHUNK)
                .min(SENDFILE_CHUNK);
            let stream = &self.stream;
            let sent = stream.try_io(tokio::io::Interest::WRITABLE, || {
                rustix::fs::sendfile(stream, file, Some(&mut at), count).map_err(Into::into)
            });
            match sent {
                Ok(0) => return Err(()),
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => return Err(()),
            }
        }
        Ok(())
    }

    /// Answers with a refusal of the server's own and closes.
    async fn refuse(mut self, out: &mut Vec<u8>, response: &Response) {
        out.clear();
        let large = write_answer(out, response, false, false, false);
        if self.write_out(out, large.as_deref()).await.is_ok() {
            self.linger().await;
        }
    }

    /// Closes after an answer: sends FIN, then reads and drops what the client still sends
    /// for a moment (see [`LINGER`]).
    async fn linger(mut self) {
        if self.stream.shutdown().await.is_err() {
            return;
        }
        let deadline = Instant::now() + LINGER;
        let mut sink = [0_u8; 4096];
        let mut left = LINGER_BYTES;
        while left > 0 {
            match timeout_at(deadline, self.stream.read(&mut sink)).await {
                Ok(Ok(n)) if n > 0 => left = left.saturating_sub(n),
                _ => return,
            }
        }
    }
}
