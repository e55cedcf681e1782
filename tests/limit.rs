//! The concurrency limit under nesting and timeouts: a retried call inside
//! an attempt that holds a permit of the same limit runs under it instead
//! of waiting for a second one (which, with the limit full of such outer
//! calls, would never come); `attempt_timeout` counts from the moment an
//! attempt holds its permit; the deadline ends the wait for one where the
//! error type can stand for a timeout, or a retry's last error can be
//! returned instead; and an attempt that is cut, or
//! dropped with its call, is dropped before its permit passes on.

mod common;

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use reattempt::{ConcurrencyLimit, RetryBudget, retry};

static SINGLE: ConcurrencyLimit = ConcurrencyLimit::new(1);

#[retry(max = 2, backoff = none, limit = SINGLE)]
fn inner() -> io::Result<u32> {
    Ok(1)
}

#[retry(max = 2, backoff = none)]
fn middle() -> io::Result<u32> {
    inner()
}

#[retry(max = 2, backoff = none, limit = SINGLE)]
fn outer() -> io::Result<u32> {
    Ok(inner()? + middle()?)
}

#[test]
fn a_sync_call_nested_in_one_holding_the_same_limit_does_not_wait() {
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || done.send(outer().unwrap()).unwrap());
    let result = finished
        .recv_timeout(Duration::from_secs(20))
        .expect("outer() deadlocked on its own permit");
    assert_eq!(result, 2);
    assert_eq!(SINGLE.in_use(), 0);
}

static DATABASE: ConcurrencyLimit = ConcurrencyLimit::new(8);
static RUNNING: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

#[retry(max = 2, backoff = none, limit = DATABASE)]
async fn query_db(id: u32) -> io::Result<u32> {
    tokio::time::sleep(Duration::from_millis(5)).await;
    Ok(id)
}

#[retry(max = 2, backoff = none, limit = DATABASE)]
async fn load_user(id: u32) -> io::Result<u32> {
    let running = RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
    PEAK.fetch_max(running, Ordering::SeqCst);
    tokio::task::yield_now().await;
    let row = query_db(id).await;
    RUNNING.fetch_sub(1, Ordering::SeqCst);
    row
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_four_async_callers_of_nested_calls_sharing_a_limit_all_complete() {
    let callers: Vec<_> = (0..64).map(|id| tokio::spawn(load_user(id))).collect();
    let all = async {
        let mut done = 0;
        for caller in callers {
            caller.await.unwrap().unwrap();
            done += 1;
        }
        done
    };
    let done = tokio::time::timeout(Duration::from_secs(20), all)
        .await
        .expect("nested calls deadlocked on the shared limit");
    assert_eq!(done, 64);
    assert!(
        PEAK.load(Ordering::SeqCst) <= 8,
        "the outer calls kept to the limit"
    );
    assert_eq!(DATABASE.in_use(), 0);
}

static ONE_AT_A_TIME: ConcurrencyLimit = ConcurrencyLimit::new(1);

#[retry(max = 1, attempt_timeout = 50ms, limit = ONE_AT_A_TIME)]
async fn thirty_milliseconds(started: Arc<AtomicUsize>) -> io::Result<()> {
    started.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(30)).await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn the_attempt_timeout_does_not_count_the_wait_for_a_permit() {
    let started = Arc::new(AtomicUsize::new(0));
    let calls: Vec<_> = (0..6)
        .map(|_| tokio::spawn(thirty_milliseconds(Arc::clone(&started))))
        .collect();
    let mut succeeded = 0;
    for call in calls {
        if call.await.unwrap().is_ok() {
            succeeded += 1;
        }
    }
    assert_eq!(
        succeeded, 6,
        "each 30 ms attempt is within its 50 ms once it runs"
    );
    assert_eq!(started.load(Ordering::SeqCst), 6);
}

// ---- the deadline and the wait for a permit ----

static HELD_FOR_A_WHILE: ConcurrencyLimit = ConcurrencyLimit::new(1);

/// How long the permit's next holder keeps it, from the end of a call's
/// first attempt: its retry would wait that long for the permit, past the
/// call's deadline of 300 ms.
const HELD: Duration = Duration::from_secs(2);

/// Whether `error` is the timeout the deadline made.
fn timed_out(error: &io::Error) -> bool {
    error
        .get_ref()
        .is_some_and(|inner| inner.is::<reattempt::AttemptTimeout>())
}

/// A token for each first attempt, none in reserve: a retry's is the one
/// its first attempt deposited.
static SYNC_TOKENS: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600));

