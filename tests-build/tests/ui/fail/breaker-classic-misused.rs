use reattempt::{RetryBreaker, retry};
use std::time::Duration;

static PAYMENTS: RetryBreaker =
    RetryBreaker::new(0.5, 20, Duration::from_secs(10), Duration::from_secs(5), 3);

#[retry(breaker = classic())]
fn empty() -> std::io::Result<()> {
    Ok(())
}

#[retry(breaker = classic(PAYMENTS, PAYMENTS))]
fn two() -> std::io::Result<()> {
    Ok(())
}

#[retry(breaker = classic(RetryBreaker::new(0.5, 20, Duration::from_secs(10), Duration::from_secs(5), 3)))]
fn inline() -> std::io::Result<()> {
    Ok(())
}

#[retry(breaker = fast(PAYMENTS))]
fn unknown_mode() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
