//! `fallback = ..`: a call that gives up for good is answered by its
//! fallback, given the last error (and the arguments, by reference, when
//! its signature asks for them), once, after its give-up was logged,
//! counted and recorded; a success never reaches it.

use std::io::{self, ErrorKind};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use reattempt::dead_letter::Memory;
use reattempt::{AdaptiveThrottle, Class, GiveUp, Throttled, retry};

mod common;

fn no_wait(_: Duration) {}

static RECORDS: Memory = Memory::new();
static RECORDED_BEFORE_ANSWER: AtomicU32 = AtomicU32::new(0);

/// A cached price: what the backend last said.
fn cached_price(error: io::Error) -> io::Result<u32> {
    assert_eq!(error.kind(), ErrorKind::ConnectionReset, "the last error");
    RECORDED_BEFORE_ANSWER.store(RECORDS.records().len() as u32, Ordering::SeqCst);
    Ok(90)
}

#[retry(max = 3, backoff = none, sleep = no_wait, dead_letter = RECORDS, fallback = cached_price)]
fn price() -> io::Result<u32> {
    Err(ErrorKind::ConnectionReset.into())
}

#[test]
fn a_call_that_gives_up_is_answered_by_its_fallback_after_its_record() {
    let (events, _) = common::capture_logs(|| {
        assert_eq!(price().unwrap(), 90);
    });
    assert_eq!(
        RECORDED_BEFORE_ANSWER.load(Ordering::SeqCst),
        1,
        "recorded first"
    );
    let record = &RECORDS.take()[0];
    assert_eq!((record.reason, record.attempts), (GiveUp::Exhausted, 3));
    let stats = reattempt::stats::get("fallback::price").unwrap();
    assert_eq!((stats.give_ups.exhausted, stats.fallbacks), (1, 1));
    let messages: Vec<_> = events
        .iter()
        .filter_map(|e| e["fields"]["message"].as_str())
        .filter(|m| !m.starts_with("attempt failed"))
        .collect();
    assert_eq!(messages, ["giving up", "a fallback answered"], "{events:?}");
    let answered = events
        .iter()
        .find(|e| e["fields"]["message"] == "a fallback answered")
        .unwrap();
    assert_eq!(answered["level"], "INFO");
    assert_eq!(answered["fields"]["function"], "fallback::price");
}

static NEVER_CALLED: AtomicU32 = AtomicU32::new(0);

fn never(_: io::Error) -> io::Result<u32> {
    NEVER_CALLED.fetch_add(1, Ordering::SeqCst);
    Ok(0)
}

#[retry(max = 2, backoff = none, fallback = never)]
fn succeeds() -> io::Result<u32> {
    Ok(7)
}

#[test]
fn a_success_never_reaches_the_fallback() {
    for _ in 0..10 {
        assert_eq!(succeeds().unwrap(), 7);
    }
    assert_eq!(NEVER_CALLED.load(Ordering::SeqCst), 0);
    assert_eq!(
        reattempt::stats::get("fallback::succeeds")
            .unwrap()
            .fallbacks,
        0
    );
}

/// Takes the function's arguments after the error, by reference.
fn default_for(error: io::Error, item: &u32, region: &&str) -> io::Result<String> {
    Ok(format!(
        "{item} in {region}: default after {}",
        error.kind()
    ))
}

#[retry(max = 2, backoff = none, sleep = no_wait, fallback = default_for)]
fn describe(item: u32, region: &str) -> io::Result<String> {
    let _ = (item, region);
    Err(ErrorKind::TimedOut.into())
}

#[test]
fn a_fallback_may_take_the_arguments_by_reference() {
    assert_eq!(
        describe(4, "eu").unwrap(),
        "4 in eu: default after timed out"
    );
}

#[retry(max = 2, backoff = none, sleep = no_wait, fallback = |error: io::Error| Ok(format!("{id}: {error}")))]
fn by_closure(id: u32) -> io::Result<String> {
    let _ = id;
    Err(io::Error::new(ErrorKind::TimedOut, "slow"))
}

#[test]
fn a_closure_fallback_sees_the_arguments_where_it_is_written() {
    assert_eq!(by_closure(3).unwrap(), "3: slow");
}

#[retry(max = 3, backoff = none, if_result = |n: &u32| *n == 0, fallback = never)]
fn zero() -> io::Result<u32> {
    Ok(0)
}

#[test]
fn a_call_that_gave_up_on_a_value_returns_the_value() {
    assert_eq!(zero().unwrap(), 0);
    assert_eq!(
        NEVER_CALLED.load(Ordering::SeqCst),
        0,
        "the fallback answers errors"
    );
}

fn panics(_: io::Error) -> io::Result<u32> {
    panic!("the fallback's own panic");
}

#[retry(max = 1, fallback = panics)]
fn fails_then_panics() -> io::Result<u32> {
    Err(ErrorKind::ConnectionRefused.into())
}

