use std::future::Future;

use reattempt::retry;

struct Order {
    id: u64,
}

fn submit(order: Order) -> std::io::Result<u64> {
    Ok(order.id)
}

// A struct moved in the async block that a future-returning function ends
// with: that block's content is what each attempt runs, so the move gets
// the `clone(..)` hint an `async fn` gets (`by-value-argument-moved-async.rs`).
// What comes before the block runs once and may move it
// (`tests/shapes.rs`).
#[retry(max = 3)]
fn place(order: Order) -> impl Future<Output = std::io::Result<u64>> {
    async move { submit(order) }
}

fn main() {}
