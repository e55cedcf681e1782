//! Per-call controls: attempt timeouts, server delays, retrying on values,
//! hooks, presets, `reattempt::attempt()` and cancellation. Async tests run on
//! tokio's paused clock and assert exact virtual times.

use std::cell::{Cell, RefCell};
use std::io::{self, ErrorKind};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reattempt::hooks::Context;
use reattempt::{AttemptTimeout, Class, Classification, GiveUp, retry};
use tokio::time::Instant;

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

thread_local! {
    static WAITS: RefCell<Vec<Duration>> = const { RefCell::new(Vec::new()) };
}

fn record(delay: Duration) {
    WAITS.with(|w| w.borrow_mut().push(delay));
}

fn waits() -> Vec<Duration> {
    WAITS.with(|w| w.take())
}

// ---- attempt_timeout ----

#[retry(max = 3, backoff = fixed(1s), attempt_timeout = 2s)]
async fn hangs(calls: &AtomicU32, hang_for: Duration) -> io::Result<u32> {
    let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
    tokio::time::sleep(hang_for).await;
    Ok(n)
}

#[tokio::test(start_paused = true)]
async fn an_attempt_running_past_its_timeout_is_dropped_and_retried() {
    let calls = AtomicU32::new(0);
    let started = Instant::now();
    let error = hangs(&calls, secs(10)).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::TimedOut);
    assert_eq!(error.to_string(), "attempt timed out after 2s");
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    // 2 s per attempt, 1 s between them.
    assert_eq!(started.elapsed(), secs(8));
}

#[tokio::test(start_paused = true)]
async fn an_attempt_within_its_timeout_is_not_touched() {
    let calls = AtomicU32::new(0);
    let started = Instant::now();
    assert_eq!(hangs(&calls, ms(1999)).await.unwrap(), 1);
    assert_eq!(started.elapsed(), ms(1999));
}

