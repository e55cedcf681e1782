use reattempt::{RetryBreaker, retry};
use std::time::Duration;

static PAYMENTS: RetryBreaker =
    RetryBreaker::new(0.5, 20, Duration::from_secs(10), Duration::from_secs(5), 3);

#[derive(Debug)]
struct PaymentError;

impl std::fmt::Display for PaymentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("payment failed")
    }
}

impl reattempt::Classified for PaymentError {
    fn classification(&self) -> reattempt::Classification {
        reattempt::Classification::transient()
    }
}

// Failing fast needs an error to fail with: `PaymentError` has no
// `From<BreakerOpen>`.
#[retry(breaker = classic(PAYMENTS))]
fn charge() -> Result<(), PaymentError> {
    Ok(())
}

fn main() {}