/// Counts an attempt, and at the first makes a thread queue for the
/// permit of `limit` that this attempt holds, to keep it for `HELD`.
fn queue_a_slow_holder_at_first(attempts: &AtomicUsize, limit: &'static ConcurrencyLimit) {
    if attempts.fetch_add(1, Ordering::SeqCst) == 0 {
        std::thread::spawn(move || {
            let _permit = limit.acquire_blocking();
            std::thread::sleep(HELD);
        });
        // Bounded: the holder queues at once, or the test fails below.
        let queued = std::time::Instant::now();
        while limit.waiting() == 0 && queued.elapsed() < Duration::from_secs(10) {
            std::thread::yield_now();
        }
    }
}

/// Fails, and at its first attempt makes a thread queue for the permit
/// this attempt holds, to keep it for `HELD`.
#[retry(max = 5, backoff = fixed(20ms), deadline = 300ms, limit = HELD_FOR_A_WHILE, budget = SYNC_TOKENS)]
fn sync_behind_a_slow_holder(attempts: &AtomicUsize) -> io::Result<()> {
    queue_a_slow_holder_at_first(attempts, &HELD_FOR_A_WHILE);
    Err(io::ErrorKind::ConnectionRefused.into())
}

#[test]
#[cfg_attr(miri, ignore = "a deadline on the wall clock, which Miri runs past")]
fn a_sync_retry_queued_for_a_permit_ends_at_the_deadline_without_running() {
    let attempts = AtomicUsize::new(0);
    let started = std::time::Instant::now();
    let mut outcome = None;
    let (events, _) = common::capture_logs(|| outcome = Some(sync_behind_a_slow_holder(&attempts)));
    let took = started.elapsed();
    let error = outcome.unwrap().unwrap_err();
    common::the_give_up_for_an_attempt_that_never_ran(&events);
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        1,
        "the retry would have started after the deadline"
    );
    assert!(timed_out(&error), "{error:?}");
    assert!(
        took < HELD,
        "the call waited for the permit past its deadline: {took:?}"
    );
    let stats = reattempt::stats::get("limit::sync_behind_a_slow_holder").unwrap();
    assert_eq!(stats.give_ups.deadline, 1);
    assert_eq!(
        stats.attempts, 1,
        "the attempt that never got its permit is not counted"
    );
    assert_eq!(HELD_FOR_A_WHILE.waiting(), 0, "the call left the queue");
    assert_eq!(
        SYNC_TOKENS.available(),
        1.0,
        "the token of the retry that never ran is given back"
    );
}

static HELD_BY_A_TASK: ConcurrencyLimit = ConcurrencyLimit::new(1);

/// As in [`sync_behind_a_slow_holder`], with a task holding the permit.
async fn fail_once_behind_a_slow_holder(attempts: &AtomicUsize, limit: &'static ConcurrencyLimit) {
    if attempts.fetch_add(1, Ordering::SeqCst) == 0 {
        tokio::spawn(async {
            let _permit = limit.acquire().await;
            tokio::time::sleep(HELD).await;
        });
        for _ in 0..1_000 {
            if limit.waiting() > 0 {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert_eq!(limit.waiting(), 1, "the holder queued");
    }
}

static ASYNC_TOKENS: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600));

#[retry(max = 5, backoff = fixed(20ms), deadline = 300ms, limit = HELD_BY_A_TASK, budget = ASYNC_TOKENS)]
async fn async_behind_a_slow_holder(attempts: &AtomicUsize) -> io::Result<()> {
    fail_once_behind_a_slow_holder(attempts, &HELD_BY_A_TASK).await;
    Err(io::ErrorKind::ConnectionRefused.into())
}

