//! Async functions on an executor other than tokio's: with `sleep = ...`,
//! the waits, `attempt_timeout`, the deadline (which also ends a wait for
//! a permit) and the delay of a hedge all run on that sleeper, and nothing
//! asks for tokio's reactor.

use std::future::Future;
use std::io::{self, ErrorKind};
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;
use std::time::{Duration, Instant};

use reattempt::retry;

// Only the tests of the default timers read logs, and those need tokio.
#[cfg(feature = "tokio")]
mod common;

/// Runs a future to its end on this thread, parking between polls: an
/// executor with no timer and no reactor of its own.
fn block_on<F: Future>(future: F) -> F::Output {
    struct Unpark(Thread);

    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }

    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        std::thread::park();
    }
}

/// A timer on a thread of its own: the sleeper of a runtime that is not
/// tokio.
struct ThreadSleep {
    state: Arc<Mutex<(bool, Option<Waker>)>>,
}

fn thread_sleep(delay: Duration) -> ThreadSleep {
    let state = Arc::new(Mutex::new((false, None::<Waker>)));
    let timer = Arc::clone(&state);
    std::thread::spawn(move || {
        std::thread::sleep(delay);
        let mut state = timer.lock().unwrap();
        state.0 = true;
        if let Some(waker) = state.1.take() {
            waker.wake();
        }
    });
    ThreadSleep { state }
}

impl Future for ThreadSleep {
    type Output = ();

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.state.lock().unwrap();
        if state.0 {
            Poll::Ready(())
        } else {
            state.1 = Some(cx.waker().clone());
            Poll::Pending
        }
    }
}

#[retry(max = 3, backoff = fixed(5ms), attempt_timeout = 20ms, sleep = thread_sleep)]
async fn hangs_then_answers(calls: &Mutex<u32>) -> io::Result<u32> {
    hangs_then_answers_body(calls).await
}

/// Hangs on the first two calls, longer than an attempt timeout of 20 ms,
/// and answers the third.
async fn hangs_then_answers_body(calls: &Mutex<u32>) -> io::Result<u32> {
    let call = {
        let mut calls = calls.lock().unwrap();
        *calls += 1;
        *calls
    };
    if call < 3 {
        // Longer than the attempt timeout: cut.
        thread_sleep(Duration::from_secs(5)).await;
    }
    Ok(call)
}

/// Runs `call` to its end, which must come well before the 5 s that an
/// attempt of it hangs: `cut` says what must have been cut.
fn cut_in_time<T>(call: impl Future<Output = T>, cut: &str) -> T {
    let started = Instant::now();
    let output = block_on(call);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{cut} was not cut"
    );
    output
}

#[test]
fn attempt_timeout_runs_on_the_custom_sleeper() {
    let calls = Mutex::new(0);
    let answer = cut_in_time(hangs_then_answers(&calls), "a hung attempt");
    assert_eq!(answer.unwrap(), 3);
}

#[retry(max = 10, backoff = fixed(5ms), deadline = 50ms, sleep = thread_sleep)]
async fn never_answers() -> io::Result<()> {
    never_answers_body().await
}

/// Hangs for 5 s, far past any deadline here, then fails.
async fn never_answers_body() -> io::Result<()> {
    thread_sleep(Duration::from_secs(5)).await;
    Err(ErrorKind::TimedOut.into())
}

#[test]
fn the_deadline_cuts_an_attempt_on_the_custom_sleeper() {
    let error = cut_in_time(never_answers(), "the attempt").unwrap_err();
    assert_eq!(error.kind(), ErrorKind::TimedOut);
}

static HELD_ELSEWHERE: reattempt::ConcurrencyLimit = reattempt::ConcurrencyLimit::new(1);

#[retry(max = 3, backoff = fixed(5ms), deadline = 50ms, limit = HELD_ELSEWHERE, sleep = thread_sleep)]
async fn behind_a_held_permit(calls: &Mutex<u32>) -> io::Result<()> {
    *calls.lock().unwrap() += 1;
    Ok(())
}

