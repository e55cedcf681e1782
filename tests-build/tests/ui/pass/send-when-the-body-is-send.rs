use reattempt::retry;
use std::sync::Arc;

#[retry(max = 3)]
async fn fetch(shared: Arc<u32>, counter: &mut u32) -> std::io::Result<u32> {
    *counter += 1;
    tokio::task::yield_now().await;
    Ok(*shared + *counter)
}

fn assert_send<T: Send>(_: T) {}

fn main() {
    let mut counter = 0;
    assert_send(fetch(Arc::new(1), &mut counter));
}