#[tokio::test(start_paused = true)]
async fn an_async_retry_queued_for_a_permit_ends_at_the_deadline_without_running() {
    let attempts = AtomicUsize::new(0);
    let started = tokio::time::Instant::now();
    let error = async_behind_a_slow_holder(&attempts).await.unwrap_err();
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        1,
        "the retry would have started after the deadline"
    );
    assert!(timed_out(&error), "{error:?}");
    assert_eq!(started.elapsed(), Duration::from_millis(300));
    let stats = reattempt::stats::get("limit::async_behind_a_slow_holder").unwrap();
    assert_eq!(stats.give_ups.deadline, 1);
    assert_eq!(HELD_BY_A_TASK.waiting(), 0, "the call left the queue");
    assert_eq!(
        ASYNC_TOKENS.available(),
        1.0,
        "the token of the retry that never ran is given back"
    );
}

static HELD_FOR_AN_OPAQUE_CALL: ConcurrencyLimit = ConcurrencyLimit::new(1);

/// An error type that cannot stand for a timeout.
#[derive(Debug, PartialEq)]
struct Refused;

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("refused")
    }
}

#[retry(on = |_: &Refused| true, max = 5, backoff = fixed(20ms), deadline = 300ms, limit = HELD_FOR_AN_OPAQUE_CALL)]
async fn opaque_behind_a_slow_holder(attempts: &AtomicUsize) -> Result<(), Refused> {
    fail_once_behind_a_slow_holder(attempts, &HELD_FOR_AN_OPAQUE_CALL).await;
    Err(Refused)
}

/// An error type that cannot stand for a timeout: a retry that the
/// deadline finds waiting for its permit does not run, and the call ends
/// with the last attempt's error, which is all that happened.
#[test]
fn without_a_timeout_error_a_queued_retry_ends_at_the_deadline_with_the_last_error() {
    let attempts = AtomicUsize::new(0);
    let mut seen = None;
    let (events, _) = common::capture_logs(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .unwrap();
        runtime.block_on(async {
            let started = tokio::time::Instant::now();
            let outcome = opaque_behind_a_slow_holder(&attempts).await;
            seen = Some((outcome, started.elapsed()));
        });
    });
    let (outcome, took) = seen.unwrap();
    ended_with_the_last_error(
        outcome,
        &attempts,
        "limit::opaque_behind_a_slow_holder",
        &HELD_FOR_AN_OPAQUE_CALL,
    );
    assert_eq!(took, Duration::from_millis(300));
    let giving_up = common::the_give_up_for_an_attempt_that_never_ran(&events);
    assert_eq!(giving_up["fields"]["error"], "refused");
}

/// What a call of an error type that cannot stand for a timeout shows when
/// the deadline finds its retry waiting for a permit: the first attempt's
/// error, no second attempt, a give-up for the deadline, and no one of it
/// left in the queue.
fn ended_with_the_last_error(
    outcome: Result<(), Refused>,
    attempts: &AtomicUsize,
    function: &str,
    limit: &ConcurrencyLimit,
) {
    assert_eq!(outcome, Err(Refused));
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        1,
        "the retry would have started after the deadline"
    );
    let stats = reattempt::stats::get(function).unwrap();
    assert_eq!((stats.give_ups.deadline, stats.attempts), (1, 1));
    assert_eq!(limit.waiting(), 0, "the call left the queue");
}

static HELD_FOR_AN_OPAQUE_SYNC_CALL: ConcurrencyLimit = ConcurrencyLimit::new(1);

/// As [`sync_behind_a_slow_holder`], with an error type that cannot stand
/// for a timeout.
#[retry(on = |_: &Refused| true, max = 5, backoff = fixed(20ms), deadline = 300ms, limit = HELD_FOR_AN_OPAQUE_SYNC_CALL)]
fn opaque_sync_behind_a_slow_holder(attempts: &AtomicUsize) -> Result<(), Refused> {
    queue_a_slow_holder_at_first(attempts, &HELD_FOR_AN_OPAQUE_SYNC_CALL);
    Err(Refused)
}

#[test]
#[cfg_attr(miri, ignore = "a deadline on the wall clock, which Miri runs past")]
fn without_a_timeout_error_a_queued_sync_retry_ends_at_the_deadline_with_the_last_error() {
    let attempts = AtomicUsize::new(0);
    let started = std::time::Instant::now();
    let outcome = opaque_sync_behind_a_slow_holder(&attempts);
    let took = started.elapsed();
    ended_with_the_last_error(
        outcome,
        &attempts,
        "limit::opaque_sync_behind_a_slow_holder",
        &HELD_FOR_AN_OPAQUE_SYNC_CALL,
    );
    assert!(
        took < HELD,
        "the call waited for the permit past its deadline: {took:?}"
    );
}

