use std::future::Future;

use reattempt::retry;

struct Order {
    id: u64,
}

fn submit(order: Order) -> std::io::Result<u64> {
    Ok(order.id)
}

// A struct moved in the async block that a future-returning function ends
// with. The attribute reads the body's statements to find that block, and
// looks for moves in them, but not inside an async block: the error is
// rustc's own, at the attribute, without the `clone(..)` hint an `async fn`
// gets (`by-value-argument-moved-async.rs`).
#[retry(max = 3)]
fn place(order: Order) -> impl Future<Output = std::io::Result<u64>> {
    async move { submit(order) }
}

fn main() {}
