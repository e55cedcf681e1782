//! The third way a retry library adds load, hedging, under a full outage:
//! every attempt hangs until its `attempt_timeout`, so every call hedges
//! and then retries. With a `RetryBudget` of 10% the hedges and retries
//! together add at most a tenth to the first attempts; without one, every
//! call makes all the attempts `max` allows.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use reattempt::{RetryBudget, retry};

/// Attempts the backend received.
static ATTEMPTS: AtomicU64 = AtomicU64::new(0);

/// A backend that is down: it takes every attempt and never answers.
async fn down() -> io::Result<()> {
    ATTEMPTS.fetch_add(1, Ordering::Relaxed);
    std::future::pending::<()>().await;
    Ok(())
}

/// Hedges and retries may add 10% to the first attempts. The window is
/// long so that the budget sees the whole simulation.
static HEDGES: RetryBudget = RetryBudget::new(0.1, 0, Duration::from_secs(3600));

#[retry(max = 3, backoff = none, hedge = 20ms, attempt_timeout = 100ms)]
async fn hedged() -> io::Result<()> {
    down().await
}

#[retry(max = 3, backoff = none, hedge = 20ms, attempt_timeout = 100ms, budget = HEDGES)]
async fn hedged_with_budget() -> io::Result<()> {
    down().await
}

/// The load a backend that is down sees from `requests` hedged calls, as a
/// multiple of `requests`: on tokio's paused clock, so that the hours of
/// timeouts take a moment. The budget is one `static`: call this with
/// `budget` once per process.
pub fn outage_load(requests: u64, budget: bool) -> f64 {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a tokio runtime");
    let before = ATTEMPTS.load(Ordering::Relaxed);
    runtime.block_on(async {
        for _ in 0..requests {
            let failed = if budget {
                hedged_with_budget().await
            } else {
                hedged().await
            };
            assert!(failed.is_err(), "the backend is down");
        }
    });
    (ATTEMPTS.load(Ordering::Relaxed) - before) as f64 / requests as f64
}
