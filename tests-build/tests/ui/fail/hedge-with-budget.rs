use reattempt::{RetryBudget, retry};
use std::time::Duration;

static READS: RetryBudget = RetryBudget::new(0.1, 10, Duration::from_secs(10));

#[retry(max = 3, hedge = 50ms, budget = READS)]
async fn read() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = read();
}
