//! The adaptive throttle: while the backend answers with overload signals,
//! calls are rejected locally, before their first attempt (the body does
//! not run) and before their retries, with the reason `throttled` in logs,
//! statistics and dead-letter records; what the backend accepts is never
//! throttled.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::thread;
use std::time::Duration;

use reattempt::dead_letter::Memory;
use reattempt::{AdaptiveThrottle, Classification, GiveUp, Throttled, retry};

mod common;

/// An application's error: the backend's overload, or the throttle's
/// rejection.
#[derive(Debug, PartialEq)]
enum ApiError {
    Overloaded,
    NotFound,
    Throttled,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

impl From<Throttled> for ApiError {
    fn from(_: Throttled) -> ApiError {
        ApiError::Throttled
    }
}

impl reattempt::Classified for ApiError {
    fn classification(&self) -> Classification {
        match self {
            ApiError::Overloaded => Classification::rate_limited(),
            ApiError::NotFound => Classification::logical(),
            ApiError::Throttled => Classification::logical().with_code("throttled"),
        }
    }
}

static BACKEND: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(600));
static OVERLOADED: AtomicBool = AtomicBool::new(true);
static BODIES: AtomicU32 = AtomicU32::new(0);
static GAVE_UP: Memory = Memory::new();

#[retry(max = 1, throttle = BACKEND, dead_letter = GAVE_UP)]
fn call_backend() -> Result<(), ApiError> {
    BODIES.fetch_add(1, Ordering::SeqCst);
    if OVERLOADED.load(Ordering::SeqCst) {
        return Err(ApiError::Overloaded);
    }
    Ok(())
}

#[test]
fn an_overloaded_backend_gets_few_of_the_calls_and_the_rest_are_rejected_without_running() {
    // The first ten go out: too few to judge from.
    for _ in 0..10 {
        assert_eq!(call_backend(), Err(ApiError::Overloaded));
    }
    let mut calls = 10;
    while BACKEND.rejection_ratio() < AdaptiveThrottle::DEFAULT_MAX_REJECTION {
        let _ = call_backend();
        calls += 1;
        assert!(calls < 1_000, "the ratio rises to its maximum");
    }
    GAVE_UP.take();
    let throttled_before = reattempt::stats::get("throttle::call_backend")
        .unwrap()
        .give_ups
        .throttled;
    let (mut overloaded, mut throttled) = (0, 0);
    let before = BODIES.load(Ordering::SeqCst);
    for _ in 0..1_000 {
        match call_backend() {
            Err(ApiError::Overloaded) => overloaded += 1,
            Err(ApiError::Throttled) => throttled += 1,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(
        BODIES.load(Ordering::SeqCst) - before,
        overloaded,
        "a rejected call runs no body"
    );
    // The ratio is capped at 0.9: about one call in ten still goes out.
    assert!(
        (850..=950).contains(&throttled),
        "{throttled} of 1,000 rejected"
    );
    let stats = reattempt::stats::get("throttle::call_backend").unwrap();
    assert_eq!(stats.give_ups.throttled - throttled_before, throttled);
    let records = GAVE_UP.take();
    let rejected: Vec<_> = records
        .iter()
        .filter(|r| r.reason == GiveUp::Throttled)
        .collect();
    assert_eq!(rejected.len() as u64, throttled);
    assert!(
        rejected
            .iter()
            .all(|r| r.attempts == 0 && r.history.is_empty())
    );
}

static SHARED: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(600));

#[retry(max = 3, backoff = none, throttle = SHARED)]
fn overloaded_then_retried() -> Result<(), ApiError> {
    Err(ApiError::Overloaded)
}

#[retry(max = 1, throttle = SHARED)]
fn not_found() -> Result<(), ApiError> {
    Err(ApiError::NotFound)
}

#[test]
fn a_retry_is_a_request_the_throttle_may_reject() {
    let (events, _) = common::capture_logs(|| {
        for _ in 0..30 {
            let _ = overloaded_then_retried();
        }
    });
    let stats = reattempt::stats::get("throttle::overloaded_then_retried").unwrap();
    assert!(stats.give_ups.throttled > 0, "{:?}", stats.give_ups);
    let throttled: Vec<_> = events
        .iter()
        .filter(|e| e["fields"]["message"] == "giving up" && e["fields"]["reason"] == "throttled")
        .collect();
    assert_eq!(
        throttled.len() as u64,
        stats.give_ups.throttled,
        "{events:?}"
    );
    // A failure that is no overload signal counts as accepted; the call
    // that makes it may be rejected itself, which no accept follows.
    for _ in 0..1_000 {
        let accepts = SHARED.accepts();
        match not_found() {
            Err(ApiError::NotFound) => {
                assert_eq!(SHARED.accepts(), accepts + 1);
                return;
            }
            rejected => assert_eq!(rejected, Err(ApiError::Throttled)),
        }
    }
    panic!("1,000 calls in a row rejected, above the maximum ratio");
}

static CALM: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(600));

