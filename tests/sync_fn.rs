//! Behaviour of `#[retry]` on sync functions, with an injected sleeper that
//! records each wait instead of sleeping.

use std::cell::{Cell, RefCell};
use std::io::{self, ErrorKind};
use std::time::{Duration, Instant};

use reattempt::{Class, Classification, Classify, retry};

thread_local! {
    static WAITS: RefCell<Vec<Duration>> = const { RefCell::new(Vec::new()) };
}

/// The sleeper of these tests: records the wait, returns at once.
fn record(delay: Duration) {
    WAITS.with(|waits| waits.borrow_mut().push(delay));
}

/// The waits recorded on this thread since the last call.
fn waits() -> Vec<Duration> {
    WAITS.with(|waits| waits.take())
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Fails with `kind` until the call numbered `succeed_on`, then returns it.
fn attempt(calls: &Cell<u32>, succeed_on: u32, kind: ErrorKind) -> io::Result<u32> {
    calls.set(calls.get() + 1);
    if calls.get() >= succeed_on {
        Ok(calls.get())
    } else {
        Err(kind.into())
    }
}

#[retry(max = 4, backoff = exp(base = 1s, factor = 2), sleep = record)]
fn exp_four(calls: &Cell<u32>, succeed_on: u32) -> io::Result<u32> {
    attempt(calls, succeed_on, ErrorKind::ConnectionReset)
}

#[test]
fn exhausts_max_attempts_with_exponential_waits() {
    let calls = Cell::new(0);
    let error = exp_four(&calls, u32::MAX).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::ConnectionReset);
    assert_eq!(calls.get(), 4);
    assert_eq!(waits(), [secs(1), secs(2), secs(4)]);
}

#[retry(max = 8, backoff = exp, sleep = record)]
fn exp_default(calls: &Cell<u32>) -> io::Result<u32> {
    attempt(calls, u32::MAX, ErrorKind::ConnectionReset)
}

#[retry(max = 8, sleep = record)]
fn no_backoff_given(calls: &Cell<u32>) -> io::Result<u32> {
    attempt(calls, u32::MAX, ErrorKind::ConnectionReset)
}

#[test]
fn bare_exp_and_the_default_double_from_one_second_up_to_thirty() {
    let curve = [1, 2, 4, 8, 16, 30, 30].map(secs);
    let _ = exp_default(&Cell::new(0));
    assert_eq!(waits(), curve);
    let _ = no_backoff_given(&Cell::new(0));
    assert_eq!(waits(), curve);
}

#[test]
fn returns_the_first_success() {
    let calls = Cell::new(0);
    assert_eq!(exp_four(&calls, 3).unwrap(), 3);
    assert_eq!(waits(), [secs(1), secs(2)]);
}

#[test]
fn success_on_the_first_attempt_never_waits() {
    let calls = Cell::new(0);
    assert_eq!(exp_four(&calls, 1).unwrap(), 1);
    assert!(waits().is_empty());
}

#[retry(sleep = record)]
fn defaults(calls: &Cell<u32>) -> io::Result<u32> {
    attempt(calls, u32::MAX, ErrorKind::TimedOut)
}

#[test]
fn defaults_are_five_attempts_exponential_from_one_second() {
    let calls = Cell::new(0);
    defaults(&calls).unwrap_err();
    assert_eq!(calls.get(), 5);
    assert_eq!(waits(), [secs(1), secs(2), secs(4), secs(8)]);
}

#[retry(max = 5, sleep = record)]
fn by_io_kind(calls: &Cell<u32>, kind: ErrorKind) -> io::Result<u32> {
    attempt(calls, u32::MAX, kind)
}

