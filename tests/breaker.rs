//! The retry breaker: it opens when most attempts fail, stops retries (not
//! first attempts) while open, and closes once the backend answers again.

use std::io::{self, ErrorKind};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use reattempt::{RetryBreaker, retry};

fn no_wait(_: Duration) {}

/// Half of the attempts of the last second failing, of 10 at least, open
/// it; 100 ms later, 2 probes.
static BACKEND: RetryBreaker = RetryBreaker::new(
    0.5,
    10,
    Duration::from_secs(1),
    Duration::from_millis(100),
    2,
);

static FAILING: AtomicBool = AtomicBool::new(true);
static ATTEMPTS: AtomicU32 = AtomicU32::new(0);

#[retry(max = 3, backoff = none, sleep = no_wait, breaker = BACKEND)]
fn call_backend() -> io::Result<()> {
    ATTEMPTS.fetch_add(1, Ordering::SeqCst);
    if FAILING.load(Ordering::SeqCst) {
        return Err(ErrorKind::ConnectionRefused.into());
    }
    Ok(())
}

/// The attempts one call makes.
fn attempts_of_one_call() -> u32 {
    let before = ATTEMPTS.load(Ordering::SeqCst);
    let _ = call_backend();
    ATTEMPTS.load(Ordering::SeqCst) - before
}

#[test]
fn the_breaker_opens_stops_retries_and_closes_after_recovery() {
    // Closed: each failing call makes its three attempts, until ten
    // failures open it, within the window.
    assert_eq!(attempts_of_one_call(), 3);
    let mut calls = 1;
    while !BACKEND.is_open() {
        calls += 1;
        assert!(calls <= 4, "opened within its window and minimum");
        attempts_of_one_call();
    }
    // Open: the first attempt still goes out, the retries do not.
    for _ in 0..5 {
        assert_eq!(attempts_of_one_call(), 1);
    }
    let stats = reattempt::stats::get("breaker::call_backend").unwrap();
    assert!(stats.give_ups.breaker >= 5, "{:?}", stats.give_ups);

    // The backend recovers; after the cool-down a success closes it.
    FAILING.store(false, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(attempts_of_one_call(), 1);
    assert!(!BACKEND.is_open(), "closed once the backend answers");

    // Retries resume: a failure is retried again.
    FAILING.store(true, Ordering::SeqCst);
    assert_eq!(attempts_of_one_call(), 3);
}
