//! The spans of a call that builds its call state after its first attempt
//! when no subscriber was ever set (nothing the user wrote runs in its
//! retry loop), sync or async, and before it when one may want spans: the
//! call span, one child span per attempt, the body's events inside its
//! attempt's span, and the statistics, as for every other call.

use std::cell::Cell;
use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use reattempt::retry;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::prelude::*;
use tracing_subscriber::registry::LookupSpan;

fn no_wait(_: Duration) {}

/// Fails with a dropped connection while `failures` lasts; logs an event
/// in each attempt.
#[retry(max = 3, sleep = no_wait)]
fn flaky(failures: &Cell<u32>) -> io::Result<u32> {
    tracing::info!(target: "body", "inside");
    if failures.get() > 0 {
        failures.set(failures.get() - 1);
        return Err(io::ErrorKind::ConnectionReset.into());
    }
    Ok(7)
}

#[derive(Debug, Default)]
struct SpanSeen {
    name: &'static str,
    parent: Option<u64>,
    /// `retry.attempt`, or `retry.attempts` once recorded.
    numbers: HashMap<&'static str, i64>,
    /// `retry.idempotency_key`, once recorded.
    texts: HashMap<&'static str, String>,
    /// When it was made, on tokio's clock (paused, where a test pauses it).
    opened: Option<tokio::time::Instant>,
}

#[derive(Debug, Default)]
struct Seen {
    spans: HashMap<u64, SpanSeen>,
    /// The span each `body` event was in.
    events: Vec<Option<u64>>,
}

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Seen>>);

struct Fields<'s>(&'s mut SpanSeen);

impl Visit for Fields<'_> {
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.numbers.insert(field.name(), value);
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.texts.insert(field.name(), value.to_owned());
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.texts.insert(field.name(), value.to_string());
    }

    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let parent = ctx
            .span(id)
            .and_then(|span| span.parent())
            .map(|parent| parent.id().into_u64());
        let mut seen = SpanSeen {
            name: attrs.metadata().name(),
            parent,
            opened: Some(tokio::time::Instant::now()),
            ..SpanSeen::default()
        };
        attrs.record(&mut Fields(&mut seen));
        self.0.lock().unwrap().spans.insert(id.into_u64(), seen);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        let mut seen = self.0.lock().unwrap();
        if let Some(span) = seen.spans.get_mut(&id.into_u64()) {
            values.record(&mut Fields(span));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        if event.metadata().target() == "body" {
            let span = ctx.event_span(event).map(|span| span.id().into_u64());
            self.0.lock().unwrap().events.push(span);
        }
    }
}

/// Runs `f` under a subscriber that records spans and the body's events.
fn recorded(f: impl FnOnce()) -> Seen {
    let recorder = Recorder::default();
    let subscriber = tracing_subscriber::registry().with(recorder.clone());
    tracing::subscriber::with_default(subscriber, f);
    std::mem::take(&mut *recorder.0.lock().unwrap())
}

/// The call span's id and attempts, and its attempt spans' ids by number.
fn call_and_attempts(seen: &Seen) -> (u64, Option<i64>, Vec<(i64, u64)>) {
    let calls: Vec<_> = seen
        .spans
        .iter()
        .filter(|(_, span)| span.name == "retry.call")
        .collect();
    assert_eq!(calls.len(), 1, "{seen:?}");
    let (&call, call_span) = calls[0];
    let mut attempts: Vec<(i64, u64)> = seen
        .spans
        .iter()
        .filter(|(_, span)| span.name == "retry.attempt")
        .map(|(&id, span)| {
            assert_eq!(
                span.parent,
                Some(call),
                "an attempt span is a child of its call's"
            );
            (span.numbers["retry.attempt"], id)
        })
        .collect();
    attempts.sort();
    (
        call,
        call_span.numbers.get("retry.attempts").copied(),
        attempts,
    )
}

/// One call span with three attempt spans, numbered, each holding its
/// attempt's event.
fn assert_three_attempts(seen: &Seen) {
    let (_, attempts_recorded, attempts) = call_and_attempts(seen);
    assert_eq!(attempts_recorded, Some(3));
    let numbers: Vec<i64> = attempts.iter().map(|(n, _)| *n).collect();
    assert_eq!(numbers, [1, 2, 3]);
    let spans_of_events: Vec<Option<u64>> = attempts.iter().map(|(_, id)| Some(*id)).collect();
    assert_eq!(
        seen.events, spans_of_events,
        "each event in its attempt's span"
    );
}

/// One call span with one attempt span, which holds the attempt's event.
fn assert_one_attempt(seen: &Seen) {
    let (_, attempts_recorded, attempts) = call_and_attempts(seen);
    assert_eq!(attempts_recorded, Some(1));
    assert_eq!(attempts.len(), 1);
    assert_eq!(seen.events, [Some(attempts[0].1)]);
}

#[test]
fn a_call_that_fails_twice_has_three_attempt_spans_under_one_call_span() {
    assert_three_attempts(&recorded(|| assert_eq!(flaky(&Cell::new(2)).unwrap(), 7)));
}

