use reattempt::retry;

#[retry(max = 3, hedge = 50ms, idempotent = false)]
async fn charge(amount: u64) -> std::io::Result<u64> {
    Ok(amount)
}

fn main() {
    let _ = charge(1);
}
