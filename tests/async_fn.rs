//! Behaviour of `#[retry]` on async functions, on tokio's paused clock:
//! every elapsed time below is exact virtual time.

use std::io::{self, ErrorKind};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use reattempt::{Class, Classification, retry};
use tokio::time::Instant;

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// Counts calls; fails with `kind` until the call numbered `succeed_on`.
struct Flaky {
    calls: AtomicU32,
    succeed_on: u32,
    kind: ErrorKind,
}

impl Flaky {
    fn new(succeed_on: u32, kind: ErrorKind) -> Flaky {
        Flaky {
            calls: AtomicU32::new(0),
            succeed_on,
            kind,
        }
    }

    fn always(kind: ErrorKind) -> Flaky {
        Flaky::new(u32::MAX, kind)
    }

    fn calls(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }

    fn hit(&self) -> io::Result<u32> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if n >= self.succeed_on {
            Ok(n)
        } else {
            Err(self.kind.into())
        }
    }
}

#[retry(max = 4, backoff = exp(base = 1s, factor = 2))]
async fn exp_four(flaky: &Flaky) -> io::Result<u32> {
    tokio::task::yield_now().await;
    flaky.hit()
}

#[tokio::test(start_paused = true)]
async fn exponential_four_attempts_take_exactly_seven_seconds() {
    let flaky = Flaky::always(ErrorKind::ConnectionRefused);
    let started = Instant::now();
    let error = exp_four(&flaky).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::ConnectionRefused);
    assert_eq!(flaky.calls(), 4);
    assert_eq!(started.elapsed(), secs(7));
}

#[tokio::test(start_paused = true)]
async fn success_after_two_failures_waits_one_then_two_seconds() {
    let flaky = Flaky::new(3, ErrorKind::TimedOut);
    let started = Instant::now();
    assert_eq!(exp_four(&flaky).await.unwrap(), 3);
    assert_eq!(started.elapsed(), secs(3));
}

#[tokio::test(start_paused = true)]
async fn a_permanent_error_returns_at_once() {
    let flaky = Flaky::always(ErrorKind::PermissionDenied);
    let started = Instant::now();
    let error = exp_four(&flaky).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied);
    assert_eq!(flaky.calls(), 1);
    assert_eq!(started.elapsed(), Duration::ZERO);
}

#[retry(max = unbounded, deadline = 5s, backoff = fixed(1s))]
async fn until_deadline(flaky: &Flaky) -> io::Result<u32> {
    flaky.hit()
}

#[tokio::test(start_paused = true)]
async fn no_attempt_starts_at_or_past_the_deadline() {
    let flaky = Flaky::always(ErrorKind::TimedOut);
    let started = Instant::now();
    until_deadline(&flaky).await.unwrap_err();
    // Attempts at 0, 1, 2, 3 and 4 s; the wait to 5 s would reach the deadline.
    assert_eq!(flaky.calls(), 5);
    assert_eq!(started.elapsed(), secs(4));
}

#[retry(max = unbounded, deadline = 10s, backoff = fixed(1s))]
async fn slow_attempts(flaky: &Flaky) -> io::Result<u32> {
    tokio::time::sleep(secs(2)).await;
    flaky.hit()
}

#[tokio::test(start_paused = true)]
async fn the_deadline_counts_the_time_attempts_take_and_cuts_the_last() {
    let flaky = Flaky::always(ErrorKind::TimedOut);
    let started = Instant::now();
    slow_attempts(&flaky).await.unwrap_err();
    // Attempts run 0-2, 3-5 and 6-8 s; the one that starts at 9 s is cut at
    // the deadline, before it reaches the body's end.
    assert_eq!(flaky.calls(), 3);
    assert_eq!(started.elapsed(), secs(10));
}

#[retry(max = 10, deadline = 10s, backoff = fixed(1s), on_give_up = |ctx| assert_eq!(ctx.gave_up(), Some(reattempt::GiveUp::Deadline)))]
async fn three_second_attempts(flaky: &Flaky) -> io::Result<u32> {
    tokio::time::sleep(secs(3)).await;
    flaky.hit()
}