#[retry(max = unbounded, deadline = 5s, backoff = fixed(1s), attempt_timeout = 3s)]
async fn hangs_until_the_deadline(calls: &AtomicU32) -> io::Result<()> {
    calls.fetch_add(1, Ordering::SeqCst);
    std::future::pending::<()>().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn the_attempt_timeout_is_shortened_to_the_time_left_before_the_deadline() {
    let calls = AtomicU32::new(0);
    let started = Instant::now();
    let error = hangs_until_the_deadline(&calls).await.unwrap_err();
    // 0-3 s, wait to 4 s, then only 1 s is left: 4-5 s.
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(started.elapsed(), secs(5));
    assert_eq!(error.to_string(), "attempt timed out after 1s");
}

/// An application error that can stand for a timed-out attempt.
#[derive(Debug, PartialEq)]
enum AppError {
    Timeout(Duration),
    Invalid,
}

impl From<AttemptTimeout> for AppError {
    fn from(timeout: AttemptTimeout) -> AppError {
        AppError::Timeout(timeout.limit())
    }
}

// The classifier calls everything logical; a timeout is transient anyway.
#[retry(on = |_| Class::Logical, max = 2, backoff = none, attempt_timeout = 500ms)]
async fn app_call(calls: &AtomicU32) -> Result<(), AppError> {
    if calls.fetch_add(1, Ordering::SeqCst) > 5 {
        return Err(AppError::Invalid);
    }
    std::future::pending::<()>().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn timeouts_reach_custom_error_types_and_are_always_transient() {
    let calls = AtomicU32::new(0);
    assert_eq!(app_call(&calls).await, Err(AppError::Timeout(ms(500))));
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

// ---- Retry-After ----

#[derive(Debug)]
struct Limited(Duration);

fn server_delay(e: &Limited) -> Classification {
    Classification::rate_limited()
        .with_code(429u16)
        .with_retry_after(e.0)
}

#[retry(on = server_delay, max = 3, backoff = fixed(1s), retry_after = ignore, sleep = record)]
fn ignoring(asked: Duration) -> Result<(), Limited> {
    Err(Limited(asked))
}

#[retry(on = server_delay, max = 3, backoff = fixed(1s), max_retry_after = 5s, sleep = record)]
fn honouring(asked: Duration) -> Result<(), Limited> {
    Err(Limited(asked))
}

#[retry(on = server_delay, max = 200, backoff = fixed(1s), max_retry_after = 10s, jitter = full, sleep = record)]
fn honouring_with_jitter(asked: Duration) -> Result<(), Limited> {
    Err(Limited(asked))
}

#[test]
fn retry_after_ignore_uses_the_backoff() {
    ignoring(secs(30)).unwrap_err();
    assert_eq!(waits(), [secs(1), secs(1)]);
}

#[test]
fn a_server_delay_up_to_max_retry_after_is_waited_exactly() {
    honouring(secs(5)).unwrap_err();
    assert_eq!(waits(), [secs(5), secs(5)]);
}

#[test]
fn a_server_delay_shorter_than_the_backoff_waits_the_backoff() {
    // `Retry-After: 0` from an overloaded server: no storm.
    honouring(Duration::ZERO).unwrap_err();
    assert_eq!(waits(), [secs(1), secs(1)]);
    honouring(ms(400)).unwrap_err();
    assert_eq!(waits(), [secs(1), secs(1)]);
}

#[test]
fn a_server_delay_over_max_retry_after_gives_up_at_once() {
    honouring(ms(5001)).unwrap_err();
    assert!(waits().is_empty());
    honouring(Duration::MAX).unwrap_err();
    assert!(waits().is_empty());
}

#[test]
fn jitter_only_lengthens_a_server_delay_and_never_past_max_retry_after() {
    honouring_with_jitter(secs(4)).unwrap_err();
    let delays = waits();
    assert_eq!(delays.len(), 199);
    assert!(
        delays.iter().all(|d| secs(4) <= *d && *d <= secs(5)),
        "{delays:?}"
    );
    assert!(delays.iter().any(|d| *d > secs(4)));
    honouring_with_jitter(secs(10)).unwrap_err();
    assert!(waits().iter().all(|d| *d == secs(10)));
}

#[retry(on = server_delay, max = 5, deadline = 3s, backoff = none)]
async fn server_delay_past_the_deadline(calls: &AtomicU32) -> Result<(), Limited> {
    calls.fetch_add(1, Ordering::SeqCst);
    Err(Limited(secs(2)))
}

#[tokio::test(start_paused = true)]
async fn a_server_delay_past_the_deadline_gives_up_instead_of_sleeping() {
    let calls = AtomicU32::new(0);
    let started = Instant::now();
    server_delay_past_the_deadline(&calls).await.unwrap_err();
    // 0 s, wait 2 s, 2 s: a second 2 s wait would end at 4 s.
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(started.elapsed(), secs(2));
}

// ---- if_result ----

#[derive(Debug, PartialEq)]
struct Job(u32);

#[retry(if_result = |job: &Option<Job>| job.is_none(), max = 4, backoff = fixed(1s))]
async fn next_job(polls: &AtomicU32, ready_on: u32) -> Option<Job> {
    let n = polls.fetch_add(1, Ordering::SeqCst) + 1;
    (n >= ready_on).then_some(Job(n))
}

#[tokio::test(start_paused = true)]
async fn if_result_retries_plain_values_until_they_pass() {
    let polls = AtomicU32::new(0);
    let started = Instant::now();
    assert_eq!(next_job(&polls, 3).await, Some(Job(3)));
    assert_eq!(started.elapsed(), secs(2));
}

#[tokio::test(start_paused = true)]
async fn when_attempts_run_out_the_last_value_is_returned() {
    let polls = AtomicU32::new(0);
    assert_eq!(next_job(&polls, 100).await, None);
    assert_eq!(polls.load(Ordering::SeqCst), 4);
}

fn too_small(n: &u32) -> bool {
    *n < 3
}

#[retry(if_result = too_small, max = 5, backoff = none, sleep = record)]
fn counts(calls: &Cell<u32>, fail_first: bool) -> io::Result<u32> {
    calls.set(calls.get() + 1);
    if fail_first && calls.get() == 1 {
        return Err(ErrorKind::ConnectionReset.into());
    }
    Ok(calls.get())
}

#[test]
fn if_result_on_a_result_judges_the_ok_value_and_errors_are_classified_as_usual() {
    let calls = Cell::new(0);
    assert_eq!(counts(&calls, false).unwrap(), 3);
    let calls = Cell::new(0);
    assert_eq!(counts(&calls, true).unwrap(), 3);
    waits();
}

#[retry(if_result = |ok: &bool| !ok, max = 3, backoff = none, sleep = record)]
fn flag(calls: &Cell<u32>) -> bool {
    calls.set(calls.get() + 1);
    calls.get() == 2
}

#[test]
fn if_result_on_bool() {
    let calls = Cell::new(0);
    assert!(flag(&calls));
    assert_eq!(calls.get(), 2);
    waits();
}

// The closure's argument needs no type: it is the value the function
// returns, which the closure calls a method on.
#[retry(if_result = |job| job.is_none(), max = 3, backoff = none, sleep = record)]
fn next_job_now(polls: &Cell<u32>) -> Option<Job> {
    polls.set(polls.get() + 1);
    (polls.get() == 2).then_some(Job(2))
}

#[retry(if_result = |job| job.is_none(), max = 3, backoff = fixed(1s))]
async fn next_job_soon(polls: &AtomicU32) -> Option<Job> {
    let n = polls.fetch_add(1, Ordering::SeqCst) + 1;
    (n == 2).then_some(Job(n))
}

#[test]
fn an_if_result_closure_needs_no_argument_type() {
    let polls = Cell::new(0);
    assert_eq!(next_job_now(&polls), Some(Job(2)));
    assert_eq!(polls.get(), 2);
    assert_eq!(waits(), [Duration::ZERO]);
}

#[tokio::test(start_paused = true)]
async fn an_async_if_result_closure_needs_no_argument_type() {
    let polls = AtomicU32::new(0);
    let started = Instant::now();
    assert_eq!(next_job_soon(&polls).await, Some(Job(2)));
    assert_eq!(started.elapsed(), secs(1));
}

// ---- hooks ----

#[derive(Debug, PartialEq)]
enum Seen {
    Before(u32),
    After(u32, Option<Class>),
    Retry(u32, Option<Duration>),
    GiveUp(u32, Option<GiveUp>),
}

thread_local! {
    static SEEN: RefCell<Vec<Seen>> = const { RefCell::new(Vec::new()) };
}

fn seen() -> Vec<Seen> {
    SEEN.with(|s| s.take())
}

fn before(ctx: &Context<'_, io::Result<u32>>) {
    assert!(ctx.outcome().is_none());
    SEEN.with(|s| s.borrow_mut().push(Seen::Before(ctx.attempt())));
}

fn after(ctx: &Context<'_, io::Result<u32>>) {
    let class = ctx.class().map(|c| c.class());
    SEEN.with(|s| s.borrow_mut().push(Seen::After(ctx.attempt(), class)));
}

#[retry(
    max = 3,
    backoff = exp(base = 1s),
    sleep = record,
    before = before,
    after = after,
    on_retry = |ctx| SEEN.with(|s| s.borrow_mut().push(Seen::Retry(ctx.attempt(), ctx.delay()))),
    on_give_up = |ctx: &Context<'_, io::Result<u32>>| {
        assert_eq!(ctx.error().map(io::Error::kind), Some(ErrorKind::TimedOut));
        SEEN.with(|s| s.borrow_mut().push(Seen::GiveUp(ctx.attempt(), ctx.gave_up())))
    },
)]
fn hooked(calls: &Cell<u32>, succeed_on: u32) -> io::Result<u32> {
    calls.set(calls.get() + 1);
    if calls.get() < succeed_on {
        return Err(ErrorKind::TimedOut.into());
    }
    Ok(calls.get())
}

