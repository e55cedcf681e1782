//! A retry breaker shared through Redis: failures seen by one process open
//! it for another that saw none (whose `classic(..)` calls then fail fast),
//! and a success closes it for both. The backend is a local server that
//! fails on demand.
//!
//! Runs this same binary as a child process. Needs `RETRY_TEST_REDIS_URL`
//! (set by `.ci/run`).

mod common;

use std::io::{self, ErrorKind, Read};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use reattempt::fleet::FleetBreaker;
use reattempt::{RetryBreaker, retry};

const URL: &str = "RETRY_TEST_REDIS_URL";
const CHILD: &str = "REATTEMPT_BREAKER_CHILD";
const SCOPE: &str = "REATTEMPT_BREAKER_SCOPE";
const THEN_CLASSIC: &str = "REATTEMPT_BREAKER_THEN_CLASSIC";

fn no_wait(_: Duration) {}

/// Half of 10 attempts or more failing open it; 300 ms later, 2 probes.
static BACKEND: RetryBreaker = RetryBreaker::new(
    0.5,
    10,
    Duration::from_secs(10),
    Duration::from_millis(300),
    2,
);

static ATTEMPTS: AtomicU32 = AtomicU32::new(0);

fn fetch_once(addr: SocketAddr) -> io::Result<String> {
    ATTEMPTS.fetch_add(1, Ordering::SeqCst);
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    if answer.is_empty() {
        // The server closed the connection without a word.
        return Err(ErrorKind::UnexpectedEof.into());
    }
    Ok(answer)
}

/// The same call, failing fast while the breaker is open.
#[retry(max = 3, backoff = none, sleep = no_wait, breaker = classic(BACKEND))]
fn fetch_or_fail_fast(addr: SocketAddr) -> io::Result<String> {
    fetch_once(addr)
}

#[retry(max = 3, backoff = none, sleep = no_wait, breaker = BACKEND)]
fn fetch(addr: SocketAddr) -> io::Result<String> {
    fetch_once(addr)
}

/// The attempts of one call.
fn attempts_of_one_call(addr: SocketAddr) -> u32 {
    let before = ATTEMPTS.load(Ordering::SeqCst);
    let _ = fetch(addr);
    ATTEMPTS.load(Ordering::SeqCst) - before
}

fn share(url: &str, scope: &str) {
    let fleet = FleetBreaker::connect_with_timeout(url, scope, Duration::from_millis(200)).unwrap();
    BACKEND.share(fleet).unwrap();
}

/// A server that closes each connection at once while `failing`, and
/// answers `ok` otherwise. It serves until the test process ends.
fn server(failing: Arc<AtomicBool>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            if !failing.load(Ordering::SeqCst) {
                let _ = std::io::Write::write_all(&mut stream, b"ok");
            }
        }
    });
    addr
}

/// What the child does: one call, sharing the breaker; prints its
/// attempts. Asked to, it then makes a `classic(..)` call and prints the
/// attempts of that one instead.
#[test]
fn child_makes_one_call() {
    let Some(addr) = std::env::var_os(CHILD) else {
        return;
    };
    share(&std::env::var(URL).unwrap(), &std::env::var(SCOPE).unwrap());
    let addr: SocketAddr = addr.to_str().unwrap().parse().unwrap();
    let attempts = attempts_of_one_call(addr);
    if std::env::var_os(THEN_CLASSIC).is_none() {
        println!("attempts={attempts}");
        return;
    }
    let before = ATTEMPTS.load(Ordering::SeqCst);
    let refused = fetch_or_fail_fast(addr).is_err_and(|e| {
        e.get_ref()
            .is_some_and(|inner| inner.is::<reattempt::BreakerOpen>())
    });
    assert!(refused, "refused as `BreakerOpen`");
    println!("classic={}", ATTEMPTS.load(Ordering::SeqCst) - before);
}

fn child_attempts(url: &str, scope: &str, addr: SocketAddr) -> u32 {
    let addr = addr.to_string();
    let child = common::spawn_child(
        "child_makes_one_call",
        &[(CHILD, &addr), (SCOPE, scope), (URL, url)],
    );
    common::child_count(child, "attempts")
}

/// The attempts of a child's `classic(..)` call, made after a first call
/// of its own told it what the fleet's breaker says.
fn child_classic_attempts(url: &str, scope: &str, addr: SocketAddr) -> u32 {
    let addr = addr.to_string();
    let child = common::spawn_child(
        "child_makes_one_call",
        &[
            (CHILD, &addr),
            (SCOPE, scope),
            (URL, url),
            (THEN_CLASSIC, "1"),
        ],
    );
    common::child_count(child, "classic")
}

