//! Test mode reaches the tasks a test spawns onto the worker threads of its
//! runtime, by itself, and any other future wrapped in its guard's `cover`.

use std::io::{self, ErrorKind};
use std::time::Duration;

use reattempt::retry;

#[retry(max = 4, backoff = exp(base = 10s))]
async fn flaky() -> io::Result<()> {
    Err(ErrorKind::TimedOut.into())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_spawned_on_worker_threads_skip_their_waits_when_covered() {
    let waits = reattempt::testing::instant();
    let tasks: Vec<_> = (0..4).map(|_| tokio::spawn(waits.cover(flaky()))).collect();
    let all = async {
        for task in tasks {
            task.await.unwrap().unwrap_err();
        }
    };
    // Real time: uncovered, each task would sleep 60 s.
    tokio::time::timeout(Duration::from_secs(20), all)
        .await
        .expect("the covered tasks skipped their waits");
    let s = Duration::from_secs;
    assert_eq!(waits.retries(), 12);
    // 10 s, 20 s, then the default cap of 30 s.
    assert_eq!(waits.total(), s(4 * (10 + 20 + 30)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_spawned_on_the_tests_runtime_skip_their_waits_by_themselves() {
    let waits = reattempt::testing::instant();
    let tasks: Vec<_> = (0..4).map(|_| tokio::spawn(flaky())).collect();
    let all = async {
        for task in tasks {
            task.await.unwrap().unwrap_err();
        }
    };
    // Real time: a task that waited would sleep 60 s.
    tokio::time::timeout(Duration::from_secs(20), all)
        .await
        .expect("the spawned tasks skipped their waits");
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