static FREE_FOR_TRACKED_CALLS: ConcurrencyLimit = ConcurrencyLimit::new(2);

/// An error that counts its drops in its counter, and cannot stand for a
/// timeout.
#[derive(Debug)]
struct Tracked(&'static AtomicUsize);

impl Drop for Tracked {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Fails at once, then gives how many errors were dropped when its second
/// attempt ran.
#[retry(on = |_: &Tracked| true, max = 2, backoff = none, deadline = 60s, limit = FREE_FOR_TRACKED_CALLS)]
fn drops_seen_by_the_retry(attempts: &AtomicUsize) -> Result<usize, Tracked> {
    static DROPPED: AtomicUsize = AtomicUsize::new(0);
    if attempts.fetch_add(1, Ordering::SeqCst) == 0 {
        return Err(Tracked(&DROPPED));
    }
    Ok(DROPPED.load(Ordering::SeqCst))
}

#[retry(on = |_: &Tracked| true, max = 2, backoff = none, deadline = 60s, limit = FREE_FOR_TRACKED_CALLS)]
async fn drops_seen_by_the_async_retry(attempts: &AtomicUsize) -> Result<usize, Tracked> {
    static DROPPED: AtomicUsize = AtomicUsize::new(0);
    if attempts.fetch_add(1, Ordering::SeqCst) == 0 {
        return Err(Tracked(&DROPPED));
    }
    tokio::task::yield_now().await;
    Ok(DROPPED.load(Ordering::SeqCst))
}

/// The last error, kept to stand for a retry that the deadline might find
/// waiting for its permit, is dropped once the retry holds its permit:
/// the body never runs beside it.
#[test]
fn a_sync_retry_runs_after_the_last_error_it_kept_is_dropped() {
    let attempts = AtomicUsize::new(0);
    assert_eq!(drops_seen_by_the_retry(&attempts).unwrap(), 1);
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn an_async_retry_runs_after_the_last_error_it_kept_is_dropped() {
    let attempts = AtomicUsize::new(0);
    assert_eq!(drops_seen_by_the_async_retry(&attempts).await.unwrap(), 1);
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
}

static HELD_FOR_A_CALL_THAT_IS_NOT_SEND: ConcurrencyLimit = ConcurrencyLimit::new(1);

/// An error that cannot go to another thread.
#[derive(Debug, PartialEq)]
struct Local(std::marker::PhantomData<*const ()>);

/// Its last error could not be kept across the wait without making the
/// function's future lose `Send`: its attempts wait for their permit as
/// before.
#[retry(on = |_: &Local| true, max = 5, backoff = fixed(20ms), deadline = 300ms, limit = HELD_FOR_A_CALL_THAT_IS_NOT_SEND)]
async fn not_send_behind_a_slow_holder(attempts: &AtomicUsize) -> Result<(), Local> {
    fail_once_behind_a_slow_holder(attempts, &HELD_FOR_A_CALL_THAT_IS_NOT_SEND).await;
    Err(Local(std::marker::PhantomData))
}

fn is_send<T: Send>(value: T) -> T {
    value
}

#[tokio::test(start_paused = true)]
async fn with_an_error_that_is_not_send_the_future_stays_send_and_a_retry_waits() {
    let attempts = AtomicUsize::new(0);
    let started = tokio::time::Instant::now();
    let outcome = is_send(not_send_behind_a_slow_holder(&attempts)).await;
    assert_eq!(outcome, Err(Local(std::marker::PhantomData)));
    // Nothing kept stands for the retry: it runs once it holds the permit.
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
    assert_eq!(started.elapsed(), HELD);
}

static HELD_FOR_A_SYNC_CALL_THAT_IS_NOT_SEND: ConcurrencyLimit = ConcurrencyLimit::new(1);

/// A sync function has no future to keep `Send`: its last error stands for
/// a retry queued at the deadline, whatever its type.
#[retry(on = |_: &Local| true, max = 5, backoff = fixed(20ms), deadline = 300ms, limit = HELD_FOR_A_SYNC_CALL_THAT_IS_NOT_SEND)]
fn sync_not_send_behind_a_slow_holder(attempts: &AtomicUsize) -> Result<(), Local> {
    queue_a_slow_holder_at_first(attempts, &HELD_FOR_A_SYNC_CALL_THAT_IS_NOT_SEND);
    Err(Local(std::marker::PhantomData))
}

#[test]
#[cfg_attr(miri, ignore = "a deadline on the wall clock, which Miri runs past")]
fn a_sync_retry_queued_at_the_deadline_ends_with_a_last_error_that_is_not_send() {
    let attempts = AtomicUsize::new(0);
    let started = std::time::Instant::now();
    let outcome = sync_not_send_behind_a_slow_holder(&attempts);
    let took = started.elapsed();
    assert_eq!(outcome, Err(Local(std::marker::PhantomData)));
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        1,
        "the retry would have started after the deadline"
    );
    assert!(
        took < HELD,
        "the call waited for the permit past its deadline: {took:?}"
    );
}

static SHARED_BY_BORROWING_CALLS: ConcurrencyLimit = ConcurrencyLimit::new(1);

/// Outcomes that borrow an argument, with a timeout to stand for an
/// attempt and without: rustc checks such futures for `Send` with their
/// lifetimes erased, which a trait bound tying two types' lifetimes fails.
#[retry(max = 2, backoff = none, deadline = 300ms, limit = SHARED_BY_BORROWING_CALLS)]
async fn echoes<'a>(text: &'a str) -> io::Result<&'a str> {
    Ok(text)
}

