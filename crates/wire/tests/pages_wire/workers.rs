//! The worker threads: connections shared out evenly, the budget of all workers together,
//! and workers bound each to a CPU.

use std::net::TcpListener;
use std::time::Duration;

use quire_wire::Workers;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::{answer, cpus_allowed, limits, serve_from, serve_on, serve_with, status};

/// Sends `GET {path}` on `stream` and gives the body of its 200 answer.
async fn get(stream: &mut TcpStream, path: &str) -> String {
    stream
        .write_all(format!("GET {path} HTTP/1.1\r\nHost: h\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let (head, body) = answer(stream, &mut Vec::new()).await.unwrap();
    assert_eq!(status(&head), 200);
    body
}

/// Sends `GET /worker` on each of `streams` in turn and gives the name of the worker thread
/// that answered each.
async fn workers_of(streams: &mut [TcpStream]) -> Vec<String> {
    let mut workers = Vec::new();
    for stream in streams {
        workers.push(get(stream, "/worker").await);
    }
    workers
}

/// A burst of connections that arrived together is split evenly between the workers (the
/// load generator of the benchmark opens its connections that way).
#[tokio::test]
async fn a_burst_of_connections_is_shared_out_evenly_among_the_workers() {
    // All eight wait in the listener's backlog before any worker runs.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut held = Vec::new();
    for _ in 0..8 {
        let stream = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        stream.set_nonblocking(true).unwrap();
        held.push(TcpStream::from_std(stream).unwrap());
    }
    let served = serve_from(&listener, 2, limits());
    let mut workers = workers_of(&mut held).await;
    workers.sort();
    let mut expected = vec!["quire-pages-0".to_owned(); 4];
    expected.extend(vec!["quire-pages-1".to_owned(); 4]);
    assert_eq!(workers, expected);
    served.running.stop(Duration::ZERO).await;
}

/// Expands a kernel CPU list (`0-1,4`) into its CPUs.
fn expand(list: &str) -> Vec<usize> {
    let mut cpus = Vec::new();
    for part in list.split(',') {
        match part.split_once('-') {
            Some((from, to)) => cpus.extend(from.parse::<usize>().unwrap()..=to.parse().unwrap()),
            None => cpus.push(part.parse().unwrap()),
        }
    }
    cpus
}

/// Pinned, worker `i` may run only on the `i`-th CPU of the process's set (counting round
/// when the workers outnumber the CPUs); unpinned, on all of them.
#[tokio::test]
async fn pinned_workers_run_each_on_a_cpu_of_its_own() {
    let all = cpus_allowed("self");
    let cpus = expand(&all);
    for pinned in [true, false] {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let served = serve_with(&listener, Workers { count: 3, pinned }, limits());
        let mut answers = Vec::new();
        // One at a time, so that the least loaded worker is the next in order.
        let mut held = Vec::new();
        for _ in 0..3 {
            let mut stream = TcpStream::connect(&served.addr).await.unwrap();
            answers.push(get(&mut stream, "/cpus").await);
            held.push(stream);
        }
        answers.sort();
        let expected: Vec<String> = (0..3)
            .map(|i| {
                let set = if pinned {
                    cpus[i % cpus.len()].to_string()
                } else {
                    all.clone()
                };
                format!("quire-pages-{i} {set}")
            })
            .collect();
        assert_eq!(answers, expected, "pinned: {pinned}");
        served.running.stop(Duration::ZERO).await;
    }
}

/// The connection budget is all workers' together: with both full, a connection waits until
/// one closes, and is then served by the worker that has room.
#[tokio::test]
async fn with_every_worker_full_a_connection_waits_for_room() {
    let mut limits = limits();
    limits.max_connections = 2;
    let served = serve_on(2, limits);
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(TcpStream::connect(&served.addr).await.unwrap());
    }
    let workers = workers_of(&mut held).await;
    let mut waiting = TcpStream::connect(&served.addr).await.unwrap();
    waiting
        .write_all(b"GET /worker HTTP/1.1\r\nHost: h\r\n\r\n")
        .await
        .unwrap();
    let mut buf = Vec::new();
    let early =
        tokio::time::timeout(Duration::from_millis(200), answer(&mut waiting, &mut buf)).await;
    assert!(early.is_err(), "answered past the connection budget");
    let freed = workers.iter().position(|w| w == "quire-pages-1").unwrap();
    drop(held.remove(freed));
    let (head, body) = tokio::time::timeout(Duration::from_secs(2), answer(&mut waiting, &mut buf))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status(&head), 200);
    assert_eq!(body, "quire-pages-1");
    served.running.stop(Duration::ZERO).await;
}
