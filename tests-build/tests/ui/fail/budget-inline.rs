use reattempt::{ConcurrencyLimit, RetryBudget, retry};
use std::time::Duration;

#[retry(budget = RetryBudget::new(0.2, 1, Duration::from_secs(10)))]
fn with_budget() -> std::io::Result<()> {
    Ok(())
}

#[retry(limit = ConcurrencyLimit::new(4))]
fn with_limit() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