#[retry(on = |_: &Refused| true, max = 2, backoff = none, deadline = 300ms, limit = SHARED_BY_BORROWING_CALLS)]
async fn echoes_or_refuses<'a>(text: &'a str) -> Result<&'a str, Refused> {
    Ok(text)
}

#[tokio::test]
async fn a_limited_call_with_a_deadline_whose_outcome_borrows_is_send() {
    let text = String::from("echo");
    assert_eq!(is_send(echoes(&text)).await.unwrap(), "echo");
    assert_eq!(is_send(echoes_or_refuses(&text)).await.unwrap(), "echo");
}

/// Makes a call of `call` while a task holds the only permit of `limit`
/// for `HELD`: the call's error, how many attempts its body started, and
/// how long it took.
async fn behind_a_holder(
    limit: &'static ConcurrencyLimit,
    call: impl AsyncFnOnce(&AtomicUsize) -> io::Result<()>,
) -> (io::Error, usize, Duration) {
    let held = limit.acquire().await;
    let holder = tokio::spawn(async move {
        tokio::time::sleep(HELD).await;
        drop(held);
    });
    let attempts = AtomicUsize::new(0);
    let started = tokio::time::Instant::now();
    let error = call(&attempts).await.unwrap_err();
    let took = started.elapsed();
    holder.await.unwrap();
    assert_eq!(limit.in_use(), 0);
    (error, attempts.load(Ordering::SeqCst), took)
}

static HELD_BEFORE_THE_CALL: ConcurrencyLimit = ConcurrencyLimit::new(1);

static FIRST_IN_LINE_TOKENS: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600));