#[test]
fn hooks_run_in_order_with_the_attempt_they_concern() {
    hooked(&Cell::new(0), u32::MAX).unwrap_err();
    assert_eq!(
        seen(),
        [
            Seen::Before(1),
            Seen::After(1, Some(Class::Transient)),
            Seen::Retry(1, Some(secs(1))),
            Seen::Before(2),
            Seen::After(2, Some(Class::Transient)),
            Seen::Retry(2, Some(secs(2))),
            Seen::Before(3),
            Seen::After(3, Some(Class::Transient)),
            Seen::GiveUp(3, Some(GiveUp::Exhausted)),
        ]
    );
    hooked(&Cell::new(0), 2).unwrap();
    assert_eq!(
        seen(),
        [
            Seen::Before(1),
            Seen::After(1, Some(Class::Transient)),
            Seen::Retry(1, Some(secs(1))),
            Seen::Before(2),
            Seen::After(2, None),
        ]
    );
    waits();
}

type Log = Arc<Mutex<Vec<String>>>;

#[retry(
    max = 2,
    backoff = fixed(1s),
    after = |ctx| log.lock().unwrap().push(format!("{} after {:?}", ctx.attempt(), ctx.elapsed())),
)]
async fn three_second_attempts(log: &Log) -> io::Result<()> {
    tokio::time::sleep(secs(3)).await;
    Err(ErrorKind::TimedOut.into())
}

