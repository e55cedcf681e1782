//! Hedging under the shared protections, on a paused clock: a hedge takes
//! a budget token, an open breaker starts none, a hedge takes a permit of
//! its own and does not queue for one, `attempt_timeout` cuts each
//! attempt, and the deadline bounds the whole call and starts no hedge
//! that could not finish before it.

use std::io::{self, ErrorKind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use reattempt::{ConcurrencyLimit, RetryBreaker, RetryBudget, retry};
use tokio::time::{Instant, sleep};

/// The numbers of the attempts a function started.
fn started(seen: &Mutex<Vec<u32>>) -> u32 {
    let number = reattempt::attempt().unwrap().number();
    seen.lock().unwrap().push(number);
    number
}

static EMPTY: RetryBudget = RetryBudget::new(0.0, 0, Duration::from_secs(60));

/// Slow first attempts, under a budget with no token.
#[retry(max = 5, backoff = none, hedge = 50ms, budget = EMPTY)]
async fn no_tokens(seen: &Mutex<Vec<u32>>) -> io::Result<u32> {
    let number = started(seen);
    sleep(Duration::from_millis(200)).await;
    Ok(number)
}

#[tokio::test(start_paused = true)]
async fn an_empty_budget_starts_no_hedge_and_the_call_waits_on_its_attempt() {
    let seen = Mutex::new(Vec::new());
    let start = Instant::now();
    assert_eq!(no_tokens(&seen).await.unwrap(), 1);
    assert_eq!(start.elapsed(), Duration::from_millis(200));
    assert_eq!(seen.into_inner().unwrap(), [1]);
    let stats = reattempt::stats::get("hedging_protections::no_tokens").unwrap();
    assert_eq!(stats.hedges, 0);
}

/// Each call deposits one token, as a first attempt: enough for one hedge.
static ONE_TOKEN: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(60));

/// Up to four at once, under a budget of a token a call.
#[retry(max = 9, backoff = none, hedge(after = 20ms, in_flight = 4), budget = ONE_TOKEN)]
async fn one_token(seen: &Mutex<Vec<u32>>) -> io::Result<u32> {
    let number = started(seen);
    sleep(Duration::from_millis(200)).await;
    Ok(number)
}

#[tokio::test(start_paused = true)]
async fn each_hedge_takes_a_token_from_the_budget() {
    let seen = Mutex::new(Vec::new());
    assert_eq!(one_token(&seen).await.unwrap(), 1);
    assert_eq!(seen.into_inner().unwrap(), [1, 2], "one token, one hedge");
    assert_eq!(ONE_TOKEN.available(), 0.0);
}

static OPEN: RetryBreaker =
    RetryBreaker::new(0.5, 2, Duration::from_secs(60), Duration::from_secs(600), 1);

#[retry(max = 5, backoff = none, hedge = 50ms, breaker = OPEN)]
async fn behind_an_open_breaker(seen: &Mutex<Vec<u32>>) -> io::Result<u32> {
    let number = started(seen);
    sleep(Duration::from_millis(200)).await;
    Ok(number)
}

#[tokio::test(start_paused = true)]
async fn an_open_breaker_starts_no_hedge() {
    OPEN.record(true);
    OPEN.record(true);
    assert!(OPEN.is_open());
    let seen = Mutex::new(Vec::new());
    assert_eq!(behind_an_open_breaker(&seen).await.unwrap(), 1);
    assert_eq!(seen.into_inner().unwrap(), [1]);
}

static ONE: ConcurrencyLimit = ConcurrencyLimit::new(1);
static RUNNING: AtomicU32 = AtomicU32::new(0);
static MOST: AtomicU32 = AtomicU32::new(0);

/// Counts the attempts running at once, under a limit of one.
#[retry(max = 5, backoff = none, hedge = 50ms, limit = ONE)]
async fn limited_to_one(seen: &Mutex<Vec<u32>>) -> io::Result<u32> {
    struct Running;
    impl Drop for Running {
        fn drop(&mut self) {
            RUNNING.fetch_sub(1, Ordering::SeqCst);
        }
    }
    let now = RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
    MOST.fetch_max(now, Ordering::SeqCst);
    let _running = Running;
    let number = started(seen);
    sleep(Duration::from_millis(200)).await;
    Ok(number)
}

#[tokio::test(start_paused = true)]
async fn a_hedge_needs_a_permit_of_its_own_and_does_not_queue_for_one() {
    let seen = Mutex::new(Vec::new());
    let start = Instant::now();
    assert_eq!(limited_to_one(&seen).await.unwrap(), 1);
    assert_eq!(
        start.elapsed(),
        Duration::from_millis(200),
        "no hedge waited for the permit"
    );
    assert_eq!(seen.into_inner().unwrap(), [1]);
    assert_eq!(
        MOST.load(Ordering::SeqCst),
        1,
        "never two at once under a limit of one"
    );
    assert_eq!(ONE.in_use(), 0);
    assert_eq!(ONE.waiting(), 0);
}

static TWO: ConcurrencyLimit = ConcurrencyLimit::new(2);

#[retry(max = 5, backoff = none, hedge = 50ms, limit = TWO)]
async fn limited_to_two(seen: &Mutex<Vec<u32>>) -> io::Result<u32> {
    let number = started(seen);
    let took = if number == 1 { 1000 } else { 10 };
    sleep(Duration::from_millis(took)).await;
    Ok(number)
}

