//! `cargo run --example jobs`
//!
//! A batch of internal jobs against a flaky dependency, with what
//! production needs around retries: a retry budget shared by the jobs, a
//! concurrency limit, a JSON Lines dead-letter file for the jobs that fail
//! for good, an alert hook, and the statistics printed at the end.

use std::io::{self, ErrorKind};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use reattempt::dead_letter::JsonLines;
use reattempt::{Alert, ConcurrencyLimit, RetryBudget, retry};

/// Retries may add 30% to the jobs' first attempts, plus 2 a second.
static BUDGET: RetryBudget = RetryBudget::new(0.3, 2, Duration::from_secs(10));
/// At most four jobs talk to the dependency at once.
static DEPENDENCY: ConcurrencyLimit = ConcurrencyLimit::new(4);
/// Jobs that failed for good, for a person to review.
static FAILED_JOBS: JsonLines = JsonLines::new("target/failed-jobs.jsonl");

static ALERTS: AtomicU32 = AtomicU32::new(0);

fn page_on_call(alert: &Alert) {
    ALERTS.fetch_add(1, Ordering::Relaxed);
    eprintln!(
        "ALERT {}: {} {} failures in a row",
        alert.function,
        alert.count,
        alert.code.as_deref().unwrap_or("?")
    );
}

/// What the dependency does with a job: most pass, some are refused for
/// good, some need a few tries.
fn dependency(job: u32, attempt: u32) -> io::Result<u32> {
    match job % 10 {
        7 => Err(io::Error::new(
            ErrorKind::PermissionDenied,
            "job is not allowed",
        )),
        3 | 6 if attempt < 3 => Err(ErrorKind::ConnectionReset.into()),
        9 => Err(ErrorKind::TimedOut.into()),
        _ => Ok(job * 2),
    }
}

#[retry(
    max = 4,
    backoff = exp(base = 20ms, max = 200ms),
    jitter = full,
    budget = BUDGET,
    limit = DEPENDENCY,
    dead_letter = FAILED_JOBS,
    alert_after = 4,
    on_alert = page_on_call,
    fields(job),
)]
async fn run_job(job: u32) -> io::Result<u32> {
    let attempt = reattempt::attempt().map_or(1, |a| a.number());
    tokio::time::sleep(Duration::from_millis(5)).await;
    dependency(job, attempt)
}

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::ERROR)
        .with_target(false)
        .init();
    let _ = std::fs::remove_file(FAILED_JOBS.path());

    let jobs: Vec<_> = (1..=60).map(|job| tokio::spawn(run_job(job))).collect();
    let mut done = 0;
    for job in jobs {
        if let Ok(Ok(_)) = job.await {
            done += 1;
        }
    }
    // Then the dependency stops answering: the same timeout, over and over.
    for job in [69, 79] {
        if run_job(job).await.is_ok() {
            done += 1;
        }
    }

    println!(
        "\n{done} of 62 jobs done; {} alerts",
        ALERTS.load(Ordering::Relaxed)
    );
    let failed = std::fs::read_to_string(FAILED_JOBS.path()).unwrap_or_default();
    println!(
        "{} failed for good, recorded in {}",
        failed.lines().count(),
        FAILED_JOBS.path().display()
    );
    if let Some(first) = failed.lines().next() {
        println!("  first record: {first}");
    }

    println!(
        "\n{:<20} {:>6} {:>9} {:>8} {:>9} {:>8} {:>10}",
        "function", "calls", "first try", "retried", "gave up", "attempts", "time"
    );
    for stats in reattempt::stats::all() {
        println!(
            "{:<20} {:>6} {:>9} {:>8} {:>9} {:>8} {:>10.3?}",
            stats.function,
            stats.calls,
            stats.first_try_successes,
            stats.successes_after_retries,
            stats.give_ups.total(),
            stats.attempts,
            stats.time
        );
        let g = stats.give_ups;
        println!(
            "  gave up: {} exhausted, {} permanent, {} on the budget",
            g.exhausted, g.permanent, g.budget
        );
    }
}
