use reattempt::retry;
use std::rc::Rc;

#[retry(max = 3)]
async fn fetch(shared: Rc<u32>) -> std::io::Result<u32> {
    tokio::task::yield_now().await;
    Ok(*shared)
}

fn assert_send<T: Send>(_: T) {}

fn main() {
    assert_send(fetch(Rc::new(1)));
}
