//! Statistics stay exact under contention, count the calls that were
//! cancelled before they ended, and say what a retried call's time covers.

use std::io::{self, ErrorKind};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use reattempt::retry;

#[retry(max = 2, backoff = none)]
fn always_fine(x: u64) -> io::Result<u64> {
    Ok(std::hint::black_box(x))
}

#[test]
fn every_first_try_success_is_counted_from_eight_threads() {
    const THREADS: u64 = 8;
    const CALLS: u64 = 100_000;
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            std::thread::spawn(move || {
                for i in 0..CALLS {
                    always_fine(t * CALLS + i).unwrap();
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    let stats = reattempt::stats::get("stats::always_fine").unwrap();
    assert_eq!(stats.first_try_successes, THREADS * CALLS);
    assert_eq!(stats.calls, THREADS * CALLS);
    assert_eq!(stats.attempts, THREADS * CALLS);
}

#[retry(max = 2, backoff = none)]
async fn fine_after_a_yield(x: u64) -> io::Result<u64> {
    tokio::task::yield_now().await;
    Ok(std::hint::black_box(x))
}

/// An async call that succeeds at once never builds its call state: what it
/// counts, and that it ended rather than was cancelled, is kept without it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_async_first_try_success_is_counted_and_none_as_cancelled() {
    const TASKS: u64 = 8;
    const CALLS: u64 = 2_000;
    let tasks: Vec<_> = (0..TASKS)
        .map(|t| {
            tokio::spawn(async move {
                for i in 0..CALLS {
                    fine_after_a_yield(t * CALLS + i).await.unwrap();
                }
            })
        })
        .collect();
    let all = async {
        for task in tasks {
            task.await.unwrap();
        }
    };
    tokio::time::timeout(Duration::from_secs(60), all)
        .await
        .expect("the calls end");
    let stats = reattempt::stats::get("stats::fine_after_a_yield").unwrap();
    assert_eq!(
        (
            stats.calls,
            stats.first_try_successes,
            stats.attempts,
            stats.cancelled
        ),
        (TASKS * CALLS, TASKS * CALLS, TASKS * CALLS, 0)
    );
}

#[retry(max = 3, backoff = fixed(10s))]
async fn slow_to_recover() -> io::Result<()> {
    Err(ErrorKind::ConnectionReset.into())
}

#[retry(max = 3, backoff = none)]
async fn never_answers() -> io::Result<()> {
    std::future::pending().await
}

#[tokio::test(start_paused = true)]
async fn calls_dropped_during_a_wait_or_an_attempt_are_counted_as_cancelled() {
    let waiting = tokio::time::timeout(Duration::from_secs(1), slow_to_recover()).await;
    assert!(
        waiting.is_err(),
        "the call is still waiting out its backoff"
    );
    let running = tokio::time::timeout(Duration::from_secs(1), never_answers()).await;
    assert!(running.is_err(), "the first attempt never ends");

    let stats = reattempt::stats::get("stats::slow_to_recover").unwrap();
    assert_eq!((stats.cancelled, stats.calls, stats.attempts), (1, 1, 1));
    assert_eq!(stats.give_ups.total(), 0);
    let stats = reattempt::stats::get("stats::never_answers").unwrap();
    assert_eq!((stats.cancelled, stats.calls, stats.attempts), (1, 1, 1));
}

#[retry(max = 3, backoff = none)]
fn panics() -> io::Result<()> {
    panic!("the body panicked")
}

/// Fails its first attempt, which runs before the call is built, and
/// panics in its retry, which the built call runs.
#[retry(max = 3, backoff = none)]
fn panics_on_its_retry(calls: &std::cell::Cell<u32>) -> io::Result<()> {
    calls.set(calls.get() + 1);
    if calls.get() == 1 {
        return Err(io::ErrorKind::ConnectionReset.into());
    }
    panic!("the retry panicked")
}

#[test]
fn a_call_whose_retry_panics_is_counted_as_cancelled_once() {
    let calls = std::cell::Cell::new(0);
    let unwound =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| panics_on_its_retry(&calls)));
    assert!(unwound.is_err());
    assert_eq!(calls.get(), 2);
    let stats = reattempt::stats::get("stats::panics_on_its_retry").unwrap();
    assert_eq!(
        (
            stats.cancelled,
            stats.calls,
            stats.attempts,
            stats.give_ups.total()
        ),
        (1, 1, 2, 0)
    );
}