#[retry(max = 2, backoff = none, throttle = CALM)]
fn answered(n: u32) -> Result<u32, ApiError> {
    Ok(n)
}

#[test]
fn eight_threads_of_successes_are_counted_exactly_and_never_throttled() {
    thread::scope(|scope| {
        for _ in 0..8 {
            scope.spawn(|| {
                for n in 0..2_000 {
                    assert_eq!(answered(n), Ok(n));
                }
            });
        }
    });
    assert_eq!(CALM.requests(), 16_000);
    assert_eq!(CALM.accepts(), 16_000);
    assert_eq!(CALM.rejection_ratio(), 0.0);
    let stats = reattempt::stats::get("throttle::answered").unwrap();
    assert_eq!(stats.first_try_successes, 16_000);
}

static TUNED: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(600));
static TUNING: reattempt::dynamic::PolicyCell =
    reattempt::dynamic::PolicyCell::new(reattempt::dynamic::DynamicPolicy::new());

#[retry(max = 1, throttle = TUNED, policy = TUNING)]
fn tuned() -> Result<(), ApiError> {
    Err(ApiError::Overloaded)
}

#[test]
fn a_dynamic_policy_sets_the_throttles_k_and_window() {
    TUNING.set("throttle_k = 1".parse().unwrap());
    for _ in 0..10 {
        assert_eq!(tuned(), Err(ApiError::Overloaded));
    }
    // K = 1 over 10 requests, none accepted: 10 / 11.
    let ratio = TUNED.rejection_ratio();
    assert_eq!(ratio, AdaptiveThrottle::DEFAULT_MAX_REJECTION, "{TUNED:?}");
    TUNING.set("throttle_k = 1, throttle_window = 1m".parse().unwrap());
    let _ = tuned();
    assert!(
        TUNED.requests() <= 1,
        "a new window counts afresh: {TUNED:?}"
    );
    assert!(format!("{TUNED:?}").contains("window: 60s"), "{TUNED:?}");
}

static RECOVERING: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_millis(300));
static DOWN: AtomicBool = AtomicBool::new(true);

#[retry(max = 1, throttle = RECOVERING)]
fn recovering() -> Result<(), ApiError> {
    if DOWN.load(Ordering::SeqCst) {
        return Err(ApiError::Overloaded);
    }
    Ok(())
}

#[test]
fn once_the_backend_is_back_the_throttle_lets_every_call_through_within_a_few_windows() {
    while RECOVERING.rejection_ratio() < 0.5 {
        let _ = recovering();
    }
    DOWN.store(false, Ordering::SeqCst);
    // Bounded: the overloads leave the window after 300 ms; a slow machine
    // gets many windows more.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut in_a_row = 0;
    while in_a_row < 200 {
        assert!(std::time::Instant::now() < deadline, "never recovered");
        match recovering() {
            Ok(()) => in_a_row += 1,
            Err(ApiError::Throttled) => {
                in_a_row = 0;
                thread::sleep(Duration::from_millis(5));
            }
            Err(other) => panic!("{other:?}"),
        }
    }
    assert_eq!(RECOVERING.rejection_ratio(), 0.0);
}