#[test]
fn io_errors_are_classified_by_kind_without_on() {
    for (kind, expected) in [
        (ErrorKind::ConnectionRefused, 5),
        (ErrorKind::Interrupted, 5),
        (ErrorKind::NotFound, 1),
        (ErrorKind::PermissionDenied, 1),
        (ErrorKind::InvalidInput, 1),
    ] {
        let calls = Cell::new(0);
        let error = by_io_kind(&calls, kind).unwrap_err();
        assert_eq!(error.kind(), kind, "the error comes back unchanged");
        assert_eq!(calls.get(), expected, "{kind:?}");
        waits();
    }
}

#[retry(on = transient, max = 2, backoff = none, sleep = record)]
fn explicit_transient(calls: &Cell<u32>) -> io::Result<u32> {
    attempt(calls, u32::MAX, ErrorKind::BrokenPipe)
}

#[test]
fn on_transient_is_the_default_classification() {
    let calls = Cell::new(0);
    explicit_transient(&calls).unwrap_err();
    assert_eq!(calls.get(), 2);
    assert_eq!(waits(), [Duration::ZERO]);
}

#[derive(Clone, Debug, PartialEq)]
enum ApiError {
    Timeout,
    Io(ErrorKind),
    Status(u16),
    Rejected(&'static str),
}

#[retry(on = matches(ApiError::Timeout | ApiError::Io(_)), max = 3, backoff = fixed(200ms), sleep = record)]
fn by_pattern(calls: &Cell<u32>, error: &dyn Fn() -> ApiError) -> Result<(), ApiError> {
    calls.set(calls.get() + 1);
    Err(error())
}

#[test]
fn matches_pattern_retries_matching_errors_only() {
    let calls = Cell::new(0);
    assert_eq!(
        by_pattern(&calls, &|| ApiError::Timeout),
        Err(ApiError::Timeout)
    );
    assert_eq!(calls.get(), 3);
    assert_eq!(waits(), [ms(200), ms(200)]);

    let calls = Cell::new(0);
    let io = || ApiError::Io(ErrorKind::NotFound);
    assert_eq!(
        by_pattern(&calls, &io),
        Err(ApiError::Io(ErrorKind::NotFound))
    );
    assert_eq!(calls.get(), 3);
    waits();

    let calls = Cell::new(0);
    assert_eq!(
        by_pattern(&calls, &|| ApiError::Status(503)),
        Err(ApiError::Status(503))
    );
    assert_eq!(calls.get(), 1);
    assert!(waits().is_empty());
}

#[retry(on = |e: &ApiError| matches!(e, ApiError::Status(s) if *s >= 500), max = 3, backoff = none, sleep = record)]
fn by_bool_closure(calls: &Cell<u32>, status: u16) -> Result<(), ApiError> {
    calls.set(calls.get() + 1);
    Err(ApiError::Status(status))
}

#[test]
fn bool_closure_true_is_transient() {
    let calls = Cell::new(0);
    by_bool_closure(&calls, 502).unwrap_err();
    assert_eq!(calls.get(), 3);
    let calls = Cell::new(0);
    by_bool_closure(&calls, 404).unwrap_err();
    assert_eq!(calls.get(), 1);
    waits();
}

#[retry(on = |e| match e { ApiError::Status(s) => reattempt::http::status(*s), _ => Class::Logical.into() }, max = 3, backoff = none, sleep = record)]
fn by_class_closure(calls: &Cell<u32>, status: u16) -> Result<(), ApiError> {
    calls.set(calls.get() + 1);
    Err(ApiError::Status(status))
}

#[test]
fn classification_closure_with_an_untyped_argument() {
    for (status, expected) in [(503, 3), (429, 3), (408, 3), (400, 1), (404, 1), (501, 1)] {
        let calls = Cell::new(0);
        by_class_closure(&calls, status).unwrap_err();
        assert_eq!(calls.get(), expected, "{status}");
        waits();
    }
}

fn only_rejections_pass(error: &ApiError) -> Class {
    match error {
        ApiError::Rejected(_) => Class::Transient,
        _ => Class::Validation,
    }
}

#[retry(on = only_rejections_pass, clone(error), max = 2, backoff = none, sleep = record)]
fn by_function(calls: &Cell<u32>, error: ApiError) -> Result<(), ApiError> {
    calls.set(calls.get() + 1);
    Err(error)
}

#[test]
fn a_function_path_classifies() {
    let calls = Cell::new(0);
    by_function(&calls, ApiError::Rejected("busy")).unwrap_err();
    assert_eq!(calls.get(), 2);
    let calls = Cell::new(0);
    by_function(&calls, ApiError::Timeout).unwrap_err();
    assert_eq!(calls.get(), 1);
    waits();
}

/// A classifier with state, built once per call.
struct StatusList(&'static [u16]);

impl Classify<ApiError> for StatusList {
    fn classify(&self, error: &ApiError) -> Classification {
        match error {
            ApiError::Status(s) if self.0.contains(s) => Classification::transient().with_code(*s),
            _ => Classification::logical(),
        }
    }
}

#[retry(on = StatusList(&[418]), max = 3, backoff = none, sleep = record)]
fn by_classify_impl(calls: &Cell<u32>, status: u16) -> Result<(), ApiError> {
    calls.set(calls.get() + 1);
    Err(ApiError::Status(status))
}

#[test]
fn a_classify_value_classifies() {
    let calls = Cell::new(0);
    by_classify_impl(&calls, 418).unwrap_err();
    assert_eq!(calls.get(), 3);
    let calls = Cell::new(0);
    by_classify_impl(&calls, 503).unwrap_err();
    assert_eq!(calls.get(), 1);
    waits();
}

#[derive(Debug)]
enum AppError {
    Io(io::Error),
    Parse,
}

impl From<io::Error> for AppError {
    fn from(e: io::Error) -> AppError {
        AppError::Io(e)
    }
}

impl reattempt::Classified for AppError {
    fn classification(&self) -> Classification {
        match self {
            AppError::Io(e) => reattempt::Classified::classification(e),
            AppError::Parse => Classification::validation(),
        }
    }
}

#[retry(max = 3, backoff = none, sleep = record)]
fn question_mark_converts(
    calls: &Cell<u32>,
    fail_with: Option<ErrorKind>,
) -> Result<u32, AppError> {
    calls.set(calls.get() + 1);
    if let Some(kind) = fail_with {
        // `?` ends this attempt with `AppError::from(io::Error)`.
        Err(io::Error::from(kind))?;
    }
    if calls.get() == 1 {
        return Err(AppError::Parse);
    }
    Ok(calls.get())
}

#[test]
fn question_mark_and_return_end_the_attempt_and_are_classified() {
    let calls = Cell::new(0);
    let error = question_mark_converts(&calls, Some(ErrorKind::ConnectionAborted)).unwrap_err();
    assert!(matches!(error, AppError::Io(ref e) if e.kind() == ErrorKind::ConnectionAborted));
    assert_eq!(calls.get(), 3);

    // The early `return Err(Parse)` is a validation error: no retry.
    let calls = Cell::new(0);
    assert!(matches!(
        question_mark_converts(&calls, None),
        Err(AppError::Parse)
    ));
    assert_eq!(calls.get(), 1);
    waits();
}

#[retry(max = 3, backoff = none, sleep = record)]
fn mutates_through_mut_ref(log: &mut Vec<u32>, buffer: &mut String) -> io::Result<usize> {
    log.push(log.len() as u32);
    buffer.push('x');
    if log.len() < 3 {
        return Err(ErrorKind::WouldBlock.into());
    }
    Ok(buffer.len())
}

#[test]
fn mut_ref_arguments_are_reborrowed_by_each_attempt() {
    let mut log = Vec::new();
    let mut buffer = String::new();
    assert_eq!(mutates_through_mut_ref(&mut log, &mut buffer).unwrap(), 3);
    assert_eq!(log, [0, 1, 2]);
    assert_eq!(buffer, "xxx");
    waits();
}

#[derive(Clone, Debug)]
struct Request {
    id: u32,
    body: Vec<u8>,
}

fn consume(request: Request, calls: &Cell<u32>) -> io::Result<u32> {
    drop(request.body);
    calls.set(calls.get() + 1);
    if calls.get() < 3 {
        Err(ErrorKind::ConnectionReset.into())
    } else {
        Ok(request.id)
    }
}

#[retry(clone(request), max = 3, backoff = none, sleep = record)]
fn send(request: Request, calls: &Cell<u32>) -> io::Result<u32> {
    consume(request, calls)
}

#[test]
fn clone_hands_each_attempt_its_own_copy() {
    let calls = Cell::new(0);
    let request = Request {
        id: 7,
        body: vec![1, 2, 3],
    };
    assert_eq!(send(request, &calls).unwrap(), 7);
    assert_eq!(calls.get(), 3);
    waits();
}

#[retry(max = 4, backoff = linear(base = 100ms, step = 50ms, max = 180ms), sleep = record)]
fn linear(calls: &Cell<u32>) -> io::Result<u32> {
    attempt(calls, u32::MAX, ErrorKind::TimedOut)
}

#[retry(max = 6, backoff = fibonacci(base = 1s, max = 4s), sleep = record)]
fn fibonacci(calls: &Cell<u32>) -> io::Result<u32> {
    attempt(calls, u32::MAX, ErrorKind::TimedOut)
}

#[retry(max = 3, backoff = fixed(1.5s), sleep = record)]
fn fixed(calls: &Cell<u32>) -> io::Result<u32> {
    attempt(calls, u32::MAX, ErrorKind::TimedOut)
}

#[retry(max = 4, backoff = exp(base = 100ms, factor = 3, max = 1s), sleep = record)]
fn exp_capped(calls: &Cell<u32>) -> io::Result<u32> {
    attempt(calls, u32::MAX, ErrorKind::TimedOut)
}

#[retry(max = 4, backoff = |n| Duration::from_millis(10 * u64::from(n)), sleep = record)]
fn custom_closure(calls: &Cell<u32>) -> io::Result<u32> {
    attempt(calls, u32::MAX, ErrorKind::TimedOut)
}

/// Always the same two delays, alternating.
struct Alternate;

impl reattempt::backoff::Backoff for Alternate {
    fn delay(&self, retry: u32) -> Duration {
        if retry % 2 == 1 { ms(5) } else { ms(50) }
    }
}

#[retry(max = 4, backoff = Alternate, sleep = record)]
fn custom_struct(calls: &Cell<u32>) -> io::Result<u32> {
    attempt(calls, u32::MAX, ErrorKind::TimedOut)
}

#[retry(max = 4, backoff = exp(base = (Duration::from_millis(base_ms)), max = (ms(base_ms * 3))), sleep = record)]
fn runtime_durations(calls: &Cell<u32>, base_ms: u64) -> io::Result<u32> {
    attempt(calls, u32::MAX, ErrorKind::TimedOut)
}

#[test]
fn every_backoff_curve_gives_its_delays() {
    let run = |f: fn(&Cell<u32>) -> io::Result<u32>| {
        f(&Cell::new(0)).unwrap_err();
        waits()
    };
    assert_eq!(run(linear), [ms(100), ms(150), ms(180)]);
    assert_eq!(
        run(fibonacci),
        [secs(1), secs(1), secs(2), secs(3), secs(4)]
    );
    assert_eq!(run(fixed), [ms(1500), ms(1500)]);
    assert_eq!(run(exp_capped), [ms(100), ms(300), ms(900)]);
    assert_eq!(run(custom_closure), [ms(10), ms(20), ms(30)]);
    assert_eq!(run(custom_struct), [ms(5), ms(50), ms(5)]);
    runtime_durations(&Cell::new(0), 10).unwrap_err();
    assert_eq!(waits(), [ms(10), ms(20), ms(30)]);
}

#[retry(max = 200, backoff = exp(base = 1s, max = 8s), jitter, sleep = record)]
fn proportional(calls: &Cell<u32>) -> io::Result<u32> {
    attempt(calls, u32::MAX, ErrorKind::TimedOut)
}

#[retry(max = 200, backoff = exp(base = 1s, max = 8s), jitter = full, sleep = record)]
fn full(calls: &Cell<u32>) -> io::Result<u32> {
    attempt(calls, u32::MAX, ErrorKind::TimedOut)
}

#[retry(max = 200, backoff = exp(base = 1s, max = 8s), jitter = equal, sleep = record)]
fn equal(calls: &Cell<u32>) -> io::Result<u32> {
    attempt(calls, u32::MAX, ErrorKind::TimedOut)
}

#[retry(max = 200, backoff = exp(base = 1s, max = 8s), jitter = decorrelated, sleep = record)]
fn decorrelated(calls: &Cell<u32>) -> io::Result<u32> {
    attempt(calls, u32::MAX, ErrorKind::TimedOut)
}

#[retry(max = 200, backoff = exp(base = 1s, max = 8s), jitter = proportional(1.0), sleep = record)]
fn doubling(calls: &Cell<u32>) -> io::Result<u32> {
    attempt(calls, u32::MAX, ErrorKind::TimedOut)
}

#[test]
fn jitter_stays_in_range_and_varies() {
    let plain = |retry: usize| secs(1 << retry.min(3));
    let check = |f: fn(&Cell<u32>) -> io::Result<u32>,
                 low: &dyn Fn(Duration) -> Duration,
                 high: &dyn Fn(Duration) -> Duration| {
        f(&Cell::new(0)).unwrap_err();
        let delays = waits();
        assert_eq!(delays.len(), 199);
        for (retry, delay) in delays.iter().enumerate() {
            let d = plain(retry);
            assert!(
                low(d) <= *delay && *delay <= high(d),
                "retry {retry}: {delay:?} for {d:?}"
            );
        }
        let distinct: std::collections::HashSet<_> = delays.iter().collect();
        assert!(
            distinct.len() > 20,
            "jittered delays vary: {} distinct",
            distinct.len()
        );
    };
    // Proportional jitter never waits less than the curve, at the 8 s cap
    // too, where it passes the cap by up to its ratio.
    check(proportional, &|d| d, &|d| d + d / 4);
    check(full, &|_| Duration::ZERO, &|d| d);
    check(equal, &|d| d / 2, &|d| d);
    check(doubling, &|d| d, &|d| d * 2);
    check(decorrelated, &|_| secs(1), &|_| secs(8));
}

#[retry(max = unbounded, deadline = 40ms, backoff = fixed(10ms))]
fn until_deadline(calls: &Cell<u32>) -> io::Result<u32> {
    attempt(calls, u32::MAX, ErrorKind::TimedOut)
}

#[test]
fn unbounded_retries_stop_at_the_deadline() {
    let calls = Cell::new(0);
    let started = Instant::now();
    until_deadline(&calls).unwrap_err();
    // Attempts at 0, 10, 20 and 30 ms at the soonest; a slow machine makes fewer.
    assert!((1..=4).contains(&calls.get()), "{} attempts", calls.get());
    assert!(started.elapsed() >= ms(10) * (calls.get() - 1));
}

#[retry(max = 1, sleep = record)]
fn once(calls: &Cell<u32>) -> io::Result<u32> {
    attempt(calls, u32::MAX, ErrorKind::TimedOut)
}

#[test]
fn max_one_means_no_retry() {
    let calls = Cell::new(0);
    once(&calls).unwrap_err();
    assert_eq!(calls.get(), 1);
    assert!(waits().is_empty());
}

#[retry(max = 3, backoff = none, sleep = |delay| record(delay * 2))]
fn closure_sleeper(calls: &Cell<u32>) -> io::Result<u32> {
    attempt(calls, u32::MAX, ErrorKind::TimedOut)
}

#[test]
fn a_closure_can_be_the_sleeper() {
    closure_sleeper(&Cell::new(0)).unwrap_err();
    assert_eq!(waits(), [Duration::ZERO, Duration::ZERO]);
}

#[retry(max = 3, backoff = fixed(1ms))]
fn real_sleep(calls: &Cell<u32>) -> io::Result<u32> {
    attempt(calls, 3, ErrorKind::TimedOut)
}

#[test]
fn the_default_sleeper_really_waits() {
    let started = Instant::now();
    assert_eq!(real_sleep(&Cell::new(0)).unwrap(), 3);
    assert!(started.elapsed() >= ms(2));
}

/// An error that counts its drops, and whose classification panics when
/// told to.
#[derive(Debug)]
struct Counted<'a> {
    drops: &'a Cell<u32>,
    panics: bool,
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.drops.set(self.drops.get() + 1);
    }
}