#[test]
fn failures_in_one_process_stop_the_retries_of_another_until_the_backend_answers() {
    let Some(url) = common::server_url(URL) else {
        return;
    };
    let scope = format!("test-{}", common::unique());
    share(&url, &scope);
    let failing = Arc::new(AtomicBool::new(true));
    let addr = server(Arc::clone(&failing));

    // This process fails until the fleet's breaker opens: within its
    // minimum of ten attempts.
    let mut calls = 0;
    while attempts_of_one_call(addr) > 1 {
        calls += 1;
        assert!(calls <= 5, "the breaker opened within its window");
    }
    // Another process, which has seen no failure, makes one attempt only.
    assert_eq!(child_attempts(&url, &scope, addr), 1);
    // Having heard from the fleet at that retry decision, a process fails
    // its `classic(..)` calls fast, without asking Redis or the backend.
    assert_eq!(child_classic_attempts(&url, &scope, addr), 0);

    // The backend recovers; after the cool-down a success closes it for all.
    failing.store(false, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(350));
    assert_eq!(attempts_of_one_call(addr), 1);
    failing.store(true, Ordering::SeqCst);
    assert_eq!(child_attempts(&url, &scope, addr), 3, "retries resume");
}

/// Half of 10 attempts or more in the last second failing open it.
static QUIET: RetryBreaker =
    RetryBreaker::new(0.5, 10, Duration::from_secs(1), Duration::from_secs(60), 1);

/// An instance whose calls all succeed for longer than the window: those
/// attempts reach Redis with its next retry decision, and expire with the
/// window as they do locally, instead of arriving all at once when the
/// backend first fails and hiding its failures from the fleet's ratio for
/// a window.
#[test]
fn attempts_older_than_the_window_do_not_dilute_the_fleets_failures() {
    let Some(url) = common::server_url(URL) else {
        return;
    };
    let scope = format!("quiet-{}", common::unique());
    QUIET
        .share(FleetBreaker::connect(&url, &scope).unwrap())
        .unwrap();
    for _ in 0..10_000 {
        QUIET.record(false);
    }
    std::thread::sleep(Duration::from_millis(1_300));
    // The backend fails: each failure, then its retry decision.
    let allowed = (0..20)
        .filter(|_| {
            QUIET.record(true);
            QUIET.allow_retry()
        })
        .count();
    // Ten failures reach the minimum, and the fleet's breaker opens.
    assert!(allowed <= 10, "{allowed} of 20 retries allowed");
    assert!(QUIET.is_open());
}

/// Whether the fleet's breaker of `scope` is open in the Redis at `url`.
fn open_in_redis(url: &str, scope: &str) -> bool {
    let mut redis = redis::Client::open(url).unwrap().get_connection().unwrap();
    redis::cmd("EXISTS")
        .arg(format!("reattempt:breaker:{scope}:open"))
        .query(&mut redis)
        .unwrap()
}

/// Half of 2 attempts or more failing open it, for half a second.
static COOLING: RetryBreaker = RetryBreaker::new(
    0.5,
    2,
    Duration::from_secs(10),
    Duration::from_millis(500),
    1,
);

/// A first attempt that succeeds while the fleet's breaker cools down does
/// not close it, as it does not close an instance's own: a backend that
/// fails most requests still answers some, and each of those would let
/// every instance retry again at once. A success after the cool-down does.
#[test]
fn a_success_during_the_cool_down_does_not_close_the_fleets_breaker() {
    let Some(url) = common::server_url(URL) else {
        return;
    };
    let scope = format!("cooling-{}", common::unique());
    COOLING
        .share(FleetBreaker::connect(&url, &scope).unwrap())
        .unwrap();
    let open_in_redis = || open_in_redis(&url, &scope);
    COOLING.record(true);
    COOLING.record(true);
    assert!(!COOLING.allow_retry(), "two failures of two open it");
    COOLING.record(false);
    assert!(
        open_in_redis(),
        "a success while it cools down leaves it open"
    );
    assert!(!COOLING.allow_retry(), "still cooling down");
    std::thread::sleep(Duration::from_millis(600));
    COOLING.record(false);
    assert!(!open_in_redis(), "a success after the cool-down closes it");
}

/// Half of 2 attempts or more failing open it, for 300 ms; then 1 probe.
static PROBED: RetryBreaker = RetryBreaker::new(
    0.5,
    2,
    Duration::from_secs(10),
    Duration::from_millis(300),
    1,
);

/// After the cool-down, a probe's retry that succeeds closes the fleet's
/// breaker, as it closes an instance's own, where the fleet kept it open
/// and opened it again for another cool-down once the probe was spent.
#[test]
fn a_probes_success_closes_the_fleets_breaker() {
    let Some(url) = common::server_url(URL) else {
        return;
    };
    let scope = format!("probed-{}", common::unique());
    PROBED
        .share(FleetBreaker::connect(&url, &scope).unwrap())
        .unwrap();
    PROBED.record(true);
    PROBED.record(true);
    assert!(!PROBED.allow_retry(), "two failures of two open it");
    std::thread::sleep(Duration::from_millis(400));
    PROBED.record(true);
    assert!(PROBED.allow_retry(), "the probe");
    PROBED.record(false);
    assert!(
        !open_in_redis(&url, &scope),
        "the probe's success closed it"
    );
    assert!(PROBED.allow_retry());
}