#[retry(max = 5, backoff = fixed(20ms), deadline = 300ms, limit = HELD_BEFORE_THE_CALL, budget = FIRST_IN_LINE_TOKENS)]
async fn first_in_line_behind_a_slow_holder(attempts: &AtomicUsize) -> io::Result<()> {
    attempts.fetch_add(1, Ordering::SeqCst);
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_first_attempt_queued_for_a_permit_ends_at_the_deadline_without_running() {
    let (error, attempts, took) =
        behind_a_holder(&HELD_BEFORE_THE_CALL, first_in_line_behind_a_slow_holder).await;
    assert_eq!(attempts, 0);
    assert!(timed_out(&error), "{error:?}");
    assert_eq!(took, Duration::from_millis(300));
    assert_eq!(
        FIRST_IN_LINE_TOKENS.available(),
        0.0,
        "no first attempt went out to pay for retries"
    );
}

static HELD_BEFORE_A_CONFIGURED_CALL: ConcurrencyLimit = ConcurrencyLimit::new(1);

#[retry(max = 5, backoff = fixed(20ms), limit = HELD_BEFORE_A_CONFIGURED_CALL, policy = reattempt::dynamic::DynamicPolicy::new().deadline(Duration::from_millis(300)))]
async fn configured_behind_a_slow_holder(attempts: &AtomicUsize) -> io::Result<()> {
    attempts.fetch_add(1, Ordering::SeqCst);
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_configured_deadline_ends_the_wait_for_a_permit_too() {
    let (error, attempts, took) = behind_a_holder(
        &HELD_BEFORE_A_CONFIGURED_CALL,
        configured_behind_a_slow_holder,
    )
    .await;
    assert_eq!(attempts, 0);
    assert!(timed_out(&error), "{error:?}");
    assert_eq!(took, Duration::from_millis(300));
}

static HELD_BEFORE_A_PAYMENT: ConcurrencyLimit = ConcurrencyLimit::new(1);

/// Opens at the first failure of an attempt.
static TOUCHY: reattempt::RetryBreaker = reattempt::RetryBreaker::new(
    0.5,
    1,
    Duration::from_secs(600),
    Duration::from_secs(600),
    1,
);

#[retry(max = 5, backoff = fixed(20ms), deadline = 300ms, limit = HELD_BEFORE_A_PAYMENT, idempotent = false, breaker = TOUCHY)]
async fn payment_behind_a_slow_holder(attempts: &AtomicUsize) -> io::Result<()> {
    attempts.fetch_add(1, Ordering::SeqCst);
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn an_attempt_that_never_got_its_permit_did_not_take_effect() {
    let (_, attempts, _) =
        behind_a_holder(&HELD_BEFORE_A_PAYMENT, payment_behind_a_slow_holder).await;
    assert_eq!(attempts, 0);
    let stats = reattempt::stats::get("limit::payment_behind_a_slow_holder").unwrap();
    assert_eq!(
        (stats.give_ups.deadline, stats.give_ups.maybe_applied),
        (1, 0),
        "nothing ran, so nothing may have been applied"
    );
    assert!(
        !TOUCHY.is_open(),
        "the breaker counts attempts that reached the backend"
    );
}

// ---- a cut attempt and its permit ----

static HELD_UNTIL_DROPPED: ConcurrencyLimit = ConcurrencyLimit::new(1);
static HELD_UNTIL_DROPPED_AT_THE_DEADLINE: ConcurrencyLimit = ConcurrencyLimit::new(1);

/// What `in_use()` of a limit said when the attempt holding it was dropped.
struct InUseWhenDropped(&'static ConcurrencyLimit, &'static AtomicUsize);

impl Drop for InUseWhenDropped {
    fn drop(&mut self) {
        self.1.store(self.0.in_use(), Ordering::SeqCst);
    }
}

static TIMED_OUT_IN_USE: AtomicUsize = AtomicUsize::new(usize::MAX);
static DEADLINE_IN_USE: AtomicUsize = AtomicUsize::new(usize::MAX);

#[retry(max = 1, attempt_timeout = 50ms, limit = HELD_UNTIL_DROPPED)]
async fn timed_out_holding_a_permit() -> io::Result<()> {
    let _dropped = InUseWhenDropped(&HELD_UNTIL_DROPPED, &TIMED_OUT_IN_USE);
    tokio::time::sleep(Duration::from_secs(10)).await;
    Ok(())
}

#[retry(max = 1, deadline = 50ms, limit = HELD_UNTIL_DROPPED_AT_THE_DEADLINE)]
async fn cut_at_the_deadline_holding_a_permit() -> io::Result<()> {
    let _dropped = InUseWhenDropped(&HELD_UNTIL_DROPPED_AT_THE_DEADLINE, &DEADLINE_IN_USE);
    tokio::time::sleep(Duration::from_secs(10)).await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_cut_attempt_is_dropped_before_its_permit_is_given_back() {
    // Dropped after, what the attempt holds (a pooled connection, a
    // transaction) would still be held while the next holder of the permit
    // runs.
    assert!(timed_out(&timed_out_holding_a_permit().await.unwrap_err()));
    assert_eq!(
        TIMED_OUT_IN_USE.load(Ordering::SeqCst),
        1,
        "attempt_timeout"
    );
    assert!(timed_out(
        &cut_at_the_deadline_holding_a_permit().await.unwrap_err()
    ));
    assert_eq!(DEADLINE_IN_USE.load(Ordering::SeqCst), 1, "the deadline");
    assert_eq!(HELD_UNTIL_DROPPED.in_use(), 0);
    assert_eq!(HELD_UNTIL_DROPPED_AT_THE_DEADLINE.in_use(), 0);
}

// ---- threads and tasks sharing a limit, with their attempts cut ----

static SHARED: ConcurrencyLimit = ConcurrencyLimit::new(3);
static SHARED_GAUGE: common::Gauge = common::Gauge::new();

/// Milliseconds an attempt of call `seed` takes, 0 to 39, and whether it
/// fails.
fn shape(seed: usize, attempt: u32) -> (u64, bool) {
    let n = seed * 7 + attempt as usize * 13;
    ((n % 40) as u64, !n.is_multiple_of(3))
}

#[retry(max = 6, backoff = fixed(5ms), deadline = 150ms, limit = SHARED)]
fn shared_by_threads(seed: usize) -> io::Result<()> {
    let _running = SHARED_GAUGE.start();
    let (millis, fails) = shape(seed, reattempt::attempt().unwrap().number());
    std::thread::sleep(Duration::from_millis(millis));
    if fails {
        return Err(io::ErrorKind::ConnectionReset.into());
    }
    Ok(())
}

#[retry(max = 6, backoff = fixed(5ms), deadline = 150ms, attempt_timeout = 30ms, limit = SHARED)]
async fn shared_by_tasks(seed: usize) -> io::Result<()> {
    let _running = SHARED_GAUGE.start();
    let (millis, fails) = shape(seed, reattempt::attempt().unwrap().number());
    tokio::time::sleep(Duration::from_millis(millis)).await;
    if fails {
        return Err(io::ErrorKind::ConnectionReset.into());
    }
    Ok(())
}

#[test]
fn threads_and_tasks_whose_attempts_are_cut_never_run_more_than_the_limit() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let tasks: Vec<_> = (0..32)
        .map(|task| {
            runtime.spawn(async move {
                for call in 0..5 {
                    let _ = shared_by_tasks(task * 5 + call).await;
                }
            })
        })
        .collect();
    let threads: Vec<_> = (0..8)
        .map(|thread| {
            std::thread::spawn(move || {
                for call in 0..5 {
                    let _ = shared_by_threads(1_000 + thread * 5 + call);
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    // Bounded: each call ends within its deadline and one attempt.
    runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(60), async {
            for task in tasks {
                task.await.unwrap();
            }
        })
        .await
        .expect("every task ends")
    });
    assert!(
        SHARED_GAUGE.peak() <= 3,
        "{} attempts ran at once",
        SHARED_GAUGE.peak()
    );
    assert_eq!((SHARED.in_use(), SHARED.waiting()), (0, 0));
    for (function, calls) in [("shared_by_threads", 40), ("shared_by_tasks", 160)] {
        let stats = reattempt::stats::get(&format!("limit::{function}")).unwrap();
        assert_eq!(stats.calls, calls, "{function}");
        assert_eq!(stats.cancelled, 0, "{function}");
    }
}

static HELD_WHEN_CANCELLED: ConcurrencyLimit = ConcurrencyLimit::new(1);
static HELD_WHEN_CANCELLED_WITH_TIMERS: ConcurrencyLimit = ConcurrencyLimit::new(1);
static CANCELLED_IN_USE: AtomicUsize = AtomicUsize::new(usize::MAX);
static CANCELLED_WITH_TIMERS_IN_USE: AtomicUsize = AtomicUsize::new(usize::MAX);

#[retry(max = 2, limit = HELD_WHEN_CANCELLED)]
async fn cancelled_holding_a_permit() -> io::Result<()> {
    let _dropped = InUseWhenDropped(&HELD_WHEN_CANCELLED, &CANCELLED_IN_USE);
    tokio::time::sleep(Duration::from_secs(10)).await;
    Ok(())
}

#[retry(max = 2, deadline = 60s, attempt_timeout = 30s, limit = HELD_WHEN_CANCELLED_WITH_TIMERS)]
async fn cancelled_holding_a_permit_with_timers() -> io::Result<()> {
    let _dropped = InUseWhenDropped(
        &HELD_WHEN_CANCELLED_WITH_TIMERS,
        &CANCELLED_WITH_TIMERS_IN_USE,
    );
    tokio::time::sleep(Duration::from_secs(10)).await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_call_drops_its_attempt_before_its_permit_is_given_back() {
    let short = Duration::from_millis(10);
    assert!(
        tokio::time::timeout(short, cancelled_holding_a_permit())
            .await
            .is_err()
    );
    assert_eq!(CANCELLED_IN_USE.load(Ordering::SeqCst), 1, "a permit alone");
    assert!(
        tokio::time::timeout(short, cancelled_holding_a_permit_with_timers())
            .await
            .is_err()
    );
    assert_eq!(
        CANCELLED_WITH_TIMERS_IN_USE.load(Ordering::SeqCst),
        1,
        "a permit and timers"
    );
    assert_eq!(HELD_WHEN_CANCELLED.in_use(), 0);
    assert_eq!(HELD_WHEN_CANCELLED_WITH_TIMERS.in_use(), 0);
}

/// Runs `f` on a thread of its own, and fails the test when it does not
/// return in time: a deadlock then fails instead of hanging the run.
fn returns_in_time(what: &str, f: impl FnOnce() + Send + 'static) {
    // Miri runs past any bound on the wall clock, and reports a deadlock
    // itself.
    if cfg!(miri) {
        return f();
    }
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        f();
        done.send(()).unwrap();
    });
    finished
        .recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("{what} deadlocked"));
}

static ONE_FOR_DROPS: ConcurrencyLimit = ConcurrencyLimit::new(1);

#[retry(max = 1, limit = ONE_FOR_DROPS)]
fn release_under_one() -> io::Result<()> {
    Ok(())
}

/// A connection whose destructor makes a retried call under the limit
/// that the attempt holding it holds.
struct ReleasedUnderOne;

impl Drop for ReleasedUnderOne {
    fn drop(&mut self) {
        release_under_one().unwrap();
    }
}

#[retry(max = 1, limit = ONE_FOR_DROPS, sleep = tokio::time::sleep)]
async fn holds_a_connection_under_one() -> io::Result<()> {
    let _connection = ReleasedUnderOne;
    std::future::pending::<()>().await;
    Ok(())
}

#[test]
fn a_cancelled_attempt_whose_destructor_makes_a_call_under_its_own_limit_does_not_deadlock() {
    returns_in_time("the drop of a cancelled attempt", || {
        let mut call = Box::pin(holds_a_connection_under_one());
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        assert!(call.as_mut().poll(&mut cx).is_pending());
        assert_eq!(ONE_FOR_DROPS.in_use(), 1, "the attempt holds the permit");
        drop(call);
    });
    assert_eq!(ONE_FOR_DROPS.in_use(), 0);
}

static TWO_FOR_HEDGES: ConcurrencyLimit = ConcurrencyLimit::new(2);

#[retry(max = 1, limit = TWO_FOR_HEDGES)]
fn release_under_two() -> io::Result<()> {
    Ok(())
}

struct ReleasedUnderTwo;

impl Drop for ReleasedUnderTwo {
    fn drop(&mut self) {
        release_under_two().unwrap();
    }
}

#[retry(max = 3, backoff = none, hedge = 10ms, limit = TWO_FOR_HEDGES)]
async fn hedged_holding_connections() -> io::Result<()> {
    let _connection = ReleasedUnderTwo;
    tokio::time::sleep(Duration::from_secs(3600)).await;
    Ok(())
}

#[test]
fn hedged_attempts_dropped_under_a_full_limit_whose_destructors_make_calls_under_it_do_not_deadlock()
 {
    returns_in_time("the drop of a cancelled hedged call", || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        runtime.block_on(async {
            let call = tokio::spawn(hedged_holding_connections());
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert_eq!(TWO_FOR_HEDGES.in_use(), 2, "the first attempt and a hedge");
            call.abort();
            assert!(call.await.unwrap_err().is_cancelled());
        });
    });
    assert_eq!(TWO_FOR_HEDGES.in_use(), 0);
}
