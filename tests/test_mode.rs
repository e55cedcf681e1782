//! Test mode reaches the tasks a test spawns onto other threads when they
//! are covered by its guard.

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
