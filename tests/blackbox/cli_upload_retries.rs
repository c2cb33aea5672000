//! `quire upload` over a network that fails once, on both databases: a connection cut in the
//! middle of the body is retried, and an answer lost after the whole body went out is found
//! on the server instead of being sent again; either way the account ends with exactly one
//! object, byte for byte the file.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::cli::User;
use crate::harness::{Backend, on_both_backends, setup};
use crate::objects::OBJECTS;

on_both_backends!(uploads_survive_a_cut_connection_and_a_lost_answer_without_duplicates);

#[derive(Debug, Clone, Copy)]
enum Fault {
    /// The connection is closed once this many request bytes have passed.
    Cut,
    /// The request passes whole; its answer is dropped and the connection closed.
    LoseAnswer,
}

/// Request bytes after which the one faulty connection fails.
const THRESHOLD: usize = 300 * 1024;

/// A relay to `upstream` that fails the first connection carrying more than [`THRESHOLD`]
/// request bytes, as `fault` says; every other connection passes untouched. Returns its
/// address.
async fn faulty_relay(upstream: String, fault: Fault) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let spent = Arc::new(AtomicBool::new(false));
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let server = TcpStream::connect(&upstream).await.unwrap();
            tokio::spawn(relay(client, server, fault, spent.clone()));
        }
    });
    format!("http://{addr}")
}

async fn relay(client: TcpStream, server: TcpStream, fault: Fault, spent: Arc<AtomicBool>) {
    let (mut client_in, mut client_out) = client.into_split();
    let (mut server_in, mut server_out) = server.into_split();
    let doomed = Arc::new(AtomicBool::new(false));
    let marked = doomed.clone();
    let requests = async move {
        let mut passed = 0;
        let mut buf = vec![0_u8; 64 * 1024];
        loop {
            let n = match client_in.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            passed += n;
            if passed > THRESHOLD && !spent.swap(true, Ordering::SeqCst) {
                marked.store(true, Ordering::SeqCst);
                if matches!(fault, Fault::Cut) {
                    return;
                }
            }
            if server_out.write_all(&buf[..n]).await.is_err() {
                return;
            }
        }
    };
    let answers = async move {
        let mut buf = vec![0_u8; 64 * 1024];
        loop {
            let n = match server_in.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            if doomed.load(Ordering::SeqCst) {
                return;
            }
            if client_out.write_all(&buf[..n]).await.is_err() {
                return;
            }
        }
    };
    // Either direction ending closes both: the client sees the connection drop.
    tokio::select! {
        () = requests => {}
        () = answers => {}
    }
}

async fn uploads_survive_a_cut_connection_and_a_lost_answer_without_duplicates(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let bytes: Vec<u8> = (0..2_000_003u32).map(|i| (i % 253) as u8).collect();
    let upstream = srv.addr.clone();
    for (fault, name) in [(Fault::Cut, "cut.bin"), (Fault::LoseAnswer, "lost.bin")] {
        let user = User {
            home: tempfile::tempdir().unwrap(),
            server: faulty_relay(upstream.clone(), fault).await,
        };
        let file = user.home.path().join(name);
        std::fs::write(&file, &bytes).unwrap();
        let out = user
            .command(&["--json", "upload", file.to_str().unwrap()])
            .env("QUIRE_KEY", &ann.key)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{fault:?}: {stderr}");
        let object: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            object["sha256"],
            crate::harness::sha256sum(&bytes),
            "{fault:?}"
        );
        if matches!(fault, Fault::Cut) {
            assert!(stderr.contains("trying again"), "{stderr}");
        }
        let listed = srv.get(OBJECTS, &ann.key).await.body["objects"].clone();
        let copies = listed
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["filename"] == name)
            .count();
        assert_eq!(copies, 1, "{fault:?}: {listed}");
        assert_eq!(
            listed
                .as_array()
                .unwrap()
                .iter()
                .find(|o| o["filename"] == name)
                .unwrap()["id"],
            object["id"]
        );
    }
}