#[tokio::test(start_paused = true)]
async fn a_hook_sees_the_time_since_the_call_started() {
    let log = Log::default();
    three_second_attempts(&log).await.unwrap_err();
    // 0-3 s the first attempt, 3-4 s the wait, 4-7 s the second.
    assert_eq!(*log.lock().unwrap(), ["1 after 3s", "2 after 7s"]);
}

#[retry(
    max = 2,
    backoff = fixed(1s),
    before = |ctx| {
        let log = Arc::clone(log);
        let attempt = ctx.attempt();
        async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            log.lock().unwrap().push(format!("before {attempt}"));
        }
    },
    on_retry = |ctx| log.lock().unwrap().push(format!("retry after {:?}", ctx.elapsed())),
)]
async fn async_hooks(log: &Log) -> io::Result<()> {
    log.lock().unwrap().push("attempt".to_owned());
    Err(ErrorKind::TimedOut.into())
}

#[tokio::test(start_paused = true)]
async fn async_hooks_are_awaited_before_the_call_goes_on() {
    let log = Log::default();
    let started = Instant::now();
    async_hooks(&log).await.unwrap_err();
    assert_eq!(
        *log.lock().unwrap(),
        [
            "before 1",
            "attempt",
            "retry after 100ms",
            "before 2",
            "attempt"
        ]
    );
    assert_eq!(started.elapsed(), ms(1200));
}

#[retry(max = 3, backoff = none, sleep = record, on_retry = |_| panic!("hook failed"))]
fn panicking_hook(calls: &Cell<u32>) -> io::Result<()> {
    calls.set(calls.get() + 1);
    Err(ErrorKind::TimedOut.into())
}

#[test]
fn a_panicking_hook_unwinds_out_of_the_call_and_no_attempt_follows() {
    let calls = Cell::new(0);
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| panicking_hook(&calls)));
    let message = unwound.unwrap_err();
    assert_eq!(message.downcast_ref::<&str>(), Some(&"hook failed"));
    assert_eq!(calls.get(), 1);
    assert!(waits().is_empty());
}

// ---- sleep on another executor ----

#[retry(max = 3, backoff = exp(base = 1s), sleep = |delay| { record(delay); std::future::ready(()) })]
async fn without_tokio(calls: &Cell<u32>) -> io::Result<u32> {
    calls.set(calls.get() + 1);
    if calls.get() < 3 {
        return Err(ErrorKind::ConnectionReset.into());
    }
    Ok(calls.get())
}

/// Polls a future on this thread until it is ready: an executor with no
/// reactor and no timer.
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    for _ in 0..1_000 {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
    panic!("the future never finished");
}

#[test]
fn an_async_function_runs_on_a_plain_executor_with_a_custom_sleeper() {
    let calls = Cell::new(0);
    assert_eq!(block_on(without_tokio(&calls)).unwrap(), 3);
    assert_eq!(waits(), [secs(1), secs(2)]);
}

// ---- test mode ----

#[retry(max = 4, backoff = exp(base = 1s))]
fn slow_to_give_up(calls: &Cell<u32>) -> io::Result<()> {
    calls.set(calls.get() + 1);
    Err(ErrorKind::TimedOut.into())
}

#[retry(max = unbounded, deadline = 10s, backoff = fixed(1s))]
fn until_the_deadline(calls: &Cell<u32>) -> io::Result<()> {
    calls.set(calls.get() + 1);
    Err(ErrorKind::TimedOut.into())
}

#[retry(max = 3, backoff = fixed(1h))]
async fn slow_async(calls: &AtomicU32) -> io::Result<()> {
    calls.fetch_add(1, Ordering::SeqCst);
    Err(ErrorKind::TimedOut.into())
}

#[test]
fn test_mode_skips_waits_but_keeps_attempts_and_the_deadline() {
    let waits = reattempt::testing::instant();
    let started = std::time::Instant::now();
    let calls = Cell::new(0);
    slow_to_give_up(&calls).unwrap_err();
    assert_eq!(calls.get(), 4);
    assert_eq!(waits.delays(), [secs(1), secs(2), secs(4)]);

    let calls = Cell::new(0);
    until_the_deadline(&calls).unwrap_err();
    // Attempts at virtual 0..=9 s; the wait to 10 s reaches the deadline.
    assert_eq!(calls.get(), 10);
    assert_eq!(waits.retries(), 3 + 9);
    assert_eq!(waits.total(), secs(7 + 9));

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let calls = AtomicU32::new(0);
    runtime.block_on(slow_async(&calls)).unwrap_err();
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert!(started.elapsed() < secs(60), "no wait of an hour happened");
    drop(waits);
}