/// A value whose judgement panics: the call ends there, before any retry.
struct Unjudgeable;

impl reattempt::ClassifiedValue for Unjudgeable {
    fn failure(&self) -> Option<reattempt::Classification> {
        panic!("the value's judgement panicked")
    }
}

#[retry(max = 3, backoff = none)]
fn judged_by_a_panic() -> io::Result<Unjudgeable> {
    Ok(Unjudgeable)
}

#[test]
fn a_call_whose_value_judgement_panics_is_counted_as_cancelled() {
    let unwound = std::panic::catch_unwind(judged_by_a_panic);
    assert!(unwound.is_err());
    let stats = reattempt::stats::get("stats::judged_by_a_panic").unwrap();
    assert_eq!(
        (stats.cancelled, stats.calls, stats.first_try_successes),
        (1, 1, 0)
    );
}

#[test]
fn a_call_whose_body_panics_is_counted_as_cancelled() {
    let unwound = std::panic::catch_unwind(panics);
    assert!(unwound.is_err());
    let stats = reattempt::stats::get("stats::panics").unwrap();
    assert_eq!((stats.cancelled, stats.calls, stats.attempts), (1, 1, 1));
}

/// [`panics_on_its_retry`], async: the first attempt runs before the call
/// state is built, the retry in the built call, and `on_first` makes the
/// first attempt panic instead.
#[retry(max = 3, backoff = none)]
async fn panics_async(calls: &AtomicU32, on_first: bool) -> io::Result<()> {
    tokio::task::yield_now().await;
    let attempt = calls.fetch_add(1, Ordering::Relaxed) + 1;
    if attempt == 1 && !on_first {
        return Err(io::ErrorKind::ConnectionReset.into());
    }
    panic!("attempt {attempt} panicked")
}

#[retry(max = 3, backoff = none)]
async fn judged_by_a_panic_async() -> io::Result<Unjudgeable> {
    Ok(Unjudgeable)
}

/// Runs `future` on a runtime of this thread, for at most ten seconds, and
/// catches its panic.
fn unwinds<T>(future: impl Future<Output = T>) -> bool {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let run = std::panic::AssertUnwindSafe(|| {
        runtime.block_on(async { tokio::time::timeout(Duration::from_secs(10), future).await })
    });
    match std::panic::catch_unwind(run) {
        Ok(ended) => {
            ended.expect("the call ends");
            false
        }
        Err(_) => true,
    }
}

#[test]
fn an_async_call_whose_attempt_or_judgement_panics_is_counted_as_cancelled() {
    let on_first = AtomicU32::new(0);
    assert!(unwinds(panics_async(&on_first, true)));
    let on_retry = AtomicU32::new(0);
    assert!(unwinds(panics_async(&on_retry, false)));
    assert_eq!((on_first.into_inner(), on_retry.into_inner()), (1, 2));
    assert!(unwinds(judged_by_a_panic_async()));
    assert!(
        reattempt::attempt().is_none(),
        "no attempt is left current on this thread"
    );
    let stats = reattempt::stats::get("stats::panics_async").unwrap();
    assert_eq!(
        (
            stats.cancelled,
            stats.calls,
            stats.attempts,
            stats.give_ups.total()
        ),
        (2, 2, 3, 0)
    );
    let stats = reattempt::stats::get("stats::judged_by_a_panic_async").unwrap();
    assert_eq!(
        (stats.cancelled, stats.calls, stats.first_try_successes),
        (1, 1, 0)
    );
}

/// Three seconds an attempt; the first fails, the second succeeds.
async fn slow_attempt(calls: &AtomicU32) -> io::Result<()> {
    tokio::time::sleep(Duration::from_secs(3)).await;
    match calls.fetch_add(1, Ordering::Relaxed) {
        0 => Err(ErrorKind::ConnectionReset.into()),
        _ => Ok(()),
    }
}

#[retry(max = 3, backoff = fixed(1s))]
async fn slow_then_fine(calls: &AtomicU32) -> io::Result<()> {
    slow_attempt(calls).await
}

#[retry(max = 3, backoff = fixed(1s), deadline = 1m)]
async fn slow_then_fine_with_deadline(calls: &AtomicU32) -> io::Result<()> {
    slow_attempt(calls).await
}

#[retry(max = 3, backoff = fixed(1s), after = |_| {})]
async fn slow_then_fine_with_a_hook(calls: &AtomicU32) -> io::Result<()> {
    slow_attempt(calls).await
}

