//! Policies read at run time: `policy = EXPR` is evaluated on every call,
//! and what its [`DynamicPolicy`] sets overrides the static arguments, so
//! that limits can follow feature flags or a configuration file.
//!
//! A dynamic policy that fails validation is not used: the call falls back
//! to the static arguments and logs why, at WARN, once per kind of problem
//! per function (a bad factor, a zero attempt count, ...): a value that
//! changes on every call is not logged again, and costs no memory.

mod cell;
mod duration;
mod invalid;
#[cfg(feature = "serde")]
mod serde;
mod spec;
mod text;

use core::time::Duration;

use crate::backoff::Exponential;
use crate::jitter::Jitter;
use crate::policy::Policy;

pub use crate::call_policy::PolicySource;
pub use crate::hedge::HedgeSpec;
pub use cell::PolicyCell;
pub use invalid::ParsePolicyError;
pub use invalid::{InvalidPolicy, MAX_ATTEMPTS_WITHOUT_DEADLINE};
use spec::checked;
pub use spec::{AnyBackoff, BackoffSpec};

/// What a dynamic policy overrides; `None` keeps the static argument.
///
/// ```
/// use reattempt::dynamic::{BackoffSpec, DynamicPolicy};
/// use reattempt::retry;
/// use std::sync::RwLock;
/// use std::time::Duration;
///
/// static CONFIG: RwLock<DynamicPolicy> = RwLock::new(DynamicPolicy::new());
///
/// #[retry(max = 5, backoff = none, policy = CONFIG.read().unwrap().clone())]
/// fn call(calls: &mut u32) -> std::io::Result<()> {
///     *calls += 1;
///     Err(std::io::ErrorKind::TimedOut.into())
/// }
///
/// let mut calls = 0;
/// call(&mut calls).unwrap_err();
/// assert_eq!(calls, 5);
///
/// *CONFIG.write().unwrap() = DynamicPolicy::new().max_attempts(2);
/// let mut calls = 0;
/// call(&mut calls).unwrap_err();
/// assert_eq!(calls, 2, "the next call sees the new limit");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct DynamicPolicy {
    /// Most attempts, the first included.
    pub max_attempts: Option<u32>,
    /// The delay curve.
    pub backoff: Option<BackoffSpec>,
    /// The jitter.
    pub jitter: Option<Jitter>,
    /// The total time budget.
    pub deadline: Option<Duration>,
    /// The time one attempt of an async function may take.
    pub attempt_timeout: Option<Duration>,
    /// Whether server delays are honoured.
    pub honor_retry_after: Option<bool>,
    /// The longest server delay honoured.
    pub max_retry_after: Option<Duration>,
    /// Hedging, for a function whose attribute has `hedge`: off, another
    /// delay, or a percentile of its recent attempt latencies. Hedging
    /// cannot be turned on here: a function hedges
    /// only when its attribute says so, which it cannot for an operation
    /// that must not run twice (`idempotent = false`).
    pub hedge: Option<HedgeSpec>,
    /// Whether a function's `fallback` answers when it gives up: `false`
    /// turns it off (the call returns its error).
    pub fallback: Option<bool>,
    /// K of the adaptive throttle the function names (`throttle`), for
    /// every function that names it.
    pub throttle_k: Option<f64>,
    /// The window of the adaptive throttle the function names, for every
    /// function that names it; a new window starts counting afresh.
    pub throttle_window: Option<Duration>,
}

impl DynamicPolicy {
    /// A policy that overrides nothing.
    pub const fn new() -> DynamicPolicy {
        DynamicPolicy {
            max_attempts: None,
            backoff: None,
            jitter: None,
            deadline: None,
            attempt_timeout: None,
            honor_retry_after: None,
            max_retry_after: None,
            hedge: None,
            fallback: None,
            throttle_k: None,
            throttle_window: None,
        }
    }

    /// Overrides `max`.
    pub const fn max_attempts(mut self, attempts: u32) -> DynamicPolicy {
        self.max_attempts = Some(attempts);
        self
    }

    /// Overrides `backoff`.
    pub const fn backoff(mut self, backoff: BackoffSpec) -> DynamicPolicy {
        self.backoff = Some(backoff);
        self
    }

    /// Overrides `jitter`.
    pub const fn jitter(mut self, jitter: Jitter) -> DynamicPolicy {
        self.jitter = Some(jitter);
        self
    }

    /// Overrides `deadline`.
    pub const fn deadline(mut self, deadline: Duration) -> DynamicPolicy {
        self.deadline = Some(deadline);
        self
    }