#[tokio::test(start_paused = true)]
async fn a_hedge_starts_when_a_permit_is_free() {
    let seen = Mutex::new(Vec::new());
    assert_eq!(limited_to_two(&seen).await.unwrap(), 2);
    assert_eq!(seen.into_inner().unwrap(), [1, 2]);
    assert_eq!(TWO.in_use(), 0, "both permits back");
}

/// Never answers in time.
#[retry(max = 3, backoff = none, hedge = 50ms, attempt_timeout = 100ms)]
async fn each_times_out(seen: &Mutex<Vec<u32>>) -> io::Result<u32> {
    let number = started(seen);
    sleep(Duration::from_secs(3600)).await;
    Ok(number)
}

#[tokio::test(start_paused = true)]
async fn attempt_timeout_cuts_each_attempt_of_a_hedged_call() {
    let seen = Mutex::new(Vec::new());
    let start = Instant::now();
    let error = each_times_out(&seen).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::TimedOut);
    // Attempt 1 at 0 ms, 2 at 50, 3 at 100; each cut 100 ms after it
    // started, the last at 200.
    assert_eq!(start.elapsed(), Duration::from_millis(200));
    assert_eq!(seen.into_inner().unwrap(), [1, 2, 3]);
    let stats = reattempt::stats::get("hedging_protections::each_times_out").unwrap();
    assert_eq!((stats.give_ups.exhausted, stats.attempts), (1, 3));
}

/// Never answers in time.
#[retry(max = 9, backoff = none, hedge = 50ms, deadline = 120ms)]
async fn past_the_deadline(seen: &Mutex<Vec<u32>>) -> io::Result<u32> {
    let number = started(seen);
    sleep(Duration::from_secs(3600)).await;
    Ok(number)
}

#[tokio::test(start_paused = true)]
async fn the_deadline_bounds_a_hedged_call_and_starts_no_hedge_that_could_not_finish() {
    let seen = Mutex::new(Vec::new());
    let start = Instant::now();
    let error = past_the_deadline(&seen).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::TimedOut);
    assert_eq!(start.elapsed(), Duration::from_millis(120));
    // A hedge at 50 ms; at 100 ms, 20 ms are left, less than `after`.
    assert_eq!(seen.into_inner().unwrap(), [1, 2]);
    let stats = reattempt::stats::get("hedging_protections::past_the_deadline").unwrap();
    assert_eq!((stats.give_ups.deadline, stats.hedges), (1, 1));
}

static CLASSIC: RetryBreaker =
    RetryBreaker::new(0.5, 2, Duration::from_secs(60), Duration::from_secs(600), 1);

#[retry(max = 5, backoff = none, hedge = 50ms, breaker = classic(CLASSIC))]
async fn refused_while_open(seen: &Mutex<Vec<u32>>) -> io::Result<u32> {
    Ok(started(seen))
}

#[tokio::test(start_paused = true)]
async fn a_classic_breaker_refuses_a_hedged_call_before_its_first_attempt() {
    CLASSIC.record(true);
    CLASSIC.record(true);
    let seen = Mutex::new(Vec::new());
    let error = refused_while_open(&seen).await.unwrap_err();
    assert!(error.to_string().contains("breaker"), "{error}");
    assert!(seen.into_inner().unwrap().is_empty(), "no attempt went out");
}

static HELD: ConcurrencyLimit = ConcurrencyLimit::new(3);

#[retry(max = 5, backoff = none, hedge(after = 10ms, in_flight = 3), limit = HELD)]
async fn holds_permits() -> io::Result<()> {
    sleep(Duration::from_secs(3600)).await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_hedged_call_gives_back_every_permit() {
    let call = tokio::spawn(holds_permits());
    sleep(Duration::from_millis(100)).await;
    assert_eq!(HELD.in_use(), 3, "the first attempt and two hedges");
    call.abort();
    assert!(call.await.unwrap_err().is_cancelled());
    assert_eq!(HELD.in_use(), 0);
}

static OVERTAKEN_TOKENS: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600));

/// A first attempt that succeeds at 60 ms; the hook before its hedge (due
/// at 50 ms) takes 20 ms, so the first attempt has ended before the hedge
/// is ever polled.
#[retry(
    max = 3,
    backoff = none,
    hedge = 50ms,
    budget = OVERTAKEN_TOKENS,
    before = |c| {
        let hedge = c.is_hedge();
        async move {
            if hedge {
                sleep(Duration::from_millis(20)).await;
            }
        }
    },
)]
async fn overtaken_hedge() -> io::Result<u32> {
    sleep(Duration::from_millis(60)).await;
    Ok(1)
}

#[tokio::test(start_paused = true)]
async fn a_hedge_the_round_ends_before_it_runs_is_not_counted_and_gives_its_token_back() {
    assert_eq!(overtaken_hedge().await.unwrap(), 1);
    let stats = reattempt::stats::get("hedging_protections::overtaken_hedge").unwrap();
    assert_eq!(
        (stats.attempts, stats.hedges),
        (1, 0),
        "the hedge never ran"
    );
    assert_eq!(
        OVERTAKEN_TOKENS.available(),
        1.0,
        "the first attempt's deposit, the hedge's token given back"
    );
}