// A deadline, so that the call is timed whatever the features: the time
// it reports is the point.
#[retry(max = 3, backoff = fixed(10s), deadline = 1h, name = "per_call::late_under_test_mode")]
fn late_under_test_mode(calls: &Cell<u32>) -> io::Result<u32> {
    calls.set(calls.get() + 1);
    if calls.get() < 3 {
        Err(ErrorKind::TimedOut.into())
    } else {
        Ok(calls.get())
    }
}

#[test]
fn test_mode_counts_the_waits_it_skips_in_the_time_of_the_statistics() {
    let waits = reattempt::testing::instant();
    assert_eq!(late_under_test_mode(&Cell::new(0)).unwrap(), 3);
    drop(waits);
    let stats = reattempt::stats::get("per_call::late_under_test_mode").unwrap();
    assert_eq!(stats.successes_after_retries, 1);
    // The two waits of 10 s it skipped, and the attempts' own real time.
    assert!(
        stats.time >= secs(20) && stats.time < secs(80),
        "{:?}",
        stats.time
    );
}

// ---- presets ----

#[retry(preset = network, sleep = record)]
fn network(calls: &Cell<u32>) -> io::Result<()> {
    calls.set(calls.get() + 1);
    Err(ErrorKind::ConnectionReset.into())
}

/// An HTTP status as an error, classified by the HTTP table.
#[derive(Debug)]
struct Status(u16);

impl reattempt::Classified for Status {
    fn classification(&self) -> Classification {
        reattempt::http::status(self.0)
    }
}

#[retry(preset = external_api, sleep = record)]
fn external(calls: &Cell<u32>, status: u16) -> Result<(), Status> {
    calls.set(calls.get() + 1);
    Err(Status(status))
}

#[retry(preset = internal, sleep = record)]
fn internal(calls: &Cell<u32>) -> io::Result<()> {
    calls.set(calls.get() + 1);
    Err(ErrorKind::TimedOut.into())
}

#[retry(preset = network, max = 2, jitter = none, sleep = record)]
fn network_overridden(calls: &Cell<u32>) -> io::Result<()> {
    calls.set(calls.get() + 1);
    Err(ErrorKind::ConnectionReset.into())
}

#[test]
fn presets_set_their_defaults_and_explicit_arguments_win() {
    let calls = Cell::new(0);
    network(&calls).unwrap_err();
    assert_eq!(calls.get(), 5);
    let delays = waits();
    for (delay, plain) in delays.iter().zip([1, 2, 4, 8]) {
        assert!(
            secs(plain) <= *delay && *delay <= secs(plain) + secs(plain) / 4,
            "{delays:?}"
        );
    }

    let calls = Cell::new(0);
    internal(&calls).unwrap_err();
    assert_eq!(calls.get(), 3);
    assert_eq!(waits(), [ms(50), ms(100)]);

    let calls = Cell::new(0);
    network_overridden(&calls).unwrap_err();
    assert_eq!(calls.get(), 2);
    assert_eq!(waits(), [secs(1)]);
}

#[test]
fn external_api_retries_5xx_408_and_429_only_with_full_jitter() {
    for (status, expected) in [
        (503, 3),
        (500, 3),
        (408, 3),
        (429, 3),
        (421, 1),
        (425, 1),
        (404, 1),
        (400, 1),
    ] {
        let calls = Cell::new(0);
        external(&calls, status).unwrap_err();
        assert_eq!(calls.get(), expected, "{status}");
        let delays = waits();
        assert!(
            delays.iter().zip([2, 4]).all(|(d, cap)| *d <= secs(cap)),
            "{delays:?}"
        );
    }
}

// ---- reattempt::attempt() ----

#[retry(max = 3, backoff = none, sleep = record)]
fn sees_itself(seen: &mut Vec<reattempt::Attempt>) -> io::Result<()> {
    seen.push(reattempt::attempt().expect("inside a retried call"));
    if seen.len() < 3 {
        return Err(ErrorKind::TimedOut.into());
    }
    Ok(())
}

