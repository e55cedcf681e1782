use reattempt::{AdaptiveThrottle, retry};
use std::time::Duration;

// K below 1 would reject requests the backend accepts.
static LOOSE: AdaptiveThrottle = AdaptiveThrottle::new(0.5, Duration::from_secs(120));

static NO_WINDOW: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::ZERO);

static ALL_REJECTED: AdaptiveThrottle =
    AdaptiveThrottle::new(2.0, Duration::from_secs(120)).max_rejection(1.0);

// Shared by every call: a value built here is refused.
#[retry(throttle = AdaptiveThrottle::new(2.0, Duration::from_secs(120)))]
fn inline() -> std::io::Result<()> {
    Ok(())
}

#[retry(throttle = 2)]
fn a_number() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
