//! The retry breaker: it opens when most attempts fail, stops retries (not
//! first attempts) while open, and closes once the backend answers again.

use std::io::{self, ErrorKind};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use reattempt::dead_letter::Memory;
use reattempt::{RetryBreaker, retry};

mod common;

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

/// Its own breaker, so that the test above cannot open or close it.
static CLASSIC: RetryBreaker = RetryBreaker::new(
    0.5,
    4,
    Duration::from_secs(1),
    Duration::from_millis(100),
    1,
);

static CLASSIC_FAILING: AtomicBool = AtomicBool::new(true);
static CLASSIC_ATTEMPTS: AtomicU32 = AtomicU32::new(0);
static REFUSALS_SEEN: AtomicU32 = AtomicU32::new(0);

#[retry(
    max = 2,
    backoff = none,
    sleep = no_wait,
    breaker = classic(CLASSIC),
    on_give_up = |ctx| {
        if ctx.gave_up() == Some(reattempt::GiveUp::Breaker)
            && ctx.attempt() == 0
            && ctx.class().and_then(|c| c.code().map(str::to_owned)).as_deref() == Some("breaker_open")
        {
            REFUSALS_SEEN.fetch_add(1, Ordering::SeqCst);
        }
    }
)]
fn call_classic() -> io::Result<()> {
    CLASSIC_ATTEMPTS.fetch_add(1, Ordering::SeqCst);
    if CLASSIC_FAILING.load(Ordering::SeqCst) {
        return Err(ErrorKind::ConnectionRefused.into());
    }
    Ok(())
}

/// The attempts one call makes, and its result.
fn classic_call() -> (u32, io::Result<()>) {
    let before = CLASSIC_ATTEMPTS.load(Ordering::SeqCst);
    let result = call_classic();
    (CLASSIC_ATTEMPTS.load(Ordering::SeqCst) - before, result)
}

fn is_refusal(result: &io::Result<()>) -> bool {
    result.as_ref().is_err_and(|e| {
        e.kind() == ErrorKind::Other
            && e.get_ref()
                .is_some_and(|inner| inner.is::<reattempt::BreakerOpen>())
    })
}

#[test]
fn a_classic_breaker_fails_calls_fast_while_open_and_probes_with_first_attempts() {
    // Two failing calls of two attempts each open it.
    assert_eq!(classic_call().0, 2);
    assert_eq!(classic_call().0, 2);
    assert!(CLASSIC.is_open());

    // Open: calls are refused before their first attempt, with the
    // caller's own error type, counted and seen by `on_give_up`.
    for _ in 0..5 {
        let (attempts, result) = classic_call();
        assert_eq!(attempts, 0, "no attempt while open");
        assert!(is_refusal(&result), "{result:?}");
    }
    assert_eq!(REFUSALS_SEEN.load(Ordering::SeqCst), 5);
    let stats = reattempt::stats::get("breaker::call_classic").unwrap();
    assert!(stats.give_ups.breaker >= 5, "{:?}", stats.give_ups);

    // After the cool-down, one first attempt probes; it fails, so the
    // breaker opens again and the next call is refused.
    std::thread::sleep(Duration::from_millis(150));
    let (attempts, result) = classic_call();
    assert_eq!(attempts, 1, "the probe, and no retry after it");
    assert_eq!(result.unwrap_err().kind(), ErrorKind::ConnectionRefused);
    assert!(
        is_refusal(&classic_call().1),
        "open again after a failed probe"
    );

    // The backend recovers: after the next cool-down the probe succeeds,
    // the breaker closes, and calls and retries go out again.
    CLASSIC_FAILING.store(false, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(classic_call().0, 1);
    assert!(!CLASSIC.is_open());
    assert!(classic_call().1.is_ok());
    CLASSIC_FAILING.store(true, Ordering::SeqCst);
    assert_eq!(classic_call().0, 2, "retried again once closed");
}

static ASYNC_CLASSIC: RetryBreaker =
    RetryBreaker::new(0.5, 2, Duration::from_secs(10), Duration::from_secs(60), 1);

static ASYNC_ATTEMPTS: AtomicU32 = AtomicU32::new(0);

#[retry(max = 3, backoff = none, breaker = classic(ASYNC_CLASSIC))]
async fn call_classic_async() -> io::Result<u32> {
    ASYNC_ATTEMPTS.fetch_add(1, Ordering::SeqCst);
    Err(ErrorKind::ConnectionReset.into())
}

#[tokio::test]
async fn an_async_classic_breaker_refuses_without_polling_the_body() {
    let first = call_classic_async().await;
    assert_eq!(first.unwrap_err().kind(), ErrorKind::ConnectionReset);
    assert_eq!(
        ASYNC_ATTEMPTS.load(Ordering::SeqCst),
        2,
        "opened by two failures"
    );
    let refused = tokio::time::timeout(Duration::from_secs(10), call_classic_async())
        .await
        .expect("a refusal does not wait");
    assert!(
        refused
            .unwrap_err()
            .get_ref()
            .unwrap()
            .is::<reattempt::BreakerOpen>()
    );
    assert_eq!(
        ASYNC_ATTEMPTS.load(Ordering::SeqCst),
        2,
        "no attempt while open"
    );
}

/// Opens at once and cools down for 100 ms; 2 probes.
static CROWDED: RetryBreaker = RetryBreaker::new(
    0.5,
    1,
    Duration::from_secs(10),
    Duration::from_millis(100),
    2,
);

static CROWDED_ATTEMPTS: AtomicU32 = AtomicU32::new(0);

#[retry(max = 1, breaker = classic(CROWDED))]
fn call_crowded() -> io::Result<()> {
    CROWDED_ATTEMPTS.fetch_add(1, Ordering::SeqCst);
    // Long enough that every thread asks while the probes are out.
    std::thread::sleep(Duration::from_millis(50));
    Err(ErrorKind::ConnectionRefused.into())
}

/// Runs `call` on `threads` threads that start it together.
fn at_once(threads: usize, call: impl Fn() + Sync) {
    let start = std::sync::Barrier::new(threads);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                start.wait();
                call();
            });
        }
    });
}