impl std::fmt::Display for Counted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("counted")
    }
}

impl reattempt::Classified for Counted<'_> {
    fn classification(&self) -> Classification {
        if self.panics {
            panic!("the classifier panicked");
        }
        Classification::transient()
    }
}

#[retry(max = 3, backoff = none, sleep = record)]
fn fails_counted<'a>(
    drops: &'a Cell<u32>,
    calls: &Cell<u32>,
    panics_on: u32,
) -> Result<u32, Counted<'a>> {
    calls.set(calls.get() + 1);
    Err(Counted {
        drops,
        panics: calls.get() == panics_on,
    })
}

#[test]
fn an_outcome_held_when_the_rest_of_a_call_unwinds_is_dropped() {
    for panics_on in [1, 2] {
        let (drops, calls) = (Cell::new(0), Cell::new(0));
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            fails_counted(&drops, &calls, panics_on)
        }));
        assert!(unwound.is_err());
        assert_eq!(calls.get(), panics_on);
        // Every error the body returned was dropped, the one held when
        // its classification panicked included.
        assert_eq!(drops.get(), panics_on, "panicking on attempt {panics_on}");
        waits();
    }
}

#[test]
fn an_error_given_back_is_dropped_once() {
    let (drops, calls) = (Cell::new(0), Cell::new(0));
    let error = fails_counted(&drops, &calls, 0).unwrap_err();
    assert_eq!((calls.get(), drops.get()), (3, 2));
    drop(error);
    assert_eq!(drops.get(), 3);
    waits();
}

/// Counts `n` up by one, and fails until it reaches `until`.
fn count_up(n: &mut u32, until: u32) -> io::Result<u32> {
    *n += 1;
    if *n < until {
        Err(ErrorKind::ConnectionReset.into())
    } else {
        Ok(*n)
    }
}

/// Its arguments are numbers: the body's closure holds copies of them.
#[retry(max = 4, backoff = none, sleep = record)]
fn counts_up_in_a_copy(mut n: u32, until: u32) -> io::Result<u32> {
    count_up(&mut n, until)
}

/// The same body in a loop with a hook, whose attempts borrow the arguments.
#[retry(max = 4, backoff = none, sleep = record, on_retry = |_| {})]
fn counts_up_in_a_borrow(mut n: u32, until: u32) -> io::Result<u32> {
    count_up(&mut n, until)
}

#[test]
fn an_argument_the_body_changes_keeps_the_change_for_the_next_attempt() {
    assert_eq!(counts_up_in_a_copy(0, 3).unwrap(), 3);
    assert_eq!(counts_up_in_a_borrow(0, 3).unwrap(), 3);
    assert_eq!(waits(), [Duration::ZERO; 4]);
}
