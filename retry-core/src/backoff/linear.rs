use core::time::Duration;

use super::{Backoff, saturating_from_nanos};

/// A delay growing by a fixed step: `base`, `base + step`, `base + 2·step`,
/// ..., capped at `max`. `backoff = linear(base = 100ms, step = 100ms, max = 1s)`.
///
/// ```
/// use reattempt::backoff::{Backoff, Linear};
/// use std::time::Duration;
///
/// let ms = Duration::from_millis;
/// let linear = Linear::new(ms(100), ms(50), ms(220));
/// assert_eq!([1, 2, 3, 4].map(|n| linear.delay(n)), [ms(100), ms(150), ms(200), ms(220)]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Linear {
    base: Duration,
    step: Duration,
    max: Duration,
}

impl Linear {
    /// A linear curve from `base` by `step`, capped at `max`.
    pub const fn new(base: Duration, step: Duration, max: Duration) -> Linear {
        Linear { base, step, max }
    }
}

impl Backoff for Linear {
    fn delay(&self, retry: u32) -> Duration {
        let steps = u128::from(retry.saturating_sub(1));
        let nanos = self
            .base
            .as_nanos()
            .saturating_add(self.step.as_nanos().saturating_mul(steps));
        saturating_from_nanos(nanos).min(self.max)
    }

    fn max_delay(&self) -> Duration {
        self.max
    }
}
