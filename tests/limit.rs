//! The concurrency limit under nesting and timeouts: a retried call inside
//! an attempt that holds a permit of the same limit runs under it instead
//! of waiting for a second one (which, with the limit full of such outer
//! calls, would never come), and `attempt_timeout` counts from the moment
//! an attempt holds its permit.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use reattempt::{ConcurrencyLimit, retry};

static SINGLE: ConcurrencyLimit = ConcurrencyLimit::new(1);

#[retry(max = 2, backoff = none, limit = SINGLE)]
fn inner() -> io::Result<u32> {
    Ok(1)
}

#[retry(max = 2, backoff = none)]
fn middle() -> io::Result<u32> {
    inner()
}

#[retry(max = 2, backoff = none, limit = SINGLE)]
fn outer() -> io::Result<u32> {
    Ok(inner()? + middle()?)
}

#[test]
fn a_sync_call_nested_in_one_holding_the_same_limit_does_not_wait() {
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || done.send(outer().unwrap()).unwrap());
    let result = finished
        .recv_timeout(Duration::from_secs(20))
        .expect("outer() deadlocked on its own permit");
    assert_eq!(result, 2);
    assert_eq!(SINGLE.in_use(), 0);
}

static DATABASE: ConcurrencyLimit = ConcurrencyLimit::new(8);
static RUNNING: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

#[retry(max = 2, backoff = none, limit = DATABASE)]
async fn query_db(id: u32) -> io::Result<u32> {
    tokio::time::sleep(Duration::from_millis(5)).await;
    Ok(id)
}

#[retry(max = 2, backoff = none, limit = DATABASE)]
async fn load_user(id: u32) -> io::Result<u32> {
    let running = RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
    PEAK.fetch_max(running, Ordering::SeqCst);
    tokio::task::yield_now().await;
    let row = query_db(id).await;
    RUNNING.fetch_sub(1, Ordering::SeqCst);
    row
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_four_async_callers_of_nested_calls_sharing_a_limit_all_complete() {
    let callers: Vec<_> = (0..64).map(|id| tokio::spawn(load_user(id))).collect();
    let all = async {
        let mut done = 0;
        for caller in callers {
            caller.await.unwrap().unwrap();
            done += 1;
        }
        done
    };
    let done = tokio::time::timeout(Duration::from_secs(20), all)
        .await
        .expect("nested calls deadlocked on the shared limit");
    assert_eq!(done, 64);
    assert!(
        PEAK.load(Ordering::SeqCst) <= 8,
        "the outer calls kept to the limit"
    );
    assert_eq!(DATABASE.in_use(), 0);
}

static ONE_AT_A_TIME: ConcurrencyLimit = ConcurrencyLimit::new(1);

#[retry(max = 1, attempt_timeout = 50ms, limit = ONE_AT_A_TIME)]
async fn thirty_milliseconds(started: Arc<AtomicUsize>) -> io::Result<()> {
    started.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(30)).await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn the_attempt_timeout_does_not_count_the_wait_for_a_permit() {
    let started = Arc::new(AtomicUsize::new(0));
    let calls: Vec<_> = (0..6)
        .map(|_| tokio::spawn(thirty_milliseconds(Arc::clone(&started))))
        .collect();
    let mut succeeded = 0;
    for call in calls {
        if call.await.unwrap().is_ok() {
            succeeded += 1;
        }
    }
    assert_eq!(
        succeeded, 6,
        "each 30 ms attempt is within its 50 ms once it runs"
    );
    assert_eq!(started.load(Ordering::SeqCst), 6);
}