    /// Overrides `attempt_timeout`: honoured by an async function whose
    /// error type can stand for a timeout (it has
    /// `From<reattempt::AttemptTimeout>`), as the static argument is;
    /// anywhere else it is logged once and left out.
    pub const fn attempt_timeout(mut self, timeout: Duration) -> DynamicPolicy {
        self.attempt_timeout = Some(timeout);
        self
    }

    /// Overrides whether server delays (`Retry-After`) are honoured.
    pub const fn honor_retry_after(mut self, honor: bool) -> DynamicPolicy {
        self.honor_retry_after = Some(honor);
        self
    }

    /// Overrides `max_retry_after`, the longest server delay honoured.
    pub const fn max_retry_after(mut self, max: Duration) -> DynamicPolicy {
        self.max_retry_after = Some(max);
        self
    }

    /// Overrides a hedged function's `hedge`: off, another delay, or a
    /// percentile (`HedgeSpec::Percentile(95)`, `hedge = p95` in the text
    /// form). A function without `hedge` does not hedge, and logs once
    /// that the override is left out.
    pub const fn hedge(mut self, hedge: HedgeSpec) -> DynamicPolicy {
        self.hedge = Some(hedge);
        self
    }

    /// Turns a function's `fallback` on or off.
    pub const fn fallback(mut self, on: bool) -> DynamicPolicy {
        self.fallback = Some(on);
        self
    }

    /// Sets K of the adaptive throttle the function names: at least 1.
    pub const fn throttle_k(mut self, k: f64) -> DynamicPolicy {
        self.throttle_k = Some(k);
        self
    }

    /// Sets the window of the adaptive throttle the function names.
    pub const fn throttle_window(mut self, window: Duration) -> DynamicPolicy {
        self.throttle_window = Some(window);
        self
    }

    /// Whether the overrides are valid on their own: what a call would
    /// refuse, with a WARN, before using them over a function with no
    /// deadline and the attribute's default curve and `max`. A policy read
    /// from configuration can be checked as it is read, rather than at the
    /// first call.
    ///
    /// ```
    /// use reattempt::dynamic::{BackoffSpec, DynamicPolicy, InvalidPolicy};
    /// use std::time::Duration;
    ///
    /// let endless = DynamicPolicy::new().max_attempts(u32::MAX).backoff(BackoffSpec::None);
    /// assert_eq!(
    ///     endless.check(),
    ///     Err(InvalidPolicy::TooManyAttemptsWithoutDeadline(u32::MAX))
    /// );
    /// assert_eq!(endless.deadline(Duration::from_secs(5)).check(), Ok(()));
    /// ```
    pub fn check(&self) -> Result<(), InvalidPolicy> {
        let defaults = Policy::new(AnyBackoff::Exponential(Exponential::DEFAULT));
        self.apply(&defaults).map(drop)
    }