#[test]
fn the_deadline_ends_the_wait_for_a_permit_on_the_custom_sleeper() {
    let (release, released) = std::sync::mpsc::channel::<()>();
    let (taken, was_taken) = std::sync::mpsc::channel();
    let holder = std::thread::spawn(move || {
        let _permit = HELD_ELSEWHERE.acquire_blocking();
        taken.send(()).unwrap();
        // Until the test is done, or 5 s at most.
        let _ = released.recv_timeout(Duration::from_secs(5));
    });
    was_taken.recv().unwrap();
    let calls = Mutex::new(0);
    let started = Instant::now();
    let error = block_on(behind_a_held_permit(&calls)).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the wait for the permit was cut"
    );
    assert_eq!(error.kind(), ErrorKind::TimedOut);
    assert_eq!(*calls.lock().unwrap(), 0, "no attempt ran");
    release.send(()).unwrap();
    holder.join().unwrap();
}

/// The first attempt hangs 5 s; its hedge, after 20 ms on the custom
/// sleeper, answers.
#[retry(max = 3, backoff = none, hedge = 20ms, sleep = thread_sleep)]
async fn hedged_on_the_sleeper(calls: &Mutex<u32>) -> io::Result<u32> {
    let call = {
        let mut calls = calls.lock().unwrap();
        *calls += 1;
        *calls
    };
    if call == 1 {
        thread_sleep(Duration::from_secs(5)).await;
    }
    Ok(call)
}

#[test]
fn a_hedge_is_timed_by_the_custom_sleeper() {
    let calls = Mutex::new(0);
    let answer = cut_in_time(hedged_on_the_sleeper(&calls), "the slow attempt");
    assert_eq!(answer.unwrap(), 2, "the hedge's answer");
}

/// Without `sleep = ..`, an async function's waits and timers are tokio's;
/// polled outside any tokio runtime, where tokio's timer panics, a thread
/// of reattempt's own ends them instead, and a warning says so once.
#[cfg(feature = "tokio")]
mod outside_a_runtime {
    use super::*;

    #[retry(max = 3, backoff = fixed(20ms))]
    async fn fails_twice(calls: &Mutex<u32>) -> io::Result<u32> {
        let mut calls = calls.lock().unwrap();
        *calls += 1;
        if *calls < 3 {
            return Err(ErrorKind::ConnectionReset.into());
        }
        Ok(*calls)
    }

    #[retry(max = 3, backoff = fixed(5ms), attempt_timeout = 20ms)]
    async fn hangs_then_answers_on_the_default_timer(calls: &Mutex<u32>) -> io::Result<u32> {
        super::hangs_then_answers_body(calls).await
    }

    #[retry(max = 10, backoff = fixed(5ms), deadline = 50ms)]
    async fn never_answers_on_the_default_timer() -> io::Result<()> {
        super::never_answers_body().await
    }

    #[retry(max = 3, deadline = 5s)]
    async fn answers_at_once_within_a_deadline() -> io::Result<u32> {
        Ok(1)
    }

    /// The warnings that timers run outside a runtime, among `events`.
    fn outside_a_runtime(events: &[serde_json::Value]) -> Vec<&serde_json::Value> {
        events
            .iter()
            .filter(|e| {
                e["level"] == "WARN"
                    && e["fields"]["message"]
                        .as_str()
                        .is_some_and(|m| m.contains("outside a tokio runtime"))
            })
            .collect()
    }

    /// One test, so that the warning, given once for the process, comes
    /// from its first call.
    #[test]
    fn waits_and_timers_are_ended_by_a_thread_of_their_own() {
        // An attempt that ends at its first poll never polls the timer
        // that would cut it, so none is made, and nothing is said.
        let (events, text) = common::capture_logs(|| {
            assert_eq!(block_on(answers_at_once_within_a_deadline()).unwrap(), 1);
        });
        assert!(outside_a_runtime(&events).is_empty(), "{text}");

        let (events, text) = common::capture_logs(|| {
            let calls = Mutex::new(0);
            let started = Instant::now();
            assert_eq!(block_on(fails_twice(&calls)).unwrap(), 3);
            assert!(
                started.elapsed() >= Duration::from_millis(40),
                "both waits were waited"
            );

            let calls = Mutex::new(0);
            let answer = cut_in_time(
                hangs_then_answers_on_the_default_timer(&calls),
                "a hung attempt",
            );
            assert_eq!(answer.unwrap(), 3);

            let error = cut_in_time(never_answers_on_the_default_timer(), "the attempt");
            assert_eq!(error.unwrap_err().kind(), ErrorKind::TimedOut);
        });
        // Once, for the many timers of the three calls.
        let warnings = outside_a_runtime(&events);
        assert_eq!(warnings.len(), 1, "{text}");
        let message = warnings[0]["fields"]["message"].as_str().unwrap();
        assert!(message.contains("sleep = .."), "{message}");
    }
}
