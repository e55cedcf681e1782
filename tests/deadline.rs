//! A wait that overran the deadline (a timer that fired late on a loaded
//! machine): the attempt after it does not start. Where the error type can
//! stand for a timeout the call ends with one, else with the last attempt's
//! error; either way for the reason `deadline`, with the code of an attempt
//! that never ran. Sync and async, with the first attempt run before the
//! call is built and without.

mod common;

use std::cell::Cell;
use std::io;
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use reattempt::dynamic::DynamicPolicy;
use reattempt::{Classification, RetryBudget, retry};

/// How much later than asked the sleepers below end a wait: from the
/// first wait, which starts near 0 ms and is asked for 50 ms, past the
/// deadline of 200 ms.
const LATE: Duration = Duration::from_millis(250);

/// A sync sleeper whose waits end `LATE` late.
fn late(delay: Duration) {
    std::thread::sleep(delay + LATE);
}

/// An async sleeper whose waits end `LATE` late.
fn late_timer(delay: Duration) -> tokio::time::Sleep {
    tokio::time::sleep(delay + LATE)
}

fn timed_out(error: &io::Error) -> bool {
    error
        .get_ref()
        .is_some_and(|inner| inner.is::<reattempt::AttemptTimeout>())
}

/// The stats of `function`: one attempt, and a give-up at the deadline.
fn one_attempt_then_the_deadline(function: &str) {
    let stats = reattempt::stats::get(function).unwrap();
    assert_eq!(
        (stats.give_ups.deadline, stats.attempts),
        (1, 1),
        "{function}"
    );
}

/// An error that says which attempt made it and counts its drops. It is
/// `Send`, so an async function's future may keep it across a wait.
#[derive(Debug)]
struct Refused<'a> {
    attempt: u32,
    drops: &'a AtomicU32,
}

impl Drop for Refused<'_> {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::Relaxed);
    }
}

impl std::fmt::Display for Refused<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "refused at attempt {}", self.attempt)
    }
}

impl reattempt::Classified for Refused<'_> {
    fn classification(&self) -> Classification {
        Classification::transient()
    }
}

/// The body of the functions below: counts its calls, and fails.
fn refuse<'a>(calls: &Cell<u32>, drops: &'a AtomicU32) -> Result<(), Refused<'a>> {
    calls.set(calls.get() + 1);
    Err(Refused {
        attempt: calls.get(),
        drops,
    })
}

/// The call ended with the first attempt's error, the only one made, which
/// was dropped once, when the caller dropped it.
fn ended_with_the_first_error(outcome: Result<(), Refused<'_>>, calls: &Cell<u32>) {
    assert_eq!(calls.get(), 1, "an attempt started after the deadline");
    let error = outcome.unwrap_err();
    assert_eq!(error.attempt, 1);
    let drops = error.drops;
    assert_eq!(
        drops.load(Ordering::Relaxed),
        0,
        "the error returned was dropped before"
    );
    drop(error);
    assert_eq!(drops.load(Ordering::Relaxed), 1);
}

/// A token for each first attempt, none in reserve: a retry's is the one
/// its first attempt deposited.
static SYNC_TOKENS: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600));

#[retry(max = 5, backoff = fixed(50ms), deadline = 200ms, sleep = late, budget = SYNC_TOKENS)]
fn sync_late(calls: &Cell<u32>) -> io::Result<()> {
    calls.set(calls.get() + 1);
    Err(io::ErrorKind::ConnectionRefused.into())
}

#[test]
fn a_sync_attempt_after_a_wait_that_overran_does_not_start() {
    let calls = Cell::new(0);
    let error = sync_late(&calls).unwrap_err();
    assert_eq!(calls.get(), 1, "an attempt started after the deadline");
    assert!(timed_out(&error), "{error:?}");
    one_attempt_then_the_deadline("deadline::sync_late");
    assert_eq!(
        SYNC_TOKENS.available(),
        1.0,
        "the token of the retry that never ran is given back"
    );
}

#[retry(max = 5, backoff = fixed(50ms), deadline = 200ms, sleep = late)]
fn sync_late_refused<'a>(calls: &Cell<u32>, drops: &'a AtomicU32) -> Result<(), Refused<'a>> {
    refuse(calls, drops)
}