#[retry(max = 3, backoff = fixed(1s))]
async fn slow_and_fine() -> io::Result<()> {
    tokio::time::sleep(Duration::from_secs(3)).await;
    Ok(())
}

/// With the `timing` feature (which `metrics` turns on) a first-try
/// success is timed too, on the function's clock (tokio's, paused here) at
/// both ends.
#[tokio::test(start_paused = true)]
async fn a_first_try_success_is_timed_on_the_functions_clock() {
    slow_and_fine().await.unwrap();
    let stats = reattempt::stats::get("stats::slow_and_fine").unwrap();
    assert_eq!(stats.first_try_successes, 1);
    // Without the feature, a first-try success reads no clock.
    let (time, timed) = if cfg!(feature = "timing") {
        (3, 1)
    } else {
        (0, 0)
    };
    assert_eq!(stats.time, Duration::from_secs(time));
    assert_eq!(stats.timed_calls, timed);
}

/// A retried call's time counts from its start, its first attempt
/// included, or it is not counted: the clock is read as a call starts when
/// its time will be seen (a deadline, hooks, a dead-letter sink, a
/// subscriber that listens, or the `timing` feature), and a call that read
/// none is left out of `time` and of `timed_calls`.
#[tokio::test(start_paused = true)]
async fn a_retried_calls_time_counts_from_its_start_or_not_at_all() {
    // 0-3 s the first attempt fails, 3-4 s the wait, 4-7 s the second.
    slow_then_fine(&AtomicU32::new(0)).await.unwrap();
    slow_then_fine_with_deadline(&AtomicU32::new(0))
        .await
        .unwrap();
    slow_then_fine_with_a_hook(&AtomicU32::new(0))
        .await
        .unwrap();
    let stats = |name| reattempt::stats::get(name).unwrap();
    let plain = stats("stats::slow_then_fine");
    let (time, timed) = if cfg!(feature = "timing") {
        (7, 1)
    } else {
        (0, 0)
    };
    assert_eq!(
        (plain.time, plain.timed_calls),
        (Duration::from_secs(time), timed)
    );
    let from_the_start = [
        "stats::slow_then_fine_with_deadline",
        "stats::slow_then_fine_with_a_hook",
    ];
    for name in from_the_start {
        let stats = stats(name);
        assert_eq!(
            (stats.time, stats.timed_calls),
            (Duration::from_secs(7), 1),
            "{name}"
        );
    }
}

fn slow_sync_attempt(calls: &AtomicU32) -> io::Result<()> {
    std::thread::sleep(Duration::from_millis(30));
    match calls.fetch_add(1, Ordering::Relaxed) {
        0 => Err(ErrorKind::ConnectionReset.into()),
        _ => Ok(()),
    }
}

#[retry(max = 3, backoff = fixed(20ms))]
fn sync_slow_then_fine(calls: &AtomicU32) -> io::Result<()> {
    slow_sync_attempt(calls)
}

#[retry(max = 3, backoff = fixed(20ms), deadline = 1m)]
fn sync_slow_then_fine_with_deadline(calls: &AtomicU32) -> io::Result<()> {
    slow_sync_attempt(calls)
}

/// A sync call is timed on the system's monotonic clock: what it reports
/// is at least the waits and attempts it covers, and at most the time the
/// caller saw pass.
#[test]
fn the_time_of_a_retried_sync_call_is_real_time() {
    let time = |name| reattempt::stats::get(name).unwrap().time;
    let outer = std::time::Instant::now();
    sync_slow_then_fine(&AtomicU32::new(0)).unwrap();
    let first = outer.elapsed();
    // With the `timing` feature, from the start: both attempts' 30 ms and
    // the 20 ms wait; without it the call is not timed at all.
    let measured = time("stats::sync_slow_then_fine");
    if cfg!(feature = "timing") {
        assert!(measured >= Duration::from_millis(80), "{measured:?}");
    } else {
        assert_eq!(measured, Duration::ZERO);
    }
    assert!(measured <= first, "{measured:?} > {first:?}");

    let outer = std::time::Instant::now();
    sync_slow_then_fine_with_deadline(&AtomicU32::new(0)).unwrap();
    let second = outer.elapsed();
    let measured = time("stats::sync_slow_then_fine_with_deadline");
    assert!(measured >= Duration::from_millis(80), "{measured:?}");
    assert!(measured <= second, "{measured:?} > {second:?}");
}
