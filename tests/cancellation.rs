//! Calls dropped at any await give back what they took: budget tokens of
//! retries that never ran, and permits.

use std::io::{self, ErrorKind};
use std::time::Duration;

use reattempt::{ConcurrencyLimit, RetryBudget, retry};

static WAITS: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600));

#[retry(max = 5, backoff = fixed(10s), budget = WAITS)]
async fn fails_then_waits() -> io::Result<()> {
    Err(ErrorKind::ConnectionReset.into())
}

#[tokio::test(start_paused = true)]
async fn a_call_dropped_during_its_wait_gives_its_budget_token_back() {
    for _ in 0..100 {
        let cut = tokio::time::timeout(Duration::from_secs(1), fails_then_waits()).await;
        assert!(cut.is_err(), "each call is dropped during its first wait");
    }
    // 100 first attempts deposited 100 tokens; each call took one for its
    // retry and gave it back when dropped.
    assert_eq!(WAITS.available(), 100.0);
    let stats = reattempt::stats::get("cancellation::fails_then_waits").unwrap();
    assert_eq!((stats.cancelled, stats.attempts), (100, 100));
}

static QUEUE: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600));
static ONE: ConcurrencyLimit = ConcurrencyLimit::new(1);

#[retry(max = 3, backoff = fixed(1s), budget = QUEUE, limit = ONE)]
async fn retried_behind_a_permit(hold: bool) -> io::Result<()> {
    if hold {
        std::future::pending::<()>().await;
    }
    Err(ErrorKind::ConnectionReset.into())
}

#[tokio::test(start_paused = true)]
async fn a_call_dropped_while_queued_for_a_permit_gives_its_budget_token_back() {
    let retried = tokio::spawn(tokio::time::timeout(
        Duration::from_secs(5),
        retried_behind_a_permit(false),
    ));
    // The first attempt fails at once; while it waits out its second, a
    // call that never ends takes the only permit.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let holder = tokio::spawn(retried_behind_a_permit(true));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(ONE.in_use(), 1);
    assert!(retried.await.unwrap().is_err(), "cut while queued");
    holder.abort();
    let _ = holder.await;
    assert_eq!(ONE.in_use(), 0);
    // Two first attempts deposited two tokens; the queued retry took one and
    // gave it back.
    assert_eq!(QUEUE.available(), 2.0);
}