#[test]
fn without_a_timeout_error_a_sync_call_ends_with_the_last_error() {
    let (calls, drops) = (Cell::new(0), AtomicU32::new(0));
    ended_with_the_first_error(sync_late_refused(&calls, &drops), &calls);
    one_attempt_then_the_deadline("deadline::sync_late_refused");
}

#[retry(max = 5, backoff = fixed(50ms), deadline = 200ms, sleep = late)]
fn sync_late_logged<'a>(calls: &Cell<u32>, drops: &'a AtomicU32) -> Result<(), Refused<'a>> {
    refuse(calls, drops)
}

/// With a subscriber, the whole call runs in the core's loop, with spans.
#[test]
fn a_sync_call_with_spans_gives_up_before_the_late_attempt() {
    let (calls, drops) = (Cell::new(0), AtomicU32::new(0));
    let mut outcome = None;
    let (events, _) = common::capture_logs(|| outcome = Some(sync_late_logged(&calls, &drops)));
    common::the_give_up_for_an_attempt_that_never_ran(&events);
    ended_with_the_first_error(outcome.unwrap(), &calls);
}

/// A closure classifier keeps the retry loop in the function.
#[retry(on = |_: &io::Error| true, max = 5, backoff = fixed(50ms), deadline = 200ms, sleep = late)]
fn sync_late_in_the_function(calls: &Cell<u32>) -> io::Result<()> {
    calls.set(calls.get() + 1);
    Err(io::ErrorKind::ConnectionRefused.into())
}

#[retry(on = |_: &Refused| true, max = 5, backoff = fixed(50ms), deadline = 200ms, sleep = late)]
fn sync_late_refused_in_the_function<'a>(
    calls: &Cell<u32>,
    drops: &'a AtomicU32,
) -> Result<(), Refused<'a>> {
    refuse(calls, drops)
}

#[test]
fn a_sync_loop_in_the_function_starts_no_attempt_after_a_late_wait() {
    let calls = Cell::new(0);
    let mut outcome = None;
    let (events, _) = common::capture_logs(|| outcome = Some(sync_late_in_the_function(&calls)));
    common::the_give_up_for_an_attempt_that_never_ran(&events);
    assert_eq!(calls.get(), 1, "an attempt started after the deadline");
    let error = outcome.unwrap().unwrap_err();
    assert!(timed_out(&error), "{error:?}");
    one_attempt_then_the_deadline("deadline::sync_late_in_the_function");

    let (calls, drops) = (Cell::new(0), AtomicU32::new(0));
    ended_with_the_first_error(sync_late_refused_in_the_function(&calls, &drops), &calls);
    one_attempt_then_the_deadline("deadline::sync_late_refused_in_the_function");
}

/// An error that is not `Send`: a sync call keeps it across its wait all
/// the same.
#[derive(Debug)]
struct Shared(Rc<u32>);

#[retry(on = |_: &Shared| true, max = 5, backoff = fixed(50ms), deadline = 200ms, sleep = late)]
fn sync_late_not_send(calls: &Cell<u32>) -> Result<(), Shared> {
    calls.set(calls.get() + 1);
    Err(Shared(Rc::new(calls.get())))
}

#[test]
fn a_sync_error_that_is_not_send_stands_for_the_late_attempt() {
    let calls = Cell::new(0);
    let error = sync_late_not_send(&calls).unwrap_err();
    assert_eq!(calls.get(), 1, "an attempt started after the deadline");
    assert_eq!((*error.0, Rc::strong_count(&error.0)), (1, 1));
    one_attempt_then_the_deadline("deadline::sync_late_not_send");
}

/// As [`SYNC_TOKENS`], for the async call.
static ASYNC_TOKENS: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600));

#[retry(max = 5, backoff = fixed(50ms), deadline = 200ms, sleep = late_timer, budget = ASYNC_TOKENS)]
async fn async_late_refused<'a>(
    calls: &Cell<u32>,
    drops: &'a AtomicU32,
) -> Result<(), Refused<'a>> {
    refuse(calls, drops)
}

