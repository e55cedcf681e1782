//! The choice of the delay before a retry, or of the reason there is
//! none: class, idempotency, attempts, nesting, the server's word, the
//! backoff and its jitter, the deadline, the breaker and the budget.

use core::sync::atomic::Ordering;
use core::time::Duration;

use super::Call;
use super::failure_state::Slot;
use crate::backoff::Backoff;
use crate::class::{Applied, Class, Classification};
use crate::clock::Clock;
use crate::current;
use crate::dead_letter::DelayFrom;
use crate::give_up::GiveUp;
use crate::jitter::{Jitter, Rng};
use crate::log;
use crate::policy::{Idempotent, Nested};

impl<B: Backoff, C: Clock, S: Slot> Call<'_, B, C, S> {
    /// The delay before the next attempt and where it came from, or why
    /// there is none.
    pub(super) fn next_delay(
        &mut self,
        class: &Classification,
        elapsed: Option<Duration>,
    ) -> Result<(Duration, DelayFrom), GiveUp> {
        match class.class() {
            Class::Logical => return Err(GiveUp::Permanent),
            Class::Validation => return Err(GiveUp::Validation),
            Class::Transient | Class::RateLimited => {}
        }
        if self.policy.idempotent == Idempotent::No && class.applied() != Applied::No {
            return Err(GiveUp::MaybeApplied);
        }
        if let Some(max) = self.policy.max_attempts
            && self.attempts_made() >= max.get()
        {
            return Err(GiveUp::Exhausted);
        }
        if let Some(outer) = current::outer() {
            self.nested_in(outer)?;
        }
        let (delay, from) = match class.retry_after() {
            Some(asked) if self.policy.honor_retry_after => {
                if asked > self.policy.max_retry_after {
                    return Err(GiveUp::RetryAfterTooLong);
                }
                // A server delay never shortens the backoff: `Retry-After:
                // 0` from an overloaded server must not start a storm. The
                // AWS SDKs clamp `x-amz-retry-after` the same way.
                let server = self.server_delay(asked);
                let (backoff, from) = self.backoff_delay();
                if server >= backoff {
                    (server, DelayFrom::ServerDelay)
                } else {
                    (backoff, from)
                }
            }
            _ => self.backoff_delay(),
        };
        // A call with a deadline reads its clock as it starts
        // (`timed_from_start`), so its time is there.
        if let Some(deadline) = self.policy.deadline
            && elapsed.unwrap_or_default().saturating_add(delay) >= deadline
        {
            return Err(GiveUp::Deadline);
        }
        if let Some(breaker) = self.policy.breaker
            && !breaker.allow_retry()
        {
            return Err(GiveUp::Breaker);
        }
        // Last, so that a retry refused for another reason spends no token.
        if let Some(budget) = self.policy.budget
            && !budget.try_withdraw_for(class.class())
        {
            return Err(GiveUp::Budget);
        }
        Ok((delay, from))
    }

    /// A retry inside another retried call: warned about once per function,
    /// and refused under `nested = single`.
    fn nested_in(&self, outer: &'static str) -> Result<(), GiveUp> {
        if !self.frame.site.nested_warned.swap(true, Ordering::Relaxed) {
            log::nested(self.frame.site.name(), outer, &self.frame.call_id);
        }
        match self.policy.nested {
            Nested::Allow => Ok(()),
            Nested::Single => Err(GiveUp::Nested),
        }
    }

    /// A server's delay is never shortened; with jitter on, up to a quarter
    /// of it (the ratio of proportional jitter) is added, within
    /// `max_retry_after`.
    fn server_delay(&mut self, asked: Duration) -> Duration {
        let ratio = match self.policy.jitter {
            Jitter::None => return asked,
            Jitter::Proportional(ratio) => ratio,
            Jitter::Full | Jitter::Equal | Jitter::Decorrelated => 0.25,
        };
        let cap = self.policy.max_retry_after.max(asked);
        let rng = self.failures().rng.get_or_insert_with(Rng::from_entropy);
        Jitter::Proportional(ratio)
            .apply(asked, asked, asked, Duration::MAX, rng)
            .min(cap)
    }

    fn backoff_delay(&mut self) -> (Duration, DelayFrom) {
        let policy = self.policy;
        let backoff = &policy.backoff;
        let retry = self.frame.number;
        let cap = backoff.max_delay();
        let planned = backoff.delay(retry).min(cap);
        let base = backoff.delay(1);
        // Capped only where the curve grew into its cap: a fixed delay (or
        // none) is the curve itself.
        let from = if planned >= cap && base < cap {
            DelayFrom::Cap
        } else {
            DelayFrom::Backoff
        };
        let jitter = policy.jitter;
        if !jitter.is_random() {
            return (planned, from);
        }
        let failures = self.failures();
        // Before the first retry there is no previous delay: the base stands in.
        let previous = failures.last_delay.unwrap_or(base);
        let rng = failures.rng.get_or_insert_with(Rng::from_entropy);
        (jitter.apply(planned, previous, base, cap, rng), from)
    }
}