#[tokio::test(start_paused = true)]
async fn the_deadline_bounds_the_whole_async_call() {
    let flaky = Flaky::always(ErrorKind::TimedOut);
    let started = Instant::now();
    let error = three_second_attempts(&flaky).await.unwrap_err();
    // 0-3, 4-7, then the attempt from 8 s is cut at 10 s: the caller gets
    // the timeout as its own error type, and the call ends at the deadline.
    assert_eq!(started.elapsed(), secs(10));
    assert_eq!(flaky.calls(), 2);
    assert_eq!(error.kind(), ErrorKind::TimedOut);
    let stats = reattempt::stats::get("async_fn::three_second_attempts").unwrap();
    assert_eq!(stats.give_ups.deadline, 1);
}

/// An error type that cannot stand for a timeout: the deadline cannot cut
/// an attempt of it, and bounds only when new attempts and waits begin.
#[derive(Debug)]
struct Opaque;

impl std::fmt::Display for Opaque {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("opaque")
    }
}

#[retry(on = |_: &Opaque| true, max = 10, deadline = 10s, backoff = fixed(1s))]
async fn three_seconds_uncuttable(calls: &std::cell::Cell<u32>) -> Result<(), Opaque> {
    tokio::time::sleep(secs(3)).await;
    calls.set(calls.get() + 1);
    Err(Opaque)
}

#[tokio::test(start_paused = true)]
async fn without_a_timeout_error_the_deadline_lets_the_running_attempt_finish() {
    let calls = std::cell::Cell::new(0);
    let started = Instant::now();
    three_seconds_uncuttable(&calls).await.unwrap_err();
    // 0-3, 4-7, 8-11: the last attempt starts before the deadline and runs
    // to its end; no wait begins after it.
    assert_eq!(calls.get(), 3);
    assert_eq!(started.elapsed(), secs(11));
}

#[retry(max = 3, deadline = (budget), backoff = fixed(1s))]
async fn runtime_deadline(flaky: &Flaky, budget: Duration) -> io::Result<u32> {
    flaky.hit()
}

#[tokio::test(start_paused = true)]
async fn a_deadline_expression_is_read_on_each_call() {
    let flaky = Flaky::always(ErrorKind::TimedOut);
    runtime_deadline(&flaky, Duration::from_millis(1500))
        .await
        .unwrap_err();
    assert_eq!(flaky.calls(), 2);
}

/// Rate-limited errors carrying the server's delay.
#[derive(Debug)]
struct Throttled {
    retry_after: Duration,
}

#[retry(on = |e: &Throttled| Classification::rate_limited().with_retry_after(e.retry_after), max = 3)]
async fn throttled(calls: &AtomicU32, retry_after: Duration) -> Result<(), Throttled> {
    calls.fetch_add(1, Ordering::SeqCst);
    Err(Throttled { retry_after })
}

#[tokio::test(start_paused = true)]
async fn a_server_delay_longer_than_the_backoff_is_waited_as_asked() {
    let calls = AtomicU32::new(0);
    let started = Instant::now();
    throttled(&calls, secs(3)).await.unwrap_err();
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert_eq!(started.elapsed(), secs(6));
}

#[tokio::test(start_paused = true)]
async fn a_server_delay_over_a_minute_gives_up_instead_of_sleeping() {
    let calls = AtomicU32::new(0);
    let started = Instant::now();
    throttled(&calls, secs(61)).await.unwrap_err();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(started.elapsed(), Duration::ZERO);
}

#[derive(Debug)]
enum AppError {
    Io(io::Error),
    NotFound,
}

impl From<io::Error> for AppError {
    fn from(e: io::Error) -> AppError {
        AppError::Io(e)
    }
}

fn app_class(error: &AppError) -> Class {
    match error {
        AppError::Io(_) => Class::Transient,
        AppError::NotFound => Class::Logical,
    }
}

#[retry(on = app_class, max = 3, backoff = none)]
async fn question_mark(flaky: &Flaky, missing: bool) -> Result<u32, AppError> {
    if missing {
        return Err(AppError::NotFound);
    }
    let n = flaky.hit()?;
    Ok(n)
}