#[test]
fn a_fallback_that_panics_is_the_callers_panic_and_leaves_the_give_up_counted() {
    let panicked = std::panic::catch_unwind(fails_then_panics).unwrap_err();
    assert_eq!(
        panicked.downcast_ref::<&str>(),
        Some(&"the fallback's own panic")
    );
    let stats = reattempt::stats::get("fallback::fails_then_panics").unwrap();
    assert_eq!(
        (
            stats.calls,
            stats.give_ups.exhausted,
            stats.fallbacks,
            stats.cancelled
        ),
        (1, 1, 0, 0)
    );
}

static ALWAYS: AdaptiveThrottle = AdaptiveThrottle::new(1.0, Duration::from_secs(600))
    .min_requests(1)
    .max_rejection(0.99);

fn degraded(error: io::Error) -> io::Result<&'static str> {
    Ok(if error.get_ref().is_some_and(|e| e.is::<Throttled>()) {
        "degraded: throttled"
    } else {
        "degraded"
    })
}

/// Every error is an overload signal here.
#[retry(max = 1, throttle = ALWAYS, on = |_: &io::Error| Class::RateLimited, fallback = degraded)]
fn overloaded() -> io::Result<&'static str> {
    Err(io::Error::new(ErrorKind::ConnectionRefused, "503"))
}

/// 200 answers of `function`'s fallback, most of them to calls its
/// throttle rejected, each counted as answered and those as throttled.
fn most_answered_throttled(function: &str, answers: &[&str]) {
    assert_eq!(answers.len(), 200);
    let throttled = answers
        .iter()
        .filter(|a| **a == "degraded: throttled")
        .count();
    assert!(throttled >= 100, "{throttled} of 200 throttled");
    let stats = reattempt::stats::get(function).unwrap();
    assert_eq!(
        (stats.give_ups.throttled, stats.fallbacks),
        (throttled as u64, 200)
    );
}

#[test]
fn a_throttled_call_is_answered_by_its_fallback() {
    let answers: Vec<_> = (0..200).map(|_| overloaded().unwrap()).collect();
    most_answered_throttled("fallback::overloaded", &answers);
}

/// A backend that is always overloaded, and the throttle's rejection.
#[derive(Debug)]
enum Busy {
    Overloaded,
    Throttled,
}

impl std::fmt::Display for Busy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self:?}")
    }
}

impl From<Throttled> for Busy {
    fn from(_: Throttled) -> Busy {
        Busy::Throttled
    }
}

impl reattempt::Classified for Busy {
    fn classification(&self) -> reattempt::Classification {
        reattempt::Classification::rate_limited()
    }
}

fn busy_answer(error: Busy) -> Result<&'static str, Busy> {
    Ok(match error {
        Busy::Overloaded => "degraded",
        Busy::Throttled => "degraded: throttled",
    })
}

static BUSY: AdaptiveThrottle = AdaptiveThrottle::new(1.0, Duration::from_secs(600))
    .min_requests(1)
    .max_rejection(0.99);
static BUSY_ASYNC: AdaptiveThrottle = AdaptiveThrottle::new(1.0, Duration::from_secs(600))
    .min_requests(1)
    .max_rejection(0.99);

/// A sync function whose first attempt runs before any call state: the
/// throttle is asked before it, the fallback answers after the call.
#[retry(max = 1, throttle = BUSY, fallback = busy_answer)]
fn busy() -> Result<&'static str, Busy> {
    Err(Busy::Overloaded)
}

#[retry(max = 1, throttle = BUSY_ASYNC, fallback = busy_answer)]
async fn busy_async() -> Result<&'static str, Busy> {
    Err(Busy::Overloaded)
}

#[test]
fn throttled_calls_of_either_kind_of_function_are_answered_by_their_fallback() {
    let answers: Vec<_> = (0..200).map(|_| busy().unwrap()).collect();
    most_answered_throttled("fallback::busy", &answers);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let answers: Vec<_> = runtime.block_on(async {
        let mut answers = Vec::new();
        for _ in 0..200 {
            answers.push(busy_async().await.unwrap());
        }
        answers
    });
    most_answered_throttled("fallback::busy_async", &answers);
}

static GAVE_UP_SEEN: AtomicU32 = AtomicU32::new(0);

fn cached_after_hook(_: io::Error) -> io::Result<u32> {
    assert_eq!(
        GAVE_UP_SEEN.load(Ordering::SeqCst) % 2,
        1,
        "after on_give_up"
    );
    GAVE_UP_SEEN.fetch_add(1, Ordering::SeqCst);
    Ok(5)
}

#[retry(
    max = 2,
    backoff = none,
    on_give_up = |_| { GAVE_UP_SEEN.fetch_add(1, Ordering::SeqCst); },
    fallback = cached_after_hook,
)]
fn with_hook() -> io::Result<u32> {
    Err(ErrorKind::ConnectionReset.into())
}