#[test]
fn a_call_that_succeeds_at_once_has_one_attempt_span() {
    assert_one_attempt(&recorded(|| assert_eq!(flaky(&Cell::new(0)).unwrap(), 7)));
}

/// [`flaky`], async.
#[retry(max = 3, backoff = none)]
async fn flaky_async(failures: &Cell<u32>) -> io::Result<u32> {
    tracing::info!(target: "body", "inside");
    tokio::task::yield_now().await;
    if failures.get() > 0 {
        failures.set(failures.get() - 1);
        return Err(io::ErrorKind::ConnectionReset.into());
    }
    Ok(7)
}

/// Runs `future` to its end on a runtime of this thread, for at most ten
/// seconds.
fn block_on<T>(future: impl Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
        .block_on(async { tokio::time::timeout(Duration::from_secs(10), future).await })
        .expect("the call ends")
}

#[test]
fn an_async_call_that_fails_twice_has_three_attempt_spans_under_one_call_span() {
    assert_three_attempts(&recorded(|| {
        assert_eq!(block_on(flaky_async(&Cell::new(2))).unwrap(), 7);
    }));
}

#[test]
fn an_async_call_that_succeeds_at_once_has_one_attempt_span() {
    assert_one_attempt(&recorded(|| {
        assert_eq!(block_on(flaky_async(&Cell::new(0))).unwrap(), 7);
    }));
}

/// Fails once, then waits a second on tokio's timer before its retry.
#[retry(max = 2, backoff = fixed(1s))]
async fn waits_a_second(failures: &Cell<u32>) -> io::Result<u32> {
    if failures.get() > 0 {
        failures.set(failures.get() - 1);
        return Err(io::ErrorKind::ConnectionReset.into());
    }
    Ok(7)
}

/// An attempt's span opens when the attempt runs, after its wait: it does
/// not hold the wait.
#[test]
fn the_span_of_an_async_retry_opens_after_its_wait() {
    let seen = recorded(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        let failures = Cell::new(1);
        assert_eq!(runtime.block_on(waits_a_second(&failures)).unwrap(), 7);
    });
    let (_, attempts_recorded, attempts) = call_and_attempts(&seen);
    assert_eq!(attempts_recorded, Some(2));
    let opened = |id: u64| seen.spans[&id].opened.unwrap();
    let gap = opened(attempts[1].1) - opened(attempts[0].1);
    assert!(
        gap >= Duration::from_secs(1),
        "the second attempt's span opened {gap:?} after the first's"
    );
}

/// Fails while `failures` lasts, then panics if `panic` is set.
#[retry(max = 3, sleep = no_wait)]
fn counted(failures: &Cell<u32>, panic: bool) -> io::Result<u32> {
    if failures.get() > 0 {
        failures.set(failures.get() - 1);
        return Err(io::ErrorKind::ConnectionReset.into());
    }
    assert!(!panic, "the body panicked");
    Ok(7)
}

#[test]
fn under_a_subscriber_calls_are_counted_as_without_one() {
    let stats = || reattempt::stats::get("spans::counted").unwrap();
    recorded(|| {
        assert_eq!(counted(&Cell::new(0), false).unwrap(), 7);
        assert_eq!(counted(&Cell::new(1), false).unwrap(), 7);
        let first = std::panic::catch_unwind(|| counted(&Cell::new(0), true));
        let after_a_retry = std::panic::catch_unwind(|| counted(&Cell::new(1), true));
        assert!(first.is_err() && after_a_retry.is_err());
        assert!(counted(&Cell::new(3), false).is_err());
    });
    let stats = stats();
    assert_eq!(stats.calls, 5);
    assert_eq!(stats.first_try_successes, 1);
    assert_eq!(stats.successes_after_retries, 1);
    assert_eq!(stats.cancelled, 2);
    assert_eq!(stats.give_ups.exhausted, 1);
    // 1 + 2 + 1 + 2 + 3
    assert_eq!(stats.attempts, 9);
}

#[retry(max = 2, backoff = none, idempotent = key)]
fn keyed(sent: &std::cell::RefCell<Vec<String>>) -> io::Result<()> {
    let key = reattempt::attempt().unwrap().call_id().idempotency_key();
    sent.borrow_mut().push(key);
    Err(io::ErrorKind::ConnectionReset.into())
}

/// A call that sends an idempotency key has it on its span.
#[test]
fn the_call_span_of_idempotent_key_carries_the_key_it_sends() {
    let sent = std::cell::RefCell::new(Vec::new());
    let seen = recorded(|| {
        keyed(&sent).unwrap_err();
    });
    let (call, _, _) = call_and_attempts(&seen);
    let sent = sent.into_inner();
    assert_eq!(sent.len(), 2);
    assert_eq!(
        seen.spans[&call].texts.get("retry.idempotency_key"),
        Some(&sent[0])
    );
    // Another call's span has none.
    let seen = recorded(|| {
        flaky(&Cell::new(0)).unwrap();
    });
    let (call, _, _) = call_and_attempts(&seen);
    assert_eq!(seen.spans[&call].texts.get("retry.idempotency_key"), None);
}