#[tokio::test(start_paused = true)]
async fn without_a_timeout_error_an_async_call_ends_with_the_last_error() {
    let (calls, drops) = (Cell::new(0), AtomicU32::new(0));
    let started = tokio::time::Instant::now();
    let outcome = async_late_refused(&calls, &drops).await;
    // The wait from 0 ms was to end at 50 ms; it ended at 300 ms.
    assert_eq!(started.elapsed(), Duration::from_millis(300));
    ended_with_the_first_error(outcome, &calls);
    one_attempt_then_the_deadline("deadline::async_late_refused");
    assert_eq!(
        ASYNC_TOKENS.available(),
        1.0,
        "the token of the retry that never ran is given back"
    );
}

fn is_send<T: Send>(value: T) -> T {
    value
}

#[retry(on = |_: &Shared| true, max = 5, backoff = fixed(50ms), deadline = 200ms, sleep = late_timer)]
async fn async_late_not_send(calls: &AtomicU32) -> Result<(), Shared> {
    Err(Shared(Rc::new(calls.fetch_add(1, Ordering::Relaxed) + 1)))
}

/// An error that is not `Send` is not kept across an async function's
/// waits, so that its future stays `Send`.
#[tokio::test(start_paused = true)]
async fn an_async_call_whose_error_is_not_send_stays_send() {
    let calls = AtomicU32::new(0);
    let error = is_send(async_late_not_send(&calls)).await.unwrap_err();
    assert_eq!(Rc::strong_count(&error.0), 1);
    // Nothing kept stands for the retry after the wait that ran late: it
    // starts, and fails, past the deadline.
    assert_eq!((*error.0, calls.load(Ordering::Relaxed)), (2, 2));
}

/// An outcome that borrows an argument: rustc checks such futures for
/// `Send` with their lifetimes erased.
#[retry(max = 2, backoff = none, deadline = 300ms)]
async fn echoes_or_refuses<'a>(
    text: &'a str,
    drops: &'a AtomicU32,
) -> Result<&'a str, Refused<'a>> {
    if text.is_empty() {
        return Err(Refused { attempt: 1, drops });
    }
    Ok(text)
}

#[tokio::test]
async fn an_async_call_with_a_deadline_whose_outcome_borrows_is_send() {
    let drops = AtomicU32::new(0);
    let text = String::from("echo");
    assert_eq!(
        is_send(echoes_or_refuses(&text, &drops)).await.unwrap(),
        "echo"
    );
}

/// Fails at its first attempt; a later one returns how many errors were
/// dropped by then.
fn drops_seen<'a>(calls: &Cell<u32>, drops: &'a AtomicU32) -> Result<u32, Refused<'a>> {
    calls.set(calls.get() + 1);
    if calls.get() == 1 {
        return Err(Refused { attempt: 1, drops });
    }
    Ok(drops.load(Ordering::Relaxed))
}

#[retry(max = 2, backoff = fixed(1ms), deadline = 10s)]
fn sync_drops_seen<'a>(calls: &Cell<u32>, drops: &'a AtomicU32) -> Result<u32, Refused<'a>> {
    drops_seen(calls, drops)
}

#[retry(on = |_: &Refused| true, max = 2, backoff = fixed(1ms), deadline = 10s)]
fn sync_drops_seen_in_the_function<'a>(
    calls: &Cell<u32>,
    drops: &'a AtomicU32,
) -> Result<u32, Refused<'a>> {
    drops_seen(calls, drops)
}

#[retry(max = 2, backoff = fixed(1ms), deadline = 10s)]
async fn async_drops_seen<'a>(calls: &Cell<u32>, drops: &'a AtomicU32) -> Result<u32, Refused<'a>> {
    drops_seen(calls, drops)
}

/// The last error is kept across a wait only to stand for an attempt that
/// does not start: one that does runs after it is dropped.
#[tokio::test(start_paused = true)]
async fn a_retry_in_time_runs_after_the_last_error_is_dropped() {
    let (calls, drops) = (Cell::new(0), AtomicU32::new(0));
    let seen = sync_drops_seen(&calls, &drops).unwrap();
    assert_eq!((seen, calls.get()), (1, 2), "sync");
    let (calls, drops) = (Cell::new(0), AtomicU32::new(0));
    let seen = sync_drops_seen_in_the_function(&calls, &drops).unwrap();
    assert_eq!(
        (seen, calls.get()),
        (1, 2),
        "sync, its loop in the function"
    );
    let (calls, drops) = (Cell::new(0), AtomicU32::new(0));
    let seen = async_drops_seen(&calls, &drops).await.unwrap();
    assert_eq!((seen, calls.get()), (1, 2), "async");
}

