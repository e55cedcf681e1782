//! The curves a dynamic policy names, and how each is checked.

use core::time::Duration;

use super::InvalidPolicy;
use crate::backoff::{Backoff, Exponential, Fibonacci, Fixed, Linear, NoBackoff};

/// One of the built-in curves, chosen at run time: the curve of a
/// function with `policy = ..`. Named by the expansion only.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AnyBackoff {
    /// [`Exponential`].
    Exponential(Exponential),
    /// [`Fixed`].
    Fixed(Fixed),
    /// [`Linear`].
    Linear(Linear),
    /// [`Fibonacci`].
    Fibonacci(Fibonacci),
    /// [`NoBackoff`].
    None(NoBackoff),
}

impl Backoff for AnyBackoff {
    fn delay(&self, retry: u32) -> Duration {
        match self {
            AnyBackoff::Exponential(b) => b.delay(retry),
            AnyBackoff::Fixed(b) => b.delay(retry),
            AnyBackoff::Linear(b) => b.delay(retry),
            AnyBackoff::Fibonacci(b) => b.delay(retry),
            AnyBackoff::None(b) => b.delay(retry),
        }
    }

    fn max_delay(&self) -> Duration {
        match self {
            AnyBackoff::Exponential(b) => b.max_delay(),
            AnyBackoff::Fixed(b) => b.max_delay(),
            AnyBackoff::Linear(b) => b.max_delay(),
            AnyBackoff::Fibonacci(b) => b.max_delay(),
            AnyBackoff::None(b) => b.max_delay(),
        }
    }
}

/// A backoff as configuration gives it, checked before use.
///
/// ```
/// use reattempt::dynamic::{BackoffSpec, DynamicPolicy};
/// use std::time::Duration;
///
/// // Read from a configuration file: exponential from 100 ms, doubling,
/// // capped at 5 s.
/// let spec = BackoffSpec::Exponential {
///     base: Duration::from_millis(100),
///     factor: 2.0,
///     max: Duration::from_secs(5),
/// };
/// let policy = DynamicPolicy::new().backoff(spec).max_attempts(4);
/// # let _ = policy;
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum BackoffSpec {
    /// `base·factor^n`, capped at `max`.
    Exponential {
        /// The first delay.
        base: Duration,
        /// At least 1.
        factor: f64,
        /// The cap, at least `base`.
        max: Duration,
    },
    /// The same delay every time.
    Fixed(Duration),
    /// `base + step·n`, capped at `max`.
    Linear {
        /// The first delay.
        base: Duration,
        /// Added per retry.
        step: Duration,
        /// The cap, at least `base`.
        max: Duration,
    },
    /// `base` times the Fibonacci numbers, capped at `max`.
    Fibonacci {
        /// The first delay.
        base: Duration,
        /// The cap, at least `base`.
        max: Duration,
    },
    /// No wait.
    None,
}

pub(crate) fn checked(spec: BackoffSpec) -> Result<AnyBackoff, InvalidPolicy> {
    let cap = |base: Duration, max: Duration| {
        if max < base {
            Err(InvalidPolicy::CapBelowBase { base, max })
        } else {
            Ok(())
        }
    };
    Ok(match spec {
        BackoffSpec::Exponential { base, factor, max } => {
            if factor.is_nan() || factor < 1.0 || factor.is_infinite() {
                return Err(InvalidPolicy::Factor(factor));
            }
            cap(base, max)?;
            AnyBackoff::Exponential(Exponential::new(base, factor, max))
        }
        BackoffSpec::Fixed(delay) => AnyBackoff::Fixed(Fixed::new(delay)),
        BackoffSpec::Linear { base, step, max } => {
            cap(base, max)?;
            AnyBackoff::Linear(Linear::new(base, step, max))
        }
        BackoffSpec::Fibonacci { base, max } => {
            cap(base, max)?;
            AnyBackoff::Fibonacci(Fibonacci::new(base, max))
        }
        BackoffSpec::None => AnyBackoff::None(NoBackoff),
    })
}
