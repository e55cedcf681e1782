use core::time::Duration;

use super::{Backoff, DEFAULT_BASE, DEFAULT_CAP, DEFAULT_FACTOR, saturating_from_nanos};

/// Delays growing by a factor: `base`, `base·factor`, `base·factor²`, ...,
/// capped at `max`. `backoff = exp` is `Exponential::DEFAULT`: 1 s, ×2,
/// capped at 30 s.
///
/// With a whole-number factor the delays are exact (integer nanoseconds);
/// with a fractional one they are rounded to the nanosecond.
///
/// ```
/// use reattempt::backoff::{Backoff, Exponential};
/// use std::time::Duration;
///
/// let s = Duration::from_secs;
/// let exp = Exponential::DEFAULT;
/// assert_eq!([1, 2, 3, 5, 6, 100].map(|n| exp.delay(n)), [s(1), s(2), s(4), s(16), s(30), s(30)]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Exponential {
    base: Duration,
    factor: f64,
    max: Duration,
}

impl Exponential {
    /// 1 s, doubling, capped at 30 s: [`DEFAULT_BASE`](super::DEFAULT_BASE),
    /// [`DEFAULT_FACTOR`](super::DEFAULT_FACTOR),
    /// [`DEFAULT_CAP`](super::DEFAULT_CAP).
    pub const DEFAULT: Exponential = Exponential::new(DEFAULT_BASE, DEFAULT_FACTOR, DEFAULT_CAP);

    /// A curve from `base`, multiplied by `factor` per retry, capped at `max`.
    ///
    /// A factor below 1 or not finite is read as 1 (a fixed delay), so the
    /// curve never shrinks or overflows; `#[retry]` refuses such factors at
    /// compile time.
    pub const fn new(base: Duration, factor: f64, max: Duration) -> Exponential {
        let factor = if factor >= 1.0 && factor <= f64::MAX {
            factor
        } else {
            1.0
        };
        Exponential { base, factor, max }
    }
}

impl Default for Exponential {
    fn default() -> Exponential {
        Exponential::DEFAULT
    }
}

impl Backoff for Exponential {
    fn delay(&self, retry: u32) -> Duration {
        if self.base.is_zero() {
            return Duration::ZERO;
        }
        let exponent = retry.saturating_sub(1);
        let delay = if self.factor.fract() == 0.0 && self.factor <= u32::MAX as f64 {
            let factor = self.factor as u128;
            let nanos = match factor.checked_pow(exponent) {
                Some(multiplier) => self.base.as_nanos().saturating_mul(multiplier),
                None => u128::MAX,
            };
            saturating_from_nanos(nanos)
        } else {
            let exponent = i32::try_from(exponent).unwrap_or(i32::MAX);
            let secs = self.base.as_secs_f64() * self.factor.powi(exponent);
            Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX)
        };
        delay.min(self.max)
    }

    fn max_delay(&self) -> Duration {
        self.max
    }
}