#[test]
fn the_body_sees_its_attempt_and_one_call_id() {
    assert!(reattempt::attempt().is_none());
    let mut seen = Vec::new();
    sees_itself(&mut seen).unwrap();
    assert_eq!(
        seen.iter().map(|a| a.number()).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert!(seen.iter().all(|a| a.max() == Some(3)));
    assert!(seen[2].is_last());
    assert!(seen.iter().all(|a| a.call_id() == seen[0].call_id()));
    let mut again = Vec::new();
    sees_itself(&mut again).unwrap();
    assert_ne!(
        again[0].call_id(),
        seen[0].call_id(),
        "a new call, a new id"
    );
    assert!(reattempt::attempt().is_none());
    waits();
}

/// Fails its first attempt; records what `attempt()` says, itself and
/// after the inner call it makes.
#[retry(max = 3, backoff = none)]
fn outer_of_two(seen: &RefCell<Vec<(&'static str, u32, Option<u32>)>>) -> io::Result<()> {
    let mine = reattempt::attempt().expect("inside the outer call");
    seen.borrow_mut().push(("outer", mine.number(), mine.max()));
    inner_of_two(seen)?;
    let after = reattempt::attempt().expect("still inside the outer call");
    assert_eq!(after, mine, "the inner call gave the outer's frame back");
    if mine.number() == 1 {
        return Err(ErrorKind::TimedOut.into());
    }
    Ok(())
}

#[retry(max = 2, backoff = none)]
fn inner_of_two(seen: &RefCell<Vec<(&'static str, u32, Option<u32>)>>) -> io::Result<()> {
    let mine = reattempt::attempt().expect("inside the inner call");
    seen.borrow_mut().push(("inner", mine.number(), mine.max()));
    if mine.number() == 1 {
        return Err(ErrorKind::ConnectionReset.into());
    }
    Ok(())
}

#[test]
fn nested_calls_each_see_their_own_attempt() {
    let seen = RefCell::new(Vec::new());
    outer_of_two(&seen).unwrap();
    assert_eq!(
        seen.into_inner(),
        [
            ("outer", 1, Some(3)),
            ("inner", 1, Some(2)),
            ("inner", 2, Some(2)),
            ("outer", 2, Some(3)),
            ("inner", 1, Some(2)),
            ("inner", 2, Some(2)),
        ]
    );
    assert!(reattempt::attempt().is_none());
}

#[retry(max = 2, backoff = fixed(1ms))]
async fn sees_itself_across_awaits(ids: &Mutex<Vec<(u32, String)>>) -> io::Result<()> {
    tokio::task::yield_now().await;
    let attempt = reattempt::attempt().expect("inside a retried call");
    tokio::task::yield_now().await;
    let again = reattempt::attempt().expect("still inside");
    assert_eq!(attempt, again);
    ids.lock()
        .unwrap()
        .push((attempt.number(), attempt.call_id().to_string()));
    Err(ErrorKind::TimedOut.into())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_bodies_see_their_attempt_on_any_thread() {
    let ids = Mutex::new(Vec::new());
    sees_itself_across_awaits(&ids).await.unwrap_err();
    let ids = ids.into_inner().unwrap();
    assert_eq!(ids.len(), 2);
    assert_eq!((ids[0].0, ids[1].0), (1, 2));
    assert_eq!(ids[0].1, ids[1].1);
}

// ---- cancellation ----

struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[retry(max = 5, backoff = fixed(10s))]
async fn long_call(calls: Arc<AtomicU32>, dropped: Arc<AtomicBool>) -> io::Result<()> {
    let _flag = DropFlag(Arc::clone(&dropped));
    calls.fetch_add(1, Ordering::SeqCst);
    Err(ErrorKind::TimedOut.into())
}

#[tokio::test(start_paused = true)]
async fn aborting_the_task_while_it_waits_leaves_nothing_running() {
    let calls = Arc::new(AtomicU32::new(0));
    let dropped = Arc::new(AtomicBool::new(false));
    let task = tokio::spawn(long_call(Arc::clone(&calls), Arc::clone(&dropped)));
    tokio::time::sleep(secs(15)).await;
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    assert!(dropped.load(Ordering::SeqCst));
    tokio::time::sleep(secs(100)).await;
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "no attempt after the abort"
    );
    assert_eq!(
        Arc::strong_count(&calls),
        1,
        "the call's arguments are freed"
    );
}