/// Logs an event in its attempt, then panics if asked to.
#[retry(max = 3, backoff = none)]
async fn panics_inside(panic: bool) -> io::Result<u32> {
    tracing::info!(target: "body", "inside");
    assert!(!panic, "the body panicked");
    Ok(7)
}

/// Counts the spans entered and left.
#[derive(Clone, Default)]
struct EnterExit(Arc<Mutex<(u32, u32)>>);

impl<S: Subscriber> Layer<S> for EnterExit {
    fn on_enter(&self, _: &Id, _: Context<'_, S>) {
        self.0.lock().unwrap().0 += 1;
    }

    fn on_exit(&self, _: &Id, _: Context<'_, S>) {
        self.0.lock().unwrap().1 += 1;
    }
}

/// Pending on its first poll, ready on the next.
struct PendingOnce(bool);

impl Future for PendingOnce {
    type Output = ();

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[retry(max = 3, backoff = none)]
async fn pends_once() -> io::Result<u32> {
    tracing::info!(target: "body", "inside");
    PendingOnce(false).await;
    Ok(7)
}

/// Between two polls of an attempt, the thread is in neither its span nor
/// its frame.
#[test]
fn between_polls_an_attempt_is_in_no_span() {
    let counts = EnterExit::default();
    let subscriber = tracing_subscriber::registry().with(counts.clone());
    tracing::subscriber::with_default(subscriber, || {
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        let mut call = Box::pin(pends_once());
        assert!(call.as_mut().poll(&mut cx).is_pending());
        assert!(tracing::Span::current().is_none(), "between polls");
        assert!(reattempt::attempt().is_none(), "between polls");
        assert_eq!(
            counts.0.lock().unwrap().0,
            1,
            "the attempt's span was entered"
        );
        assert!(matches!(call.as_mut().poll(&mut cx), Poll::Ready(Ok(7))));
    });
    let (entered, left) = *counts.0.lock().unwrap();
    assert_eq!((entered, left), (2, 2), "entered and left on each poll");
}

/// An attempt whose poll unwinds leaves its span and its frame on the way
/// out: every span entered is left, and no attempt stays current.
#[test]
fn an_async_attempt_that_panics_leaves_its_span_and_its_frame() {
    let counts = EnterExit::default();
    let subscriber = tracing_subscriber::registry().with(counts.clone());
    tracing::subscriber::with_default(subscriber, || {
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            block_on(panics_inside(true))
        }));
        assert!(unwound.is_err(), "the panic reaches the caller");
        assert!(reattempt::attempt().is_none(), "no attempt left current");
        assert_eq!(block_on(panics_inside(false)).unwrap(), 7);
    });
    let (entered, left) = *counts.0.lock().unwrap();
    assert!(entered >= 2, "each call's attempt span was entered");
    assert_eq!(entered, left, "every span entered was left");
}

fn cached(_: io::Error) -> io::Result<u32> {
    Ok(0)
}

#[retry(max = 2, backoff = none, fallback = cached)]
fn answered_by_fallback() -> io::Result<u32> {
    Err(io::ErrorKind::ConnectionReset.into())
}

#[retry(max = 2, backoff = none, fallback = cached)]
async fn answered_by_fallback_async() -> io::Result<u32> {
    Err(io::ErrorKind::ConnectionReset.into())
}

static REJECTING: reattempt::AdaptiveThrottle =
    reattempt::AdaptiveThrottle::new(1.0, Duration::from_secs(600))
        .min_requests(1)
        .max_rejection(0.99);

/// Every error an overload signal, so that the throttle soon rejects.
#[retry(max = 1, on = |_: &io::Error| reattempt::Class::RateLimited, throttle = REJECTING)]
fn throttled_away() -> io::Result<u32> {
    Err(io::ErrorKind::ConnectionRefused.into())
}

/// The call span of a call that gave up says why, and that its fallback
/// answered.
#[test]
fn the_call_span_says_a_fallback_answered_and_a_throttle_rejected() {
    for seen in [
        recorded(|| assert_eq!(answered_by_fallback().unwrap(), 0)),
        recorded(|| assert_eq!(block_on(answered_by_fallback_async()).unwrap(), 0)),
    ] {
        let (call, attempts, _) = call_and_attempts(&seen);
        let texts = &seen.spans[&call].texts;
        assert_eq!(attempts, Some(2));
        assert_eq!(
            texts.get("retry.give_up").map(String::as_str),
            Some("exhausted")
        );
        assert_eq!(
            texts.get("retry.fallback").map(String::as_str),
            Some("true")
        );
    }
    for _ in 0..20 {
        let _ = throttled_away();
    }
    let seen = recorded(|| {
        for _ in 0..20 {
            let _ = throttled_away();
        }
    });
    let rejected = seen
        .spans
        .values()
        .filter(|span| span.texts.get("retry.give_up").map(String::as_str) == Some("throttled"))
        .count();
    assert!(
        rejected >= 10,
        "{rejected} of 20 calls' spans say `throttled`"
    );
}