#[test]
fn a_crowd_after_the_cool_down_sends_no_more_first_attempts_than_the_probes() {
    let _ = call_crowded();
    assert!(CROWDED.is_open());
    for round in 0..3 {
        std::thread::sleep(Duration::from_millis(150));
        let before = CROWDED_ATTEMPTS.load(Ordering::SeqCst);
        at_once(16, || {
            let _ = call_crowded();
        });
        let probes = CROWDED_ATTEMPTS.load(Ordering::SeqCst) - before;
        assert!(
            (1..=2).contains(&probes),
            "round {round}: {probes} first attempts went out"
        );
        assert!(CROWDED.is_open(), "the failed probes opened it again");
    }
}

/// Opened by hand in the test below; a cool-down no test waits out.
static REFUSING: RetryBreaker =
    RetryBreaker::new(0.5, 1, Duration::from_secs(10), Duration::from_secs(600), 1);

static REFUSED: Memory = Memory::new();

#[retry(max = 3, backoff = none, breaker = classic(REFUSING), dead_letter = REFUSED)]
fn call_refusing() -> io::Result<()> {
    Ok(())
}

#[test]
fn a_refused_call_is_logged_and_recorded_as_a_give_up_after_no_attempt() {
    REFUSING.record(true);
    assert!(REFUSING.is_open());
    let (events, _) = common::capture_logs(|| {
        assert!(is_refusal(&call_refusing()));
    });
    let giving_up: Vec<_> = events
        .iter()
        .filter(|e| e["fields"]["message"] == "giving up")
        .collect();
    assert_eq!(giving_up.len(), 1, "{events:?}");
    let fields = &giving_up[0]["fields"];
    assert_eq!(giving_up[0]["level"], "ERROR");
    assert_eq!(fields["reason"], "breaker");
    assert_eq!(fields["attempt"], 0);
    assert_eq!(fields["code"], "breaker_open");

    let records = REFUSED.take();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].reason, reattempt::GiveUp::Breaker);
    assert_eq!(records[0].attempts, 0);
    assert!(records[0].history.is_empty(), "no attempt to record");
}

