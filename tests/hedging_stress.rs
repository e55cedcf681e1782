//! Hedged calls under the conditions users have: dropped at any point of
//! their life (a timeout, a `select!`, a shutdown), and many at once on
//! several threads under a shared limit. Every test is bounded in time.

use std::io::{self, ErrorKind};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use reattempt::{ConcurrencyLimit, retry};
use tokio::time::sleep;

/// Attempts of `cut_anywhere` running now.
static RUNNING: AtomicU32 = AtomicU32::new(0);
static CUT: ConcurrencyLimit = ConcurrencyLimit::new(3);

struct Running;

impl Running {
    fn start() -> Running {
        RUNNING.fetch_add(1, Ordering::SeqCst);
        Running
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Odd attempts fail after 40 ms, even ones (the hedges) after 5; the
/// seventh succeeds. A call goes through four rounds, each with a hedge
/// that fails beside its first attempt, and three waits: it ends at
/// 250 ms.
#[retry(max = 8, backoff = fixed(30ms), hedge = 30ms, limit = CUT)]
async fn cut_anywhere() -> io::Result<u32> {
    let _running = Running::start();
    let number = reattempt::attempt().unwrap().number();
    let took = if number % 2 == 1 { 40 } else { 5 };
    sleep(Duration::from_millis(took)).await;
    if number != 7 {
        return Err(ErrorKind::ConnectionReset.into());
    }
    Ok(number)
}

#[tokio::test(start_paused = true)]
async fn a_hedged_call_dropped_at_any_point_leaves_nothing_running_or_held() {
    let stats = || reattempt::stats::get("hedging_stress::cut_anywhere");
    let mut cancelled = 0;
    // Cut after 0, 1, 2, ... ms: before a hedge, beside one, in a wait, in
    // each round; and not at all.
    for after in 0..260 {
        let cut = tokio::time::timeout(Duration::from_millis(after), cut_anywhere()).await;
        if cut.is_err() {
            cancelled += 1;
        }
        assert_eq!(RUNNING.load(Ordering::SeqCst), 0, "cut at {after} ms");
        assert_eq!((CUT.in_use(), CUT.waiting()), (0, 0), "cut at {after} ms");
        assert_eq!(
            stats().map_or(0, |s| s.cancelled),
            cancelled,
            "cut at {after} ms"
        );
    }
    assert!(
        cancelled >= 249,
        "every call cut before its end: {cancelled}"
    );
    let uncut = tokio::time::timeout(Duration::from_secs(1), cut_anywhere()).await;
    assert_eq!(uncut.unwrap().unwrap(), 7);
}

static SHARED: ConcurrencyLimit = ConcurrencyLimit::new(3);
static AT_ONCE: AtomicU32 = AtomicU32::new(0);
static MOST_AT_ONCE: AtomicU32 = AtomicU32::new(0);

/// Counts an attempt of `contended` as running until it is dropped, a
/// hedge that lost included.
struct AtOnce;

impl AtOnce {
    fn start() -> AtOnce {
        let now = AT_ONCE.fetch_add(1, Ordering::SeqCst) + 1;
        MOST_AT_ONCE.fetch_max(now, Ordering::SeqCst);
        AtOnce
    }
}

impl Drop for AtOnce {
    fn drop(&mut self) {
        AT_ONCE.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A few milliseconds of work; hedged after 1 ms, under a limit of 3.
#[retry(max = 4, backoff = none, hedge(after = 1ms, in_flight = 3), limit = SHARED)]
async fn contended(i: u64) -> io::Result<u64> {
    let _at_once = AtOnce::start();
    tokio::time::sleep(Duration::from_millis(2 + i % 4)).await;
    Ok(i)
}

#[test]
fn many_hedged_calls_on_several_threads_keep_to_their_limit() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        // Two callers, so that permits are left for hedges; each hedge
        // that finds none is not started.
        let tasks: Vec<_> = (0..2u64)
            .map(|task| {
                tokio::spawn(async move {
                    for call in 0..200 {
                        let i = task * 200 + call;
                        assert_eq!(contended(i).await.unwrap(), i);
                    }
                })
            })
            .collect();
        let all = async {
            for task in tasks {
                task.await.unwrap();
            }
        };
        tokio::time::timeout(Duration::from_secs(120), all)
            .await
            .expect("400 calls of a few milliseconds each end well within two minutes");
        assert_eq!(AT_ONCE.load(Ordering::SeqCst), 0, "every attempt dropped");
    });
    assert!(
        MOST_AT_ONCE.load(Ordering::SeqCst) <= 3,
        "never more than the limit at once"
    );
    assert_eq!((SHARED.in_use(), SHARED.waiting()), (0, 0));
    let stats = reattempt::stats::get("hedging_stress::contended").unwrap();
    assert_eq!((stats.calls, stats.first_try_successes), (400, 400));
    assert!(stats.hedges > 0, "the calls hedged");
    assert_eq!(stats.attempts, 400 + stats.hedges);
}
