use core::time::Duration;

use super::{Backoff, saturating_from_nanos};

/// Delays following the Fibonacci numbers: `base`, `base`, `2·base`,
/// `3·base`, `5·base`, ..., capped at `max`.
/// `backoff = fibonacci(base = 100ms, max = 10s)`.
///
/// ```
/// use reattempt::backoff::{Backoff, Fibonacci};
/// use std::time::Duration;
///
/// let s = Duration::from_secs;
/// let fib = Fibonacci::new(s(1), s(6));
/// assert_eq!([1, 2, 3, 4, 5, 6].map(|n| fib.delay(n)), [s(1), s(1), s(2), s(3), s(5), s(6)]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fibonacci {
    base: Duration,
    max: Duration,
}

impl Fibonacci {
    /// A Fibonacci curve from `base`, capped at `max`.
    pub const fn new(base: Duration, max: Duration) -> Fibonacci {
        Fibonacci { base, max }
    }
}

impl Backoff for Fibonacci {
    fn delay(&self, retry: u32) -> Duration {
        let base = self.base.as_nanos();
        if base == 0 {
            return Duration::ZERO;
        }
        let cap = self.max.as_nanos();
        let (mut current, mut next) = (base, base);
        // The terms grow geometrically, so the cap is passed within about 190
        // steps even for a 1 ns base: the loop never runs `retry` times.
        for _ in 1..retry {
            if current >= cap {
                return self.max;
            }
            (current, next) = (next, current.saturating_add(next));
        }
        saturating_from_nanos(current).min(self.max)
    }

    fn max_delay(&self) -> Duration {
        self.max
    }
}