/// The deadline a dynamic policy sets, read as each call starts.
fn configured() -> DynamicPolicy {
    DynamicPolicy::new().deadline(Duration::from_millis(200))
}

#[retry(max = 5, backoff = fixed(50ms), sleep = late, policy = configured())]
fn sync_late_configured<'a>(calls: &Cell<u32>, drops: &'a AtomicU32) -> Result<(), Refused<'a>> {
    refuse(calls, drops)
}

#[retry(max = 5, backoff = fixed(50ms), sleep = late_timer, policy = configured())]
async fn async_late_configured<'a>(
    calls: &Cell<u32>,
    drops: &'a AtomicU32,
) -> Result<(), Refused<'a>> {
    refuse(calls, drops)
}

#[tokio::test(start_paused = true)]
async fn a_dynamic_policy_s_deadline_starts_no_attempt_after_a_late_wait() {
    let (calls, drops) = (Cell::new(0), AtomicU32::new(0));
    ended_with_the_first_error(sync_late_configured(&calls, &drops), &calls);
    one_attempt_then_the_deadline("deadline::sync_late_configured");

    let (calls, drops) = (Cell::new(0), AtomicU32::new(0));
    ended_with_the_first_error(async_late_configured(&calls, &drops).await, &calls);
    one_attempt_then_the_deadline("deadline::async_late_configured");
}

#[retry(max = 5, backoff = fixed(50ms), deadline = 200ms, sleep = late_timer)]
async fn async_late_cancelled<'a>(
    calls: &Cell<u32>,
    drops: &'a AtomicU32,
) -> Result<(), Refused<'a>> {
    refuse(calls, drops)
}

/// A call dropped during its wait drops the error it kept across it.
#[tokio::test(start_paused = true)]
async fn a_call_cancelled_during_its_wait_drops_the_error_it_kept() {
    let (calls, drops) = (Cell::new(0), AtomicU32::new(0));
    let cut = tokio::time::timeout(
        Duration::from_millis(10),
        async_late_cancelled(&calls, &drops),
    )
    .await;
    assert!(cut.is_err(), "the call ended within its first wait");
    assert_eq!(calls.get(), 1);
    assert_eq!(drops.load(Ordering::Relaxed), 1, "the kept error leaked");
}

/// A sleeper that panics.
fn panicking(_: Duration) {
    panic!("the sleeper panicked");
}

#[retry(max = 5, backoff = fixed(50ms), deadline = 200ms, sleep = panicking)]
fn sync_kept_when_the_sleeper_panics<'a>(
    calls: &Cell<u32>,
    drops: &'a AtomicU32,
) -> Result<(), Refused<'a>> {
    refuse(calls, drops)
}

#[retry(on = |_: &Refused| true, max = 5, backoff = fixed(50ms), deadline = 200ms, sleep = panicking)]
fn sync_kept_in_the_function_when_the_sleeper_panics<'a>(
    calls: &Cell<u32>,
    drops: &'a AtomicU32,
) -> Result<(), Refused<'a>> {
    refuse(calls, drops)
}

/// The error kept across a sync wait is dropped when the sleeper unwinds.
#[test]
fn a_sleeper_that_panics_drops_the_error_kept_across_its_wait() {
    type Shape = for<'a> fn(&Cell<u32>, &'a AtomicU32) -> Result<(), Refused<'a>>;
    let shapes: [(&str, Shape); 2] = [
        ("sync", sync_kept_when_the_sleeper_panics),
        (
            "sync, its loop in the function",
            sync_kept_in_the_function_when_the_sleeper_panics,
        ),
    ];
    for (shape, call) in shapes {
        let (calls, drops) = (Cell::new(0), AtomicU32::new(0));
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = call(&calls, &drops);
        }));
        assert!(unwound.is_err(), "{shape}");
        assert_eq!(calls.get(), 1, "{shape}");
        assert_eq!(
            drops.load(Ordering::Relaxed),
            1,
            "{shape}: the kept error leaked"
        );
    }
}

/// One call per thread of [`threads_late`], every one late after its wait.
const THREADS: u32 = 8;

