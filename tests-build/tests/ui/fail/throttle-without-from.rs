use reattempt::{AdaptiveThrottle, retry};
use std::time::Duration;

static PRICES: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(120));

#[derive(Debug)]
struct PriceError;

impl std::fmt::Display for PriceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("no price")
    }
}

impl reattempt::Classified for PriceError {
    fn classification(&self) -> reattempt::Classification {
        reattempt::Classification::transient()
    }
}

// A rejected call needs an error to return: `PriceError` has no
// `From<Throttled>`.
#[retry(throttle = PRICES)]
fn price() -> Result<u32, PriceError> {
    Ok(1)
}

#[retry(throttle = PRICES)]
async fn price_later() -> Result<u32, PriceError> {
    Ok(1)
}

fn main() {}
