//! Delays between attempts: the [`Backoff`] trait and the built-in curves.
//!
//! Every curve is a pure function of the retry number, saturating instead of
//! overflowing, for any `u32` and any durations.

pub(crate) mod custom;
mod exponential;
mod fibonacci;
mod fixed;
mod linear;

pub use exponential::Exponential;
pub use fibonacci::Fibonacci;
pub use fixed::{Fixed, NoBackoff};
pub use linear::Linear;

use core::time::Duration;

/// The first delay of a built-in curve (`exp`, `linear`, `fibonacci`)
/// given without its `base`.
pub const DEFAULT_BASE: Duration = Duration::from_secs(1);

/// The cap of a built-in curve (`exp`, `linear`, `fibonacci`) given
/// without its `max`.
pub const DEFAULT_CAP: Duration = Duration::from_secs(30);

/// The factor of `exp` given without its `factor`.
pub const DEFAULT_FACTOR: f64 = 2.0;

/// A delay curve: how long to wait before each retry.
///
/// `retry` counts retries from 1: `delay(1)` is the wait between the first
/// and the second attempt. Implementations must not panic for any `retry`.
///
/// Closures `Fn(u32) -> Duration` are backoffs:
///
/// ```
/// use reattempt::backoff::Backoff;
/// use std::time::Duration;
///
/// let steps = |retry: u32| Duration::from_millis(100).saturating_mul(retry);
/// assert_eq!(steps.delay(3), Duration::from_millis(300));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a backoff",
    label = "not a `reattempt::backoff::Backoff`",
    note = "`backoff = ..` takes a curve (`exp`, `fixed(1s)`, ...), a value of a type that implements `reattempt::backoff::Backoff`, or a closure of the retry number (`u32`) that returns a `Duration`"
)]
pub trait Backoff {
    /// The delay before retry number `retry` (1-based), before jitter.
    fn delay(&self, retry: u32) -> Duration;

    /// The longest delay this curve gives: the cap that jitter never passes.
    fn max_delay(&self) -> Duration {
        Duration::MAX
    }
}

impl<F: Fn(u32) -> Duration> Backoff for F {
    fn delay(&self, retry: u32) -> Duration {
        self(retry)
    }
}

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// A duration from nanoseconds, saturating at `Duration::MAX`.
pub(crate) fn saturating_from_nanos(nanos: u128) -> Duration {
    let secs = nanos / NANOS_PER_SEC;
    match u64::try_from(secs) {
        Ok(secs) => Duration::new(secs, (nanos % NANOS_PER_SEC) as u32),
        Err(_) => Duration::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::{
        Just, Strategy, any, prop_assert, prop_assert_eq, prop_oneof, proptest,
    };

    fn duration() -> impl Strategy<Value = Duration> {
        prop_oneof![
            (0u64..=600_000_000_000).prop_map(Duration::from_nanos),
            (any::<u64>(), 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n)),
            Just(Duration::ZERO),
            Just(Duration::MAX),
        ]
    }

    fn retry() -> impl Strategy<Value = u32> {
        prop_oneof![0u32..100, any::<u32>(), Just(u32::MAX)]
    }

    fn factor() -> impl Strategy<Value = f64> {
        prop_oneof![
            1.0f64..10.0,
            (1u32..1000).prop_map(f64::from),
            Just(f64::MAX),
            any::<f64>()
        ]
    }

    proptest! {
        #[test]
        fn every_curve_stays_at_or_below_its_cap(
            base in duration(), step in duration(), max in duration(), factor in factor(), retry in retry(),
        ) {
            let curves: [&dyn Backoff; 4] = [
                &Exponential::new(base, factor, max),
                &Linear::new(base, step, max),
                &Fibonacci::new(base, max),
                &Fixed::new(max),
            ];
            for curve in curves {
                prop_assert!(curve.delay(retry) <= curve.max_delay());
            }
            prop_assert_eq!(NoBackoff.delay(retry), Duration::ZERO);
        }

        #[test]
        fn exponential_is_exactly_base_times_factor_to_the_n_until_the_cap(
            base_ms in 0u64..10_000, factor in 1u32..=10, max in duration(), retry in 1u32..200,
        ) {
            let base = Duration::from_millis(base_ms);
            let exp = Exponential::new(base, f64::from(factor), max);
            // Zero times any power is zero, even one past what u128 holds.
            let exact = match base_ms {
                0 => Some(0),
                _ => u128::from(factor)
                    .checked_pow(retry - 1)
                    .and_then(|m| base.as_nanos().checked_mul(m)),
            };
            let expected = match exact {
                Some(nanos) if nanos <= max.as_nanos() => saturating_from_nanos(nanos),
                _ => max,
            };
            prop_assert_eq!(exp.delay(retry), expected);
        }

        #[test]
        fn curves_never_shrink_as_retries_grow(
            base in duration(), step in duration(), max in duration(), factor in factor(), retry in 1u32..u32::MAX,
        ) {
            let curves: [&dyn Backoff; 3] = [
                &Exponential::new(base, factor, max),
                &Linear::new(base, step, max),
                &Fibonacci::new(base, max),
            ];
            for curve in curves {
                prop_assert!(curve.delay(retry) <= curve.delay(retry + 1));
            }
        }
    }

    #[test]
    fn saturating_from_nanos_round_trips_and_saturates() {
        let d = Duration::new(12, 345);
        assert_eq!(saturating_from_nanos(d.as_nanos()), d);
        assert_eq!(
            saturating_from_nanos(Duration::MAX.as_nanos()),
            Duration::MAX
        );
        assert_eq!(saturating_from_nanos(u128::MAX), Duration::MAX);
    }
}
