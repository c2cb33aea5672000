//! Two `quire-server` replicas on one PostgreSQL database and one S3 bucket, behind a real
//! nginx running `deploy/nginx.conf` (the configuration `docs/deploy.md` shows), TLS at
//! nginx. A bounded load (publishers, visitors of a public, a password and a budgeted page,
//! device logins) runs through nginx while one replica is SIGKILLed and, a few seconds later,
//! restarted on the same ports. Afterwards: every acknowledged publish is readable on both
//! replicas directly, a publish left unanswered is all there or not at all, the budget is
//! exact across the two, and no request failed (5xx, or no answer) but those in flight on
//! the killed replica. The figures are printed (`--nocapture`).

mod load;
mod nginx;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::json;

use crate::harness::{Server, TestDb, eventually};
use crate::serving::{PAGES, site, with};
use load::{Kind, Load, Publish, Sample};
use nginx::{API_HOST, Nginx, PAGES_DOMAIN, Ports};

const PASSWORD: &str = "correct horse battery";
/// The budgeted page's `maxViews`, far fewer than its visitors ask for.
const MAX_VIEWS: u64 = 100;
/// When, from the start of the load, the replica dies, comes back, and the load ends.
const KILL_AT: Duration = Duration::from_secs(4);
const DEAD_FOR: Duration = Duration::from_secs(3);
const LOAD_FOR: Duration = Duration::from_secs(13);
/// A request that fails counts as in flight on the killed replica when it was sent no later
/// than this after the kill (nginx sees the replica's connections close at once) and
/// answered after the kill.
const IN_FLIGHT_GRACE: Duration = Duration::from_secs(1);

fn free_ports<const N: usize>() -> [u16; N] {
    let listeners: Vec<_> = (0..N)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    std::array::from_fn(|i| listeners[i].local_addr().unwrap().port())
}

/// Starts replica `i` on its fixed ports (nginx's upstreams name them).
fn start_replica(db: &TestDb, env: &[(String, String)], ports: Ports, i: usize) -> Server {
    let listen = [
        (
            "QUIRE_LISTEN".to_owned(),
            format!("127.0.0.1:{}", ports.api[i]),
        ),
        (
            "QUIRE_PAGES_LISTEN".to_owned(),
            format!("127.0.0.1:{}", ports.pages[i]),
        ),
    ];
    let env: Vec<(&str, &str)> = env
        .iter()
        .chain(&listen)
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    tokio::task::block_in_place(|| db.start_with(&env))
}

/// A client straight to one replica's pages listener, for `ann`'s pages.
fn direct_pages(port: u16) -> (reqwest::Client, String) {
    let http = crate::harness::client()
        .resolve(&format!("ann.{PAGES_DOMAIN}"), ([127, 0, 0, 1], 0).into())
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    (http, format!("http://ann.{PAGES_DOMAIN}:{port}"))
}

