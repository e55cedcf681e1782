use reattempt::retry;

struct Order {
    id: u64,
}

fn submit(order: Order) -> std::io::Result<u64> {
    Ok(order.id)
}

// A struct, moved into a call in an async body: named at the move.
#[retry(max = 3)]
async fn place(order: Order, note: String) -> std::io::Result<u64> {
    let _kept = (note, 1);
    submit(order)
}

fn main() {}