#[tokio::test(start_paused = true)]
async fn question_mark_converts_and_early_return_is_classified() {
    let flaky = Flaky::always(ErrorKind::BrokenPipe);
    assert!(
        matches!(question_mark(&flaky, false).await, Err(AppError::Io(e)) if e.kind() == ErrorKind::BrokenPipe)
    );
    assert_eq!(flaky.calls(), 3);
    let flaky = Flaky::always(ErrorKind::BrokenPipe);
    assert!(matches!(
        question_mark(&flaky, true).await,
        Err(AppError::NotFound)
    ));
    assert_eq!(flaky.calls(), 0);
}

struct Client {
    flaky: Flaky,
    attempts_seen: Vec<u32>,
}

impl Client {
    #[retry(max = 3, backoff = fixed(1s))]
    async fn get(&self) -> io::Result<u32> {
        self.flaky.hit()
    }

    #[retry(max = 3, backoff = fixed(1s))]
    async fn record(&mut self) -> io::Result<u32> {
        let n = self.flaky.calls();
        self.attempts_seen.push(n);
        self.flaky.hit()
    }

    #[retry(max = 3, backoff = fixed(1s))]
    async fn shared(self: Arc<Self>) -> io::Result<u32> {
        self.flaky.hit()
    }
}

#[tokio::test(start_paused = true)]
async fn methods_with_every_receiver() {
    let mut client = Client {
        flaky: Flaky::new(2, ErrorKind::ConnectionReset),
        attempts_seen: Vec::new(),
    };
    assert_eq!(client.get().await.unwrap(), 2);
    client.flaky = Flaky::new(3, ErrorKind::ConnectionReset);
    assert_eq!(client.record().await.unwrap(), 3);
    assert_eq!(client.attempts_seen, [0, 1, 2]);
    client.flaky = Flaky::new(2, ErrorKind::ConnectionReset);
    let shared = Arc::new(client);
    let started = Instant::now();
    assert_eq!(Arc::clone(&shared).shared().await.unwrap(), 2);
    assert_eq!(started.elapsed(), secs(1));
}

trait Store {
    async fn load(&self, flaky: &Flaky) -> io::Result<u32>;

    #[retry(max = 2, backoff = fixed(1s))]
    async fn load_twice(&self, flaky: &Flaky) -> io::Result<u32> {
        flaky.hit()
    }
}

struct Memory;

impl Store for Memory {
    #[retry(max = 3, backoff = fixed(1s))]
    async fn load(&self, flaky: &Flaky) -> io::Result<u32> {
        flaky.hit()
    }
}

#[tokio::test(start_paused = true)]
async fn native_async_trait_methods_and_default_bodies() {
    let flaky = Flaky::always(ErrorKind::TimedOut);
    Memory.load(&flaky).await.unwrap_err();
    assert_eq!(flaky.calls(), 3);
    let flaky = Flaky::always(ErrorKind::TimedOut);
    Memory.load_twice(&flaky).await.unwrap_err();
    assert_eq!(flaky.calls(), 2);
}

#[async_trait::async_trait]
trait Remote {
    async fn fetch(&self, flaky: &Flaky) -> io::Result<u32>;
    async fn fetch_owned(&self, flaky: &Flaky, key: String) -> io::Result<String>;
}

struct Service;

#[async_trait::async_trait]
impl Remote for Service {
    #[retry(max = 3, backoff = fixed(1s))]
    async fn fetch(&self, flaky: &Flaky) -> io::Result<u32> {
        flaky.hit()
    }

    #[retry(max = 3, backoff = fixed(1s), clone(key))]
    async fn fetch_owned(&self, flaky: &Flaky, key: String) -> io::Result<String> {
        let n = flaky.hit()?;
        Ok(format!("{key}{n}"))
    }
}

#[tokio::test(start_paused = true)]
async fn async_trait_methods_retry_the_future_not_its_construction() {
    let flaky = Flaky::always(ErrorKind::TimedOut);
    let started = Instant::now();
    Service.fetch(&flaky).await.unwrap_err();
    assert_eq!(flaky.calls(), 3);
    assert_eq!(started.elapsed(), secs(2));

    let flaky = Flaky::new(2, ErrorKind::TimedOut);
    assert_eq!(
        Service.fetch_owned(&flaky, "k".to_owned()).await.unwrap(),
        "k2"
    );
    let boxed: &dyn Remote = &Service;
    let flaky = Flaky::always(ErrorKind::TimedOut);
    boxed.fetch(&flaky).await.unwrap_err();
    assert_eq!(flaky.calls(), 3);
}

