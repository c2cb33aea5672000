//! Bodies sent from a file on disk with `sendfile`: whole and from an offset, larger than a
//! socket's buffer, on a connection kept alive after them; a file shorter than promised ends
//! the connection with the body cut short.

use std::io::Write;
use std::time::Duration;

use quire_wire::{Pieces, Response};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{limits, serve, status};

/// A body that is only a file: reading it as pieces is a failure the test sees (the
/// connection closes), so a right body proves the file was sent as a file.
struct OnlyFile(Option<(std::fs::File, u64)>);

impl Pieces for OnlyFile {
    fn next_piece(
        &mut self,
    ) -> std::pin::Pin<Box<dyn Future<Output = Option<std::io::Result<bytes::Bytes>>> + Send + '_>>
    {
        Box::pin(async { Some(Err(std::io::Error::other("read as pieces"))) })
    }

    fn file(&mut self) -> Option<(std::fs::File, u64)> {
        self.0.take()
    }
}

/// The handler's `/file?{path}&{offset}&{length}`.
pub(super) fn respond(query: &str) -> Response {
    let mut parts = query.split('&');
    let path = parts.next().unwrap();
    let offset: u64 = parts.next().unwrap().parse().unwrap();
    let length: u64 = parts.next().unwrap().parse().unwrap();
    let file = std::fs::File::open(path).unwrap();
    Response::new(200).streamed(length, Box::new(OnlyFile(Some((file, offset)))))
}

/// 3 MiB that differ from byte to byte.
fn content() -> Vec<u8> {
    (0..3u32 << 20).map(|i| (i % 251) as u8).collect()
}

#[tokio::test]
async fn files_are_sent_whole_and_from_an_offset_with_sendfile() {
    let served = serve(limits_for_files());
    let bytes = content();
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(&bytes).unwrap();
    let path = file.path().to_str().unwrap().to_owned();
    let mut stream = TcpStream::connect(&served.addr).await.unwrap();
    let total = bytes.len();
    for (offset, length) in [(0, total), (1_000_001, 5_000), (total - 7, 7)] {
        let request = format!("GET /file?{path}&{offset}&{length} HTTP/1.1\r\nHost: h\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let (head, body) = read_answer(&mut stream).await;
        assert_eq!(status(&head), 200, "{head}");
        assert!(
            head.contains(&format!("content-length: {length}")),
            "{head}"
        );
        assert!(
            body == bytes[offset..offset + length],
            "{length} bytes from {offset}"
        );
    }
    // A file shorter than promised: what it has, then the connection ends.
    let request = format!(
        "GET /file?{path}&{}&100 HTTP/1.1\r\nHost: h\r\n\r\n",
        total - 40
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut rest))
        .await
        .expect("the connection ends")
        .unwrap();
    let end = rest.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    assert_eq!(&rest[end + 4..], &bytes[total - 40..], "the body cut short");
    served.running.stop(Duration::ZERO).await;
}

/// The limits of the echo server, with room for a few MiB to be sent.
fn limits_for_files() -> quire_wire::WireLimits {
    let mut limits = limits();
    limits.edge.body_timeout = Duration::from_secs(10);
    limits.edge.body_min_rate = 1;
    limits
}

/// Reads one answer with a body of its `content-length`, as bytes.
async fn read_answer(stream: &mut TcpStream) -> (String, Vec<u8>) {
    let mut buf = Vec::new();
    let end = loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        let mut chunk = [0_u8; 4096];
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "the connection closed before the head");
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .map_or(0, |n| n.parse().unwrap());
    let mut body = buf.split_off(end + 4);
    while body.len() < length {
        let mut chunk = vec![0_u8; 64 * 1024];
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "the connection closed inside the body");
        body.extend_from_slice(&chunk[..n]);
    }
    assert_eq!(body.len(), length, "nothing past the body");
    (head, body)
}
