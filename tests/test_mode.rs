//! Test mode reaches the tasks a test spawns onto the worker threads of its
//! runtime, by itself, and any other future wrapped in its guard's `cover`.

use std::io::{self, ErrorKind};
use std::time::Duration;

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
    let started = std::time::Instant::now();
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
    let made = std::time::Instant::now();
    let waits = reattempt::testing::instant();
    let waited = made.elapsed();
    // The holder may have given up already, were the guard to wait 30 s.
    let _ = release.send(());
    holder.await.unwrap();
    drop(waits);
    assert!(waited < Duration::from_secs(20), "waited {waited:?}");
}