/// The events starting with `message` logged while 8 threads record an
/// attempt's end on `breaker` at once: a failure, or a success.
fn logged_at_once(breaker: &RetryBreaker, failed: bool, message: &str) -> usize {
    let (events, _) = common::capture_logs(|| {
        let logs = tracing::dispatcher::get_default(Clone::clone);
        at_once(8, || {
            tracing::dispatcher::with_default(&logs, || breaker.record(failed));
        });
    });
    events
        .iter()
        .filter(|e| {
            e["fields"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with(message))
        })
        .count()
}

/// Threads failing at once all see the breaker closed and its failure ratio
/// over the threshold, and threads succeeding at once after the cool-down
/// all see it open: it opens once and closes once, and says so once each,
/// where each thread would log a change of its own.
#[test]
fn threads_failing_or_succeeding_at_once_change_the_breaker_once() {
    let mut logged = Vec::new();
    for _ in 0..50 {
        let breaker = RetryBreaker::new(
            0.5,
            1,
            Duration::from_secs(10),
            Duration::from_millis(10),
            1,
        );
        let opened = logged_at_once(&breaker, true, "retry breaker open");
        assert!(breaker.is_open());
        std::thread::sleep(Duration::from_millis(20));
        let closed = logged_at_once(&breaker, false, "retry breaker closed");
        assert!(!breaker.is_open());
        logged.push((opened, closed));
    }
    assert!(
        logged.iter().all(|&changes| changes == (1, 1)),
        "(openings, closings) logged each round: {logged:?}"
    );
}

/// Opens at its first failure; one probe after a cool-down of 100 ms.
static LOST_PROBE: RetryBreaker = RetryBreaker::new(
    0.5,
    1,
    Duration::from_secs(600),
    Duration::from_millis(100),
    1,
);

static PROBE_HANGS: AtomicBool = AtomicBool::new(false);

#[retry(max = 1, breaker = classic(LOST_PROBE))]
async fn call_with_a_lost_probe() -> io::Result<()> {
    if PROBE_HANGS.load(Ordering::SeqCst) {
        std::future::pending::<()>().await;
    }
    Ok(())
}

#[tokio::test]
async fn a_classic_breaker_whose_probe_was_cancelled_probes_again_after_a_cool_down() {
    LOST_PROBE.record(true);
    assert!(LOST_PROBE.is_open());
    let cool_down = Duration::from_millis(150);
    tokio::time::sleep(cool_down).await;
    // The probe's call is dropped by its caller: it never says how the
    // backend did.
    PROBE_HANGS.store(true, Ordering::SeqCst);
    let cut = tokio::time::timeout(Duration::from_millis(10), call_with_a_lost_probe()).await;
    assert!(cut.is_err(), "the probe was taken and hung");
    PROBE_HANGS.store(false, Ordering::SeqCst);
    assert!(
        call_with_a_lost_probe()
            .await
            .unwrap_err()
            .get_ref()
            .is_some_and(|e| e.is::<reattempt::BreakerOpen>()),
        "no second probe within the cool-down"
    );
    tokio::time::sleep(cool_down).await;
    call_with_a_lost_probe()
        .await
        .expect("a new probe after another cool-down, where none would ever go again");
    assert!(!LOST_PROBE.is_open(), "the probe's success closed it");
}

/// Opened by hand in the test below.
static REFUSING_WITH_A_BUDGET: RetryBreaker =
    RetryBreaker::new(0.5, 1, Duration::from_secs(10), Duration::from_secs(600), 1);

/// A token per first attempt, none in reserve.
static TOKENS: reattempt::RetryBudget =
    reattempt::RetryBudget::new(1.0, 0, Duration::from_secs(600));

#[retry(max = 3, backoff = none, breaker = classic(REFUSING_WITH_A_BUDGET), budget = TOKENS)]
fn call_refusing_with_a_budget() -> io::Result<()> {
    Ok(())
}

#[test]
fn a_refused_call_deposits_nothing_in_the_retry_budget() {
    REFUSING_WITH_A_BUDGET.record(true);
    for _ in 0..10 {
        assert!(is_refusal(&call_refusing_with_a_budget()));
    }
    // No first attempt went out: once the backend answers again, its
    // retries are not paid for by calls that never reached it.
    assert_eq!(TOKENS.available(), 0.0);
}
