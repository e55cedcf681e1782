use reattempt::dynamic::DynamicPolicy;
use reattempt::{ConcurrencyLimit, retry};
use std::sync::Arc;
use std::time::Duration;

#[retry(max = 3)]
async fn fetch(shared: Arc<u32>, counter: &mut u32) -> std::io::Result<u32> {
    *counter += 1;
    tokio::task::yield_now().await;
    Ok(*shared + *counter)
}

static DATABASE: ConcurrencyLimit = ConcurrencyLimit::new(2);

// Every wrapper an attempt can have: its permit, waited for against the
// deadline, its timer, and a dynamic policy's.
#[retry(max = 3, limit = DATABASE, deadline = 5s, attempt_timeout = 1s, policy = DynamicPolicy::new().deadline(Duration::from_secs(4)))]
async fn query(shared: Arc<u32>, counter: &mut u32) -> std::io::Result<u32> {
    *counter += 1;
    tokio::task::yield_now().await;
    Ok(*shared + *counter)
}

fn assert_send<T: Send>(_: T) {}

fn main() {
    let mut counter = 0;
    assert_send(fetch(Arc::new(1), &mut counter));
    assert_send(query(Arc::new(1), &mut counter));
}