#[test]
fn the_fallback_answers_after_on_give_up() {
    assert_eq!(with_hook().unwrap(), 5);
    assert_eq!(GAVE_UP_SEEN.load(Ordering::SeqCst), 2);
}

static OPENED: reattempt::RetryBreaker =
    reattempt::RetryBreaker::new(0.5, 1, Duration::from_secs(60), Duration::from_secs(600), 1);

fn breaker_answer(error: io::Error) -> io::Result<&'static str> {
    Ok(
        if error
            .get_ref()
            .is_some_and(|e| e.is::<reattempt::BreakerOpen>())
        {
            "degraded: breaker open"
        } else {
            "degraded"
        },
    )
}

#[retry(max = 2, backoff = none, breaker = classic(OPENED), fallback = breaker_answer)]
fn behind_an_open_breaker() -> io::Result<&'static str> {
    Ok("live")
}

#[test]
fn a_call_an_open_breaker_refuses_is_answered_by_its_fallback() {
    OPENED.record(true);
    assert!(OPENED.is_open());
    assert_eq!(behind_an_open_breaker().unwrap(), "degraded: breaker open");
    let stats = reattempt::stats::get("fallback::behind_an_open_breaker").unwrap();
    assert_eq!((stats.give_ups.breaker, stats.fallbacks), (1, 1));
}

/// Its first attempt runs early; the second wait would pass the deadline.
#[retry(max = 5, backoff = fixed(40ms), deadline = 60ms, fallback = |_| Ok(9))]
fn past_its_deadline() -> io::Result<u32> {
    Err(ErrorKind::TimedOut.into())
}

#[test]
fn a_call_that_reaches_its_deadline_is_answered_by_its_fallback() {
    assert_eq!(past_its_deadline().unwrap(), 9);
    let stats = reattempt::stats::get("fallback::past_its_deadline").unwrap();
    assert_eq!((stats.give_ups.deadline, stats.fallbacks), (1, 1));
}

static FALLBACK_SWITCH: reattempt::dynamic::PolicyCell =
    reattempt::dynamic::PolicyCell::new(reattempt::dynamic::DynamicPolicy::new());

fn zero_answer(_: io::Error) -> io::Result<u32> {
    Ok(0)
}

#[retry(max = 2, backoff = none, policy = FALLBACK_SWITCH, fallback = zero_answer)]
fn switched() -> io::Result<u32> {
    Err(ErrorKind::ConnectionReset.into())
}

#[test]
fn a_dynamic_policy_turns_the_fallback_off_and_on() {
    assert_eq!(switched().unwrap(), 0, "on by default");
    FALLBACK_SWITCH.set("fallback = off".parse().unwrap());
    assert_eq!(switched().unwrap_err().kind(), ErrorKind::ConnectionReset);
    FALLBACK_SWITCH.set("fallback = on".parse().unwrap());
    assert_eq!(switched().unwrap(), 0);
    let stats = reattempt::stats::get("fallback::switched").unwrap();
    assert_eq!((stats.give_ups.exhausted, stats.fallbacks), (3, 2));
}

async fn fetch_from_replica(error: io::Error, key: &&str) -> io::Result<String> {
    tokio::task::yield_now().await;
    Ok(format!("{key} from the replica, after {}", error.kind()))
}

#[retry(max = 2, backoff = none, fallback = async fetch_from_replica)]
async fn fetch(key: &str) -> io::Result<String> {
    let _ = key;
    Err(ErrorKind::ConnectionReset.into())
}

#[retry(max = 2, backoff = none, fallback = |_| Ok(String::from("cached")))]
async fn fetch_cached(key: &str) -> io::Result<String> {
    let _ = key;
    Err(ErrorKind::ConnectionReset.into())
}

static HEDGED_ANSWERS: AtomicU32 = AtomicU32::new(0);

fn hedged_answer(_: io::Error) -> io::Result<u32> {
    HEDGED_ANSWERS.fetch_add(1, Ordering::SeqCst);
    Ok(0)
}

#[retry(max = 2, backoff = none, hedge = 10ms, fallback = hedged_answer)]
async fn hedged() -> io::Result<u32> {
    Err(ErrorKind::ConnectionReset.into())
}

#[tokio::test]
async fn an_async_fallback_is_awaited_and_a_sync_one_answers_at_once() {
    let answers = async {
        assert_eq!(
            fetch("k").await.unwrap(),
            "k from the replica, after connection reset"
        );
        assert_eq!(fetch_cached("k").await.unwrap(), "cached");
        assert_eq!(hedged().await.unwrap(), 0);
        assert_eq!(HEDGED_ANSWERS.load(Ordering::SeqCst), 1);
    };
    tokio::time::timeout(Duration::from_secs(30), answers)
        .await
        .expect("bounded");
    let stats = reattempt::stats::get("fallback::fetch").unwrap();
    assert_eq!((stats.give_ups.exhausted, stats.fallbacks), (1, 1));
}