    /// The static policy with these overrides, or why they are invalid.
    pub(crate) fn apply(
        &self,
        base: &Policy<AnyBackoff>,
    ) -> Result<Policy<AnyBackoff>, InvalidPolicy> {
        let mut policy = *base;
        if let Some(attempts) = self.max_attempts {
            if attempts == 0 {
                return Err(InvalidPolicy::ZeroAttempts);
            }
            policy = policy.max_attempts(attempts);
        }
        if let Some(spec) = self.backoff {
            policy.backoff = checked(spec)?;
        }
        if let Some(jitter) = self.jitter {
            if let Jitter::Proportional(ratio) = jitter
                && !(0.0..=1.0).contains(&ratio)
            {
                return Err(InvalidPolicy::JitterRatio(ratio));
            }
            policy = policy.jitter(jitter);
        }
        crate::throttle::check_tuning(self.throttle_k, self.throttle_window)
            .map_err(InvalidPolicy::Throttle)?;
        if let Some(on) = self.fallback {
            policy.fallback = on;
        }
        if let Some(HedgeSpec::Percentile(percentile)) = self.hedge
            && !crate::hedge::PERCENTILES.contains(&percentile)
        {
            return Err(InvalidPolicy::Percentile(percentile));
        }
        for (value, what) in [
            (self.deadline, "deadline"),
            (self.attempt_timeout, "attempt_timeout"),
            // As the attribute refuses `max_retry_after = 0s`: every server
            // delay would end the call.
            (self.max_retry_after, "max_retry_after"),
            (
                match self.hedge {
                    Some(HedgeSpec::After(after)) => Some(after),
                    _ => None,
                },
                "hedge",
            ),
        ] {
            if value == Some(Duration::ZERO) {
                return Err(InvalidPolicy::Zero(what));
            }
        }
        if let Some(deadline) = self.deadline {
            policy = policy.deadline(deadline);
        }
        if let Some(timeout) = self.attempt_timeout {
            policy = policy.attempt_timeout(timeout);
        }
        if let Some(honor) = self.honor_retry_after {
            policy = policy.honor_retry_after(honor);
        }
        if let Some(max) = self.max_retry_after {
            policy = policy.max_retry_after(max);
        }
        if let Some(spec) = self.hedge {
            policy.hedge = base.hedge.and_then(|hedge| hedge.with_spec(spec));
        }
        // Without a deadline, a limit must be one a call runs through in
        // reasonable time. A function with no limit at all wrote so itself
        // (`max = forever`): no policy here can make one, as none can take
        // away a limit or a deadline.
        if policy.deadline.is_none()
            && let Some(attempts) = policy.max()
            && attempts > MAX_ATTEMPTS_WITHOUT_DEADLINE
        {
            return Err(InvalidPolicy::TooManyAttemptsWithoutDeadline(attempts));
        }
        Ok(policy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backoff::{Backoff, Fixed};

    const BASE: Policy<AnyBackoff> =
        Policy::new(AnyBackoff::Fixed(Fixed::new(Duration::from_secs(1)))).max_attempts(4);

    #[test]
    fn a_function_that_retries_for_ever_keeps_its_dynamic_policy_unless_it_sets_a_limit() {
        let forever =
            Policy::new(AnyBackoff::Fixed(Fixed::new(Duration::from_secs(1)))).unbounded();
        let jitter = DynamicPolicy::new().jitter(Jitter::Full);
        assert!(jitter.apply(&forever).is_ok());
        let many = DynamicPolicy::new().max_attempts(MAX_ATTEMPTS_WITHOUT_DEADLINE + 1);
        assert_eq!(
            many.apply(&forever).unwrap_err(),
            InvalidPolicy::TooManyAttemptsWithoutDeadline(MAX_ATTEMPTS_WITHOUT_DEADLINE + 1)
        );
    }

    #[test]
    fn valid_overrides_apply_and_the_rest_stays() {
        let policy = DynamicPolicy::new()
            .max_attempts(7)
            .backoff(BackoffSpec::Linear {
                base: Duration::from_millis(10),
                step: Duration::from_millis(10),
                max: Duration::from_secs(1),
            })
            .apply(&BASE)
            .unwrap();
        assert_eq!(policy.max(), Some(7));
        assert_eq!(policy.backoff().delay(3), Duration::from_millis(30));
        let server = DynamicPolicy::new()
            .honor_retry_after(false)
            .max_retry_after(Duration::from_secs(9))
            .attempt_timeout(Duration::from_secs(2))
            .apply(&BASE)
            .unwrap();
        assert!(!server.honor_retry_after);
        assert_eq!(server.max_retry_after, Duration::from_secs(9));
        assert_eq!(server.attempt_timeout, Some(Duration::from_secs(2)));
        let unchanged = DynamicPolicy::new().apply(&BASE).unwrap();
        assert_eq!(unchanged.max(), Some(4));
    }

    #[test]
    fn every_invalid_policy_is_refused_with_its_reason() {
        let exp = |factor, base, max| BackoffSpec::Exponential {
            base: Duration::from_millis(base),
            factor,
            max: Duration::from_millis(max),
        };
        let cases = [
            (
                DynamicPolicy::new().max_attempts(0),
                InvalidPolicy::ZeroAttempts,
            ),
            (
                DynamicPolicy::new().backoff(exp(0.5, 1, 2)),
                InvalidPolicy::Factor(0.5),
            ),
            (
                DynamicPolicy::new().backoff(exp(2.0, 100, 10)),
                InvalidPolicy::CapBelowBase {
                    base: Duration::from_millis(100),
                    max: Duration::from_millis(10),
                },
            ),
            (
                DynamicPolicy::new().jitter(Jitter::Proportional(2.0)),
                InvalidPolicy::JitterRatio(2.0),
            ),
            (
                DynamicPolicy::new().deadline(Duration::ZERO),
                InvalidPolicy::Zero("deadline"),
            ),
            (
                DynamicPolicy::new().attempt_timeout(Duration::ZERO),
                InvalidPolicy::Zero("attempt_timeout"),
            ),
            (
                DynamicPolicy::new().max_retry_after(Duration::ZERO),
                InvalidPolicy::Zero("max_retry_after"),
            ),
            (
                DynamicPolicy::new().hedge(HedgeSpec::Percentile(100)),
                InvalidPolicy::Percentile(100),
            ),
        ];
        for (dynamic, expected) in cases {
            assert_eq!(dynamic.apply(&BASE).unwrap_err(), expected);
        }
        let nan = DynamicPolicy::new()
            .backoff(exp(f64::NAN, 1, 2))
            .apply(&BASE)
            .unwrap_err();
        assert!(matches!(nan, InvalidPolicy::Factor(f) if f.is_nan()));
    }
}