#[retry(max = 2, backoff = none)]
#[tracing::instrument(skip_all)]
async fn retry_outside_instrument(flaky: &Flaky) -> io::Result<u32> {
    flaky.hit()
}

#[tracing::instrument(skip_all)]
#[retry(max = 2, backoff = none)]
async fn retry_inside_instrument(flaky: &Flaky) -> io::Result<u32> {
    flaky.hit()
}

#[tokio::test(start_paused = true)]
async fn both_orders_with_tracing_instrument() {
    let flaky = Flaky::always(ErrorKind::TimedOut);
    retry_outside_instrument(&flaky).await.unwrap_err();
    assert_eq!(flaky.calls(), 2);
    let flaky = Flaky::always(ErrorKind::TimedOut);
    retry_inside_instrument(&flaky).await.unwrap_err();
    assert_eq!(flaky.calls(), 2);
}

static OUTER_CALLS: AtomicU32 = AtomicU32::new(0);
static INNER_CALLS: AtomicU32 = AtomicU32::new(0);

// `#[retry]` first: the test's body is retried inside one runtime.
#[retry(max = 3, backoff = none)]
#[tokio::test]
async fn retry_then_tokio_test() -> io::Result<()> {
    if OUTER_CALLS.fetch_add(1, Ordering::SeqCst) < 2 {
        return Err(ErrorKind::ConnectionReset.into());
    }
    assert_eq!(OUTER_CALLS.load(Ordering::SeqCst), 3);
    Ok(())
}

// `#[tokio::test]` first: each attempt builds its runtime and blocks on it.
#[tokio::test]
#[retry(max = 3, backoff = none)]
async fn tokio_test_then_retry() -> io::Result<()> {
    if INNER_CALLS.fetch_add(1, Ordering::SeqCst) < 2 {
        return Err(ErrorKind::ConnectionReset.into());
    }
    assert_eq!(INNER_CALLS.load(Ordering::SeqCst), 3);
    Ok(())
}

#[retry(max = 3, backoff = fixed(1s), sleep = |d| tokio::time::sleep(d * 10))]
async fn custom_async_sleeper(flaky: &Flaky) -> io::Result<u32> {
    flaky.hit()
}

#[tokio::test(start_paused = true)]
async fn a_custom_async_sleeper_is_awaited() {
    let flaky = Flaky::always(ErrorKind::TimedOut);
    let started = Instant::now();
    custom_async_sleeper(&flaky).await.unwrap_err();
    assert_eq!(started.elapsed(), secs(20));
}

fn assert_send<T: Send>(value: T) -> T {
    value
}

#[tokio::test(start_paused = true)]
async fn the_wrapper_future_is_send_when_the_body_is() {
    let flaky = Flaky::new(2, ErrorKind::TimedOut);
    let future = assert_send(exp_four(&flaky));
    assert_eq!(future.await.unwrap(), 2);
    let handle = tokio::spawn(async {
        let flaky = Flaky::new(2, ErrorKind::TimedOut);
        exp_four(&flaky).await
    });
    assert_eq!(handle.await.unwrap().unwrap(), 2);
}

/// Sets its flag when dropped.
struct DropFlag<'a>(&'a std::sync::atomic::AtomicBool);

impl Drop for DropFlag<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[retry(max = 5, backoff = fixed(10s))]
async fn holds_a_guard(
    flaky: &Flaky,
    dropped: &std::sync::atomic::AtomicBool,
    hang: bool,
) -> io::Result<u32> {
    let _guard = DropFlag(dropped);
    if hang {
        std::future::pending::<()>().await;
    }
    flaky.hit()
}

