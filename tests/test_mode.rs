//! Test mode reaches the tasks a test spawns onto the worker threads of its
//! runtime, by itself, and any other future wrapped in its guard's `cover`.

use std::cell::Cell;
use std::io::{self, ErrorKind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use reattempt::retry;
use tokio::task::JoinHandle;

#[retry(max = 4, backoff = exp(base = 10s))]
async fn flaky() -> io::Result<()> {
    Err(ErrorKind::TimedOut.into())
}

/// Awaits `tasks`, each of which must fail, in far less real time than
/// one that waited would take (each would wait a minute in all).
async fn all_fail_at_once(tasks: Vec<JoinHandle<io::Result<()>>>, expectation: &str) {
    let all = async {
        for task in tasks {
            task.await.unwrap().unwrap_err();
        }
    };
    tokio::time::timeout(Duration::from_secs(20), all)
        .await
        .expect(expectation);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_spawned_on_worker_threads_skip_their_waits_when_covered() {
    let waits = reattempt::testing::instant();
    let tasks: Vec<_> = (0..4).map(|_| tokio::spawn(waits.cover(flaky()))).collect();
    all_fail_at_once(tasks, "the covered tasks skipped their waits").await;
    let s = Duration::from_secs;
    assert_eq!(waits.retries(), 12);
    // 10 s, 20 s, then the default cap of 30 s.
    assert_eq!(waits.total(), s(4 * (10 + 20 + 30)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_spawned_on_the_tests_runtime_skip_their_waits_by_themselves() {
    let waits = reattempt::testing::instant();
    let tasks: Vec<_> = (0..4).map(|_| tokio::spawn(flaky())).collect();
    all_fail_at_once(tasks, "the spawned tasks skipped their waits").await;
    assert_eq!(waits.retries(), 12);
}

#[retry(max = 2, backoff = fixed(1ms))]
async fn quick() -> io::Result<()> {
    Err(ErrorKind::TimedOut.into())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_the_guard_is_gone_spawned_tasks_wait_again() {
    let waits = reattempt::testing::instant();
    drop(waits);
    let started = Instant::now();
    tokio::spawn(quick()).await.unwrap().unwrap_err();
    assert!(
        started.elapsed() >= Duration::from_millis(1),
        "waited for real"
    );
}

#[retry(max = 2, backoff = fixed(60s))]
async fn slow_to_retry() -> io::Result<()> {
    Err(ErrorKind::TimedOut.into())
}

/// On a loaded machine a worker may not run for over a second, as if busy:
/// the guard still reaches it once it runs, and the tasks it then takes
/// skip their waits too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_busy_for_over_a_second_as_the_guard_is_made_is_covered_too() {
    let (started, busy_now) = std::sync::mpsc::channel();
    let busy = tokio::spawn(async move {
        started.send(()).unwrap();
        std::thread::sleep(Duration::from_millis(1500));
    });
    busy_now.recv().unwrap();
    let waits = reattempt::testing::instant();
    busy.await.unwrap();
    // Each task holds its worker a moment, so that both workers take some.
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            tokio::spawn(async {
                std::thread::sleep(Duration::from_millis(20));
                slow_to_retry().await
            })
        })
        .collect();
    all_fail_at_once(
        tasks,
        "the tasks on the worker that was busy skipped their waits",
    )
    .await;
    assert_eq!(waits.retries(), 8);
}

/// A worker its own test holds would hold the guard as long: the guard
/// stops waiting for it after five seconds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guard_does_not_wait_for_a_worker_as_long_as_it_is_held() {
    let (started, held) = std::sync::mpsc::channel();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let holder = tokio::spawn(async move {
        started.send(()).unwrap();
        // Held until the test lets go, or 30 s pass.
        let _ = released.recv_timeout(Duration::from_secs(30));
    });
    held.recv().unwrap();
    let made = Instant::now();
    let waits = reattempt::testing::instant();
    let waited = made.elapsed();
    // The holder may have given up already, were the guard to wait 30 s.
    let _ = release.send(());
    holder.await.unwrap();
    drop(waits);
    assert!(waited < Duration::from_secs(20), "waited {waited:?}");
}

#[retry(max = 3, backoff = fixed(1ms))]
fn fails_once(failures: &AtomicU32) -> io::Result<u32> {
    let attempt = reattempt::attempt()
        .expect("inside a retried call")
        .number();
    if failures.fetch_sub(1, Ordering::SeqCst) > 0 {
        return Err(ErrorKind::ConnectionReset.into());
    }
    Ok(attempt)
}

/// What the destructor below saw of each call: its outcome (or its panic's
/// message), how long it took, and the waits a guard made there recorded.
type Seen = (Result<u32, String>, Duration, usize);

static SEEN_IN_DESTRUCTOR: Mutex<Vec<Seen>> = Mutex::new(Vec::new());

/// A value whose drop, as its thread ends, makes retried calls, as a
/// client's or a pool's destructor that closes a connection may.
struct RetriesOnDrop;

impl Drop for RetriesOnDrop {
    fn drop(&mut self) {
        for _ in 0..2 {
            let failures = AtomicU32::new(1);
            let started = Instant::now();
            let guard = std::panic::catch_unwind(reattempt::testing::instant);
            let outcome = std::panic::catch_unwind(|| fails_once(&failures))
                .map_err(|panic| {
                    let text = panic.downcast_ref::<&str>().map(|s| s.to_string());
                    text.or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default()
                })
                .and_then(|outcome| outcome.map_err(|e| e.to_string()));
            let recorded = guard.map_or(usize::MAX, |guard| guard.retries());
            let seen = (outcome, started.elapsed(), recorded);
            SEEN_IN_DESTRUCTOR.lock().unwrap().push(seen);
        }
    }
}

std::thread_local! {
    static RETRIES_ON_DROP: Cell<Option<RetriesOnDrop>> = const { Cell::new(None) };
}

/// A thread's locals are destroyed in the reverse of the order they were
/// first used, so the library's record of instant waits, first used after
/// the value above, is gone when that value drops. Its retried calls still
/// run, and wait for real, and a guard made there records nothing; nothing
/// panics, which there would abort the process.
#[test]
fn a_retry_made_as_a_threads_locals_are_destroyed_runs_and_waits_for_real() {
    // Held on the test's thread, so that retries look for a recording.
    let _waits = reattempt::testing::instant();
    std::thread::spawn(|| {
        RETRIES_ON_DROP.with(|slot| slot.set(Some(RetriesOnDrop)));
        let own = reattempt::testing::instant();
        assert_eq!(fails_once(&AtomicU32::new(1)).unwrap(), 2);
        assert_eq!(own.delays(), [Duration::from_millis(1)]);
    })
    .join()
    .unwrap();
    let seen = std::mem::take(&mut *SEEN_IN_DESTRUCTOR.lock().unwrap());
    assert_eq!(seen.len(), 2, "{seen:?}");
    for (outcome, took, recorded) in seen {
        assert_eq!(outcome, Ok(2));
        assert!(took >= Duration::from_millis(1), "took {took:?}");
        assert_eq!(recorded, 0);
    }
}

#[retry(max = 2, backoff = fixed(10m))]
fn waits_ten_minutes() -> io::Result<()> {
    Err(ErrorKind::TimedOut.into())
}

/// Guards dropped in another order than they were made: each covers the
/// thread's calls for as long as it lives, and no longer. On a thread of
/// its own, so that a call that waited for real fails the test instead of
/// holding it ten minutes.
#[test]
fn guards_dropped_out_of_order_cover_calls_while_they_live_and_no_longer() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let older = reattempt::testing::instant();
        let newer = reattempt::testing::instant();
        drop(older);
        waits_ten_minutes().unwrap_err();
        let recorded = newer.delays();
        drop(newer);
        // Another thread's guard makes retries look for this thread's.
        let (held, hold) = std::sync::mpsc::channel();
        let (release, released) = std::sync::mpsc::channel::<()>();
        let elsewhere = std::thread::spawn(move || {
            let _guard = reattempt::testing::instant();
            held.send(()).unwrap();
            let _ = released.recv_timeout(Duration::from_secs(30));
        });
        hold.recv().unwrap();
        let started = Instant::now();
        let outcome = fails_once(&AtomicU32::new(1));
        let took = started.elapsed();
        release.send(()).unwrap();
        elsewhere.join().unwrap();
        done.send((recorded, outcome.unwrap(), took)).unwrap();
    });
    let (recorded, attempts, took) = finished
        .recv_timeout(Duration::from_secs(20))
        .expect("the call under the newer guard skipped its wait");
    assert_eq!(recorded, [Duration::from_secs(600)]);
    assert_eq!(attempts, 2);
    assert!(
        took >= Duration::from_millis(1),
        "with no guard alive on its thread, the retry must wait for real; it took {took:?}"
    );
}