#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
#[cfg_attr(
    all(no_s3, not(no_postgres)),
    ignore = "needs an S3 server: set QUIRE_TEST_S3_ENDPOINT"
)]
#[cfg_attr(
    all(no_nginx, not(any(no_postgres, no_s3))),
    ignore = "needs nginx: apt-get install nginx"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_behind_nginx_lose_nothing_when_one_is_killed() {
    let endpoint = std::env::var("QUIRE_TEST_S3_ENDPOINT")
        .expect("QUIRE_TEST_S3_ENDPOINT names the S3 server");
    let nginx_bin = nginx::binary().expect("nginx is on PATH or in /usr/sbin");
    let Some(db) = TestDb::create(crate::harness::Backend::Postgres).await else {
        return;
    };
    let ann = db.create_account("ann", &["--password", PASSWORD]);
    let bucket = format!("quire-replicas-{}", uuid::Uuid::new_v4());
    let made = reqwest::Client::new()
        .put(format!("{endpoint}/{bucket}"))
        .send()
        .await
        .unwrap();
    assert!(made.status().is_success(), "bucket: {}", made.status());

    let [api0, api1, pages0, pages1, https, http] = free_ports();
    let ports = Ports {
        api: [api0, api1],
        pages: [pages0, pages1],
        https,
        http,
    };
    let env: Vec<(String, String)> = [
        ("QUIRE_BASE_URL", format!("https://{API_HOST}:{https}")),
        (
            "QUIRE_PAGES_URL",
            format!("https://{{handle}}.{PAGES_DOMAIN}:{https}"),
        ),
        ("QUIRE_TRUSTED_PROXIES", "127.0.0.1".to_owned()),
        ("QUIRE_STORAGE_URL", format!("s3://{bucket}/quire")),
        ("AWS_ACCESS_KEY_ID", "test".to_owned()),
        ("AWS_SECRET_ACCESS_KEY", "test".to_owned()),
        ("AWS_REGION", "us-east-1".to_owned()),
        ("AWS_ENDPOINT_URL", endpoint.clone()),
        // A dead replica's leased views are counted as served soon after it dies.
        ("QUIRE_VIEW_LEASE_SECS", "3".to_owned()),
        ("QUIRE_JANITOR_INTERVAL_SECS", "1".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    // One after the other: the first makes the key file both use.
    let mut replicas = vec![
        Some(start_replica(&db, &env, ports, 0)),
        Some(start_replica(&db, &env, ports, 1)),
    ];
    let nginx = Nginx::start(&nginx_bin, &db.dir.path().join("nginx"), ports);
    let http = nginx.client();

    // Plain http answers with a redirect to https, on both names.
    let plain = format!("http://{API_HOST}:{}/healthz", ports.http);
    let r = crate::harness::client()
        .resolve(API_HOST, ([127, 0, 0, 1], 0).into())
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(plain)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 308);
    assert_eq!(
        r.headers()["location"],
        format!("https://{API_HOST}/healthz")
    );

    // Quire's own 503s (here: the data gateway of a server without databases, to anyone)
    // answer one request; nginx must not take them for a failing replica and shut both out.
    let api = nginx.origin(API_HOST);
    for _ in 0..4 {
        let r = http
            .get(format!("{api}/db/x/rest/v1/t"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 503);
    }
    for _ in 0..6 {
        let r = http.get(format!("{api}/healthz")).send().await.unwrap();
        assert_eq!(r.status(), 200, "both replicas shut out after Quire's 503s");
    }

    // The three pages the visitors ask for, published through nginx.
    let publish = async |body: serde_json::Value| {
        let r = http
            .post(format!("{api}{PAGES}"))
            .bearer_auth(&ann.key)
            .json(&body)
            .send();
        let r = r.await.unwrap();
        let status = r.status();
        let v: serde_json::Value = r.json().await.unwrap();
        assert_eq!(status, 201, "{v}");
        v
    };
    let public = publish(with(site("public"), "alias", json!("hello"))).await;
    let pages = nginx.origin(&format!("ann.{PAGES_DOMAIN}"));
    assert_eq!(public["url"], format!("{pages}/public/"));
    let secret = with(site("secret"), "access", json!("password"));
    publish(with(secret, "password", json!(PASSWORD))).await;
    let budget = publish(with(site("budget"), "maxViews", json!(MAX_VIEWS))).await;
    let home = http.get(format!("{pages}/public/")).send().await.unwrap();
    assert_eq!(home.status(), 200);
    let home = home.text().await.unwrap();

    let started = Instant::now();
    let load = Arc::new(Load {
        http,
        api,
        pages: pages.clone(),
        links: nginx.origin(PAGES_DOMAIN),
        key: ann.key.clone(),
        password: PASSWORD.to_owned(),
        home,
        until: started + LOAD_FOR,
        samples: Mutex::default(),
        problems: Mutex::default(),
        acked: Mutex::default(),
        unanswered: Mutex::default(),
        logins: Default::default(),
    });
    let mut workers = tokio::task::JoinSet::new();
    for w in 0..3 {
        let l = load.clone();
        workers.spawn(async move { load::publisher(&l, w).await });
    }
    for _ in 0..3 {
        let l = load.clone();
        workers.spawn(async move { load::public_visitor(&l).await });
    }
    for _ in 0..2 {
        let (l, m) = (load.clone(), load.clone());
        workers.spawn(async move { load::password_visitor(&l).await });
        workers.spawn(async move { load::budget_visitor(&m).await });
    }
    let l = load.clone();
    workers.spawn(async move { load::device_logins(&l).await });

    tokio::time::sleep_until((started + KILL_AT).into()).await;
    let killed = Instant::now();
    drop(replicas[1].take()); // SIGKILL: no shutdown, no settling of views
    tokio::time::sleep(DEAD_FOR).await;
    replicas[1] = Some(start_replica(&db, &env, ports, 1));
    let (back, back_wall) = (Instant::now(), std::time::SystemTime::now());
    while let Some(done) = workers.join_next().await {
        done.unwrap();
    }
    let replicas: Vec<Server> = replicas.into_iter().map(Option::unwrap).collect();
    let samples = std::mem::take(&mut *load.samples.lock().unwrap());
    report(&samples, started, [killed, back], back_wall, &nginx);

    // Nothing but a 5xx or a lost connection around the kill, and only for what was in
    // flight on the killed replica then.
    let problems = load.problems.lock().unwrap().clone();
    assert!(
        problems.is_empty(),
        "{} problems: {problems:#?}",
        problems.len()
    );
    let outside: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.status.is_none_or(|c| c >= 500))
        .filter(|s| !(s.start <= killed + IN_FLIGHT_GRACE && s.end >= killed))
        .collect();
    assert!(
        outside.is_empty(),
        "failures not in flight at the kill: {outside:#?}\n{}",
        nginx.error_log()
    );
    assert!(
        load.logins.load(std::sync::atomic::Ordering::Relaxed) >= 2,
        "device logins"
    );

    // Every acknowledged publish is on both replicas, each file as sent; an unanswered one
    // is all there or not there.
    let acked = load.acked.lock().unwrap().clone();
    let unanswered = load.unanswered.lock().unwrap().clone();
    assert!(
        acked.len() >= 10,
        "only {} publishes acknowledged",
        acked.len()
    );
    let readers: Vec<_> = ports.pages.iter().map(|&p| direct_pages(p)).collect();
    let checks = acked
        .iter()
        .map(|p| (p, true))
        .chain(unanswered.iter().map(|p| (p, false)));
    let wrong: Vec<String> = futures_util::stream::iter(checks)
        .map(|(p, acked)| check_published(&readers, &replicas, &ann.key, p, acked))
        .buffer_unordered(16)
        .filter_map(async |r| r.err())
        .collect()
        .await;
    assert!(wrong.is_empty(), "{wrong:#?}");

    // The budget: never more views than `maxViews` on the two replicas together, and once
    // the dead replica's lease lapses, exactly `maxViews` counted.
    let during = samples
        .iter()
        .filter(|s| s.kind == Kind::Budget && s.status == Some(200));
    let served = during.count() as u64 + drain_budget(&readers).await;
    assert!(
        served <= MAX_VIEWS,
        "{served} views of a budget of {MAX_VIEWS}"
    );
    let id = budget["id"].as_str().unwrap();
    for srv in &replicas {
        eventually("the budget counted in full", || async {
            let r = srv.get(&format!("{PAGES}/{id}"), &ann.key).await;
            r.assert_status(200)["viewCount"].as_u64() == Some(MAX_VIEWS)
        })
        .await;
    }
    eprintln!(
        "budget: {served} of {MAX_VIEWS} views served, {} forfeited with the killed \
         replica's leased block",
        MAX_VIEWS - served
    );
}

/// Whether `p` reads the same through both replicas: every file as sent when it was
/// acknowledged, and for an unanswered publish either that or nothing at all.
async fn check_published(
    readers: &[(reqwest::Client, String)],
    replicas: &[Server],
    key: &str,
    p: &Publish,
    acked: bool,
) -> Result<(), String> {
    let notes = p.slug.repeat(200);
    let mut seen = Vec::new();
    for ((http, origin), srv) in readers.iter().zip(replicas) {
        for (path, want) in [("", p.index.as_str()), ("notes/a.txt", notes.as_str())] {
            let url = format!("{origin}/{}/{path}", p.slug);
            let r = http
                .get(&url)
                .send()
                .await
                .map_err(|e| format!("{url}: {e}"))?;
            let status = r.status().as_u16();
            let text = r.text().await.unwrap_or_default();
            match status {
                200 if text == want => seen.push(true),
                404 if !acked => seen.push(false),
                _ => return Err(format!("{url}: {status} {text:.200}")),
            }
        }
        if let Some(id) = &p.id {
            srv.get(&format!("{PAGES}/{id}"), key)
                .await
                .assert_status(200);
        }
    }
    if seen.iter().any(|&s| s != seen[0]) {
        return Err(format!("{} half there: {seen:?}", p.slug));
    }
    Ok(())
}

/// Asks both replicas directly for the budgeted page until both have refused it (410) for
/// long enough that an idle block went back and was spent; returns the views served.
async fn drain_budget(readers: &[(reqwest::Client, String)]) -> u64 {
    let (started, mut served, mut refused_since) = (Instant::now(), 0, Instant::now());
    while refused_since.elapsed() < Duration::from_secs(5) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "budget never spent"
        );
        for (http, origin) in readers {
            let r = http.get(format!("{origin}/budget/")).send().await.unwrap();
            match r.status().as_u16() {
                200 => (served, refused_since) = (served + 1, Instant::now()),
                410 => {}
                other => panic!("budgeted page after the run: {other}"),
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    served
}

/// Prints requests and failures by kind, latencies overall and while a replica was down,
/// and how nginx spread and retried them.
fn report(
    samples: &[Sample],
    started: Instant,
    [killed, back]: [Instant; 2],
    back_wall: std::time::SystemTime,
    nginx: &Nginx,
) {
    let secs = |i: Instant| i.duration_since(started).as_secs_f64();
    eprintln!(
        "replicas: {} requests in {:.1} s; replica 2 killed at {:.1} s, back at {:.1} s",
        samples.len(),
        samples.iter().map(|s| secs(s.end)).fold(0.0, f64::max),
        secs(killed),
        secs(back)
    );
    eprintln!(
        "{:<12} {:>6} {:>6} {:>5} {:>5} {:>5} {:>5} {:>9} {:>9}",
        "kind", "n", "2xx", "3xx", "4xx", "5xx", "conn", "p50", "p99"
    );
    let mut kinds: Vec<Option<Kind>> = samples.iter().map(|s| Some(s.kind)).collect();
    kinds.sort();
    kinds.dedup();
    kinds.push(None);
    for kind in kinds {
        let of: Vec<&Sample> = samples
            .iter()
            .filter(|s| kind.is_none_or(|k| s.kind == k))
            .collect();
        let class = |c: u16| {
            of.iter()
                .filter(|s| s.status.is_some_and(|x| x / 100 == c))
                .count()
        };
        let conn = of.iter().filter(|s| s.status.is_none()).count();
        let (p50, p99) = percentiles(of.iter().map(|s| s.end - s.start));
        let name = kind.map_or("all".to_owned(), |k| format!("{k:?}"));
        eprintln!(
            "{name:<12} {:>6} {:>6} {:>5} {:>5} {:>5} {conn:>5} {p50:>9.1?} {p99:>9.1?}",
            of.len(),
            class(2),
            class(3),
            class(4),
            class(5)
        );
    }
    for s in samples.iter().filter(|s| s.status.is_none_or(|c| c >= 500)) {
        eprintln!(
            "  failed {:?} {:?}: sent {:.3} s, ended {:.3} s {}",
            s.kind,
            s.status,
            secs(s.start),
            secs(s.end),
            s.error.chars().take(200).collect::<String>()
        );
    }
    let down = samples
        .iter()
        .filter(|s| s.start >= killed && s.start <= back);
    let n = down.clone().count();
    let (p50, p99) = percentiles(down.map(|s| s.end - s.start));
    eprintln!("while replica 2 was down: {n} requests, p50 {p50:.1?}, p99 {p99:.1?}");
    // `time|method|host and path|status|upstream addresses|upstream statuses|duration`.
    let back_wall = back_wall
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let mut upstreams = std::collections::BTreeMap::new();
    let mut retried = Vec::new();
    for line in nginx.access_log().lines() {
        let fields: Vec<&str> = line.split('|').collect();
        let after = fields[0].parse::<f64>().unwrap() >= back_wall;
        let counts = upstreams.entry(fields[4].to_owned()).or_insert([0, 0]);
        counts[usize::from(after)] += 1;
        if fields[4].contains(',') {
            retried.push(line.to_owned());
        }
    }
    let p = nginx.ports;
    eprintln!(
        "nginx upstreams [before, after the restart] (replica 1: {} and {}, replica 2: {} \
         and {}): {upstreams:?}",
        p.api[0], p.pages[0], p.api[1], p.pages[1]
    );
    eprintln!("nginx tried on the other replica: {retried:#?}");
    eprintln!("nginx error log:\n{}", nginx.error_log());
}

/// The median and the 99th percentile.
fn percentiles(latencies: impl Iterator<Item = Duration>) -> (Duration, Duration) {
    let mut l: Vec<Duration> = latencies.collect();
    l.sort();
    let at = |q: f64| {
        let i = ((l.len() as f64 * q) as usize).min(l.len().saturating_sub(1));
        l.get(i).copied().unwrap_or_default()
    };
    (at(0.5), at(0.99))
}