#[tokio::test(start_paused = true)]
async fn dropping_the_future_while_it_waits_or_runs_ends_the_call() {
    let dropped = std::sync::atomic::AtomicBool::new(false);
    let flaky = Flaky::always(ErrorKind::TimedOut);
    // Cancelled during the first 10 s wait.
    let cancelled = tokio::time::timeout(secs(5), holds_a_guard(&flaky, &dropped, false)).await;
    assert!(cancelled.is_err());
    assert!(dropped.load(Ordering::SeqCst));
    tokio::time::sleep(secs(60)).await;
    assert_eq!(flaky.calls(), 1, "no attempt runs after the drop");

    // Cancelled inside an attempt: the attempt's locals are dropped.
    let dropped = std::sync::atomic::AtomicBool::new(false);
    let cancelled = tokio::time::timeout(secs(5), holds_a_guard(&flaky, &dropped, true)).await;
    assert!(cancelled.is_err());
    assert!(dropped.load(Ordering::SeqCst));
}

// ---- each wrapper holds the attempt once ----

/// An attempt's future that holds `N` bytes across its await.
async fn holding<const N: usize>() -> io::Result<u8> {
    let bytes = [1u8; N];
    tokio::task::yield_now().await;
    Ok(bytes[N - 1])
}

static SIZED: reattempt::ConcurrencyLimit = reattempt::ConcurrencyLimit::new(1);

/// For each set of arguments, a function whose attempt holds 8 bytes and
/// one whose attempt holds 4,104: the size of their futures, in that order.
macro_rules! sizes {
    ($($name:ident: #[retry($($arg:tt)*)];)*) => {
        [$({
            mod $name {
                use super::*;
                #[retry($($arg)*)]
                pub async fn small() -> io::Result<u8> {
                    holding::<8>().await
                }
                #[retry($($arg)*)]
                pub async fn big() -> io::Result<u8> {
                    holding::<4_104>().await
                }
            }
            (stringify!($name), size_of_val(&$name::small()), size_of_val(&$name::big()))
        },)*]
    };
}

#[test]
fn every_wrapper_of_an_attempt_holds_its_future_once() {
    let grown = size_of_val(&holding::<4_104>()) - size_of_val(&holding::<8>());
    let shapes = sizes! {
        lazy: #[retry(max = 3)];
        hooked: #[retry(max = 3, on_retry = |_| {})];
        limited: #[retry(max = 3, limit = SIZED)];
        bounded: #[retry(max = 3, deadline = 1s)];
        timed: #[retry(max = 3, attempt_timeout = 1s)];
        configured: #[retry(max = 3, policy = reattempt::dynamic::DynamicPolicy::new())];
        everything: #[retry(max = 3, limit = SIZED, deadline = 1s, attempt_timeout = 1s, on_retry = |_| {})];
    };
    for (shape, small, big) in shapes {
        // At most by as much (the small attempt may share its room with
        // other state), where a wrapper holding it twice grows twice as much.
        assert!(
            big - small <= grown,
            "{shape}: a future of {small} bytes grew by {} for an attempt {grown} bytes larger",
            big - small
        );
    }
}

/// A sleeper whose waits of a second overrun by two, as a late timer on a
/// loaded machine does.
fn overrunning(delay: Duration) -> tokio::time::Sleep {
    tokio::time::sleep(if delay == secs(1) { delay * 3 } else { delay })
}

#[retry(max = 3, backoff = fixed(1s), deadline = 2s, sleep = overrunning)]
async fn after_an_overrunning_wait(flaky: &Flaky) -> io::Result<u32> {
    flaky.hit()
}

#[tokio::test(start_paused = true)]
async fn no_attempt_starts_past_the_deadline_after_a_wait_that_overran() {
    let flaky = Flaky::always(ErrorKind::TimedOut);
    let started = Instant::now();
    let error = after_an_overrunning_wait(&flaky).await.unwrap_err();
    // The wait from 0 s was to end at 1 s, before the deadline; it ended at
    // 3 s, past it.
    assert_eq!(started.elapsed(), secs(3));
    assert_eq!(flaky.calls(), 1, "the attempt at 3 s did not start");
    assert!(
        error
            .get_ref()
            .is_some_and(|inner| inner.is::<reattempt::AttemptTimeout>()),
        "{error:?}"
    );
    let stats = reattempt::stats::get("async_fn::after_an_overrunning_wait").unwrap();
    assert_eq!((stats.give_ups.deadline, stats.attempts), (1, 1));
}