static SHARED_TOKENS: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600));

#[retry(max = 5, backoff = fixed(50ms), deadline = 200ms, sleep = late, budget = SHARED_TOKENS)]
fn threads_late(calls: &AtomicU32) -> io::Result<()> {
    calls.fetch_add(1, Ordering::Relaxed);
    Err(io::ErrorKind::ConnectionReset.into())
}

/// Calls on many threads at once, each kept from its late retry: every
/// give-up, attempt and token is counted once.
#[test]
fn calls_on_many_threads_each_end_at_the_deadline_and_give_back_their_tokens() {
    let calls = AtomicU32::new(0);
    std::thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(|| {
                let error = threads_late(&calls).unwrap_err();
                assert!(timed_out(&error), "{error:?}");
            });
        }
    });
    assert_eq!(calls.load(Ordering::Relaxed), THREADS);
    let stats = reattempt::stats::get("deadline::threads_late").unwrap();
    assert_eq!(
        (stats.give_ups.deadline, stats.attempts),
        (u64::from(THREADS), u64::from(THREADS))
    );
    assert_eq!(SHARED_TOKENS.available(), f64::from(THREADS));
}

thread_local! {
    /// What the hooks of [`hooked_late`] saw on this thread: the hook, the
    /// attempt, and the code of the attempt's classification.
    static SEEN: std::cell::RefCell<Vec<(&'static str, u32, Option<String>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

fn seen_before(ctx: &reattempt::hooks::Context<'_, io::Result<()>>) {
    SEEN.with(|seen| seen.borrow_mut().push(("before", ctx.attempt(), None)));
}

fn seen_after(ctx: &reattempt::hooks::Context<'_, io::Result<()>>) {
    let code = ctx
        .class()
        .and_then(|class| class.code().map(str::to_owned));
    SEEN.with(|seen| seen.borrow_mut().push(("after", ctx.attempt(), code)));
}

#[retry(max = 5, backoff = fixed(50ms), deadline = 200ms, sleep = late, before = seen_before, after = seen_after)]
fn hooked_late(calls: &Cell<u32>) -> io::Result<()> {
    calls.set(calls.get() + 1);
    Err(io::ErrorKind::ConnectionRefused.into())
}

/// `before` runs ahead of the attempt that the deadline then keeps from
/// starting, and `after` sees what stands for it, classified `not_started`.
#[test]
fn the_hooks_see_the_attempt_that_never_started() {
    let calls = Cell::new(0);
    hooked_late(&calls).unwrap_err();
    assert_eq!(calls.get(), 1);
    let seen = SEEN.with(|seen| seen.take());
    assert_eq!(
        seen,
        [
            ("before", 1, None),
            ("after", 1, Some("ConnectionRefused".to_owned())),
            ("before", 2, None),
            ("after", 2, Some("not_started".to_owned())),
        ]
    );
}

thread_local! {
    /// The alerts [`alerted_late`] raised on this thread.
    static ALERTS: std::cell::RefCell<Vec<reattempt::Alert>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn alert(alert: &reattempt::Alert) {
    ALERTS.with(|alerts| alerts.borrow_mut().push(alert.clone()));
}

#[retry(max = 5, backoff = fixed(50ms), deadline = 200ms, sleep = late, alert_after = 2, on_alert = alert)]
fn alerted_late(calls: &Cell<u32>) -> io::Result<()> {
    calls.set(calls.get() + 1);
    Err(io::ErrorKind::ConnectionRefused.into())
}

/// An attempt that never ran says nothing of the backend: it neither ends
/// nor extends a streak of the same failure. Two calls, each refused once
/// and then kept from its late retry, make two refusals in a row.
#[test]
fn an_attempt_that_never_ran_does_not_break_a_streak_of_failures() {
    let calls = Cell::new(0);
    alerted_late(&calls).unwrap_err();
    assert!(ALERTS.with(|alerts| alerts.borrow().is_empty()));
    alerted_late(&calls).unwrap_err();
    assert_eq!(calls.get(), 2);
    let alerts = ALERTS.with(|alerts| alerts.take());
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    assert_eq!(
        (alerts[0].code.as_deref(), alerts[0].count),
        (Some("ConnectionRefused"), 2)
    );
}
