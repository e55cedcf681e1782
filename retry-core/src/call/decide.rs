//! What follows an attempt: its outcome read, classified and turned into a
//! [`Decision`], and the delay before a retry or the reason there is none
//! (class, idempotency, attempts, nesting, the server's word, the backoff
//! and its jitter, the deadline, the breaker and the budget).

use core::fmt;
use core::sync::atomic::Ordering;
use core::time::Duration;

use tracing::Span;

use super::failures::Held;
use super::phase::{RAN, timeout_class};
use super::{Call, Decision, End, FieldVisitor, REJECTED, success_seen};
use crate::backoff::Backoff;
use crate::class::{Applied, Class, Classification};
use crate::clock::Clock;
use crate::current;
use crate::dead_letter::DelayFrom;
use crate::export;
use crate::give_up::GiveUp;
use crate::jitter::{Jitter, Rng};
use crate::log;
use crate::outcome::Outcome;
use crate::policy::{Idempotent, Nested, Policy};

impl<B: Backoff, C: Clock> Call<'_, B, C> {
    /// The decision after an attempt that returned an error. Out of line
    /// and shared by every function with the same backoff and error type,
    /// which only calls it: what each function makes of its own is its
    /// closures. The failure path is made inline here, once for each
    /// error type ([`failed_inline`](Self::failed_inline)).
    #[inline(never)]
    pub(super) fn error_failed<E: ?Sized>(
        &mut self,
        error: &E,
        classify: &dyn Fn(&E) -> Classification,
        describe: &dyn Fn(&E, &mut fmt::Formatter<'_>) -> fmt::Result,
        span: &dyn Fn() -> Span,
        fields: &dyn Fn(FieldVisitor<'_>),
    ) -> Decision {
        let class = self.error_class(|| classify(error));
        self.failed_inline(class, &Described(error, describe), span, fields, false)
    }

    /// The decision after an attempt that succeeded: the call returns.
    #[inline]
    pub(super) fn succeeded(&mut self, policy: &Policy<B>, span: &dyn Fn() -> Span) -> Decision {
        self.succeeded_then(policy, span, Self::succeeded_after_retries)
    }

    /// [`succeeded`](Self::succeeded), with what a success after retries
    /// records: out of line where each function decides inline, and inline
    /// in the rest of a sync call, which is made once for each backoff
    /// type.
    #[inline]
    pub(super) fn succeeded_then(
        &mut self,
        policy: &Policy<B>,
        span: &dyn Fn() -> Span,
        after_retries: impl FnOnce(&mut Self, &dyn Fn() -> Span),
    ) -> Decision {
        if self.frame.number > 1 {
            after_retries(self, span);
        } else {
            let elapsed = if export::TIMES_EVERY_CALL {
                self.elapsed()
            } else {
                None
            };
            if self.end == End::OpenUntilReturned {
                self.hold(Held::FirstTry(elapsed));
            } else {
                self.frame.site.first_try_success(elapsed);
            }
        }
        success_seen(policy, self.frame.site);
        // A success held for its return ends the call there.
        if self.end == End::Open {
            self.end = End::Returned;
        }
        if let Some(spans) = &mut *self.spans {
            spans.end();
            spans.ended(self.frame.number);
        }
        Decision::Return
    }

    /// Counts each success as its outcome is returned
    /// ([`returns`](Self::returns)) rather than as it is decided: for a
    /// function with an `after` hook, which runs between the two, so that
    /// a call dropped during that hook (an async function's future cut
    /// while the hook's future is pending, or a panic in the hook) is
    /// counted as cancelled, not as a success. The rest of a success (its
    /// log, its spans, the breaker and the alert streak) is still done as
    /// it is decided.
    #[inline]
    pub fn count_success_on_return(&mut self) {
        self.end = End::OpenUntilReturned;
    }

    /// The call returns the outcome of the success it decided: under
    /// [`count_success_on_return`](Self::count_success_on_return), the
    /// success is counted now, with the call's time as it was decided, and
    /// the call has ended.
    #[inline]
    pub fn returns(&mut self) {
        if self.end == End::OpenUntilReturned {
            self.count_held();
        }
    }

    /// A success decided, kept to be counted as it is returned.
    #[inline]
    pub(super) fn hold(&mut self, held: Held) {
        self.failures().held = Some(held);
    }

    #[cold]
    #[inline(never)]
    fn count_held(&mut self) {
        self.end = End::Returned;
        match self.failures().held.take() {
            Some(Held::FirstTry(elapsed)) => self.frame.site.first_try_success(elapsed),
            Some(Held::AfterRetries(nanos)) => self.frame.site.success_after_retries(nanos),
            None => {}
        }
    }

    /// The classification of an attempt's error: a timeout's, else the
    /// classifier's, made in the attempt's frame, where
    /// [`attempt()`](crate::attempt()) tells the classifier which attempt
    /// the error is of.
    #[inline]
    pub(super) fn error_class(&self, classify: impl FnOnce() -> Classification) -> Classification {
        // One comparison on the path of an attempt that was not cut.
        match self.timed_out.swap(RAN, Ordering::Relaxed) {
            RAN => self.frame.enter(classify),
            cut => timeout_class(cut),
        }
    }
}

/// What the logs say of a value that is a failure.
pub(super) struct FailedValue(pub(super) Classification);

impl fmt::Display for FailedValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.code() {
            Some(REJECTED) => f.write_str("if_result rejected the returned value"),
            Some(code) => write!(f, "the returned value is a failure ({code})"),
            None => f.write_str("the returned value is a failure"),
        }
    }
}

/// An error and the function that writes it, as one `Display` value.
pub(super) struct Described<'e, E: ?Sized, D>(pub(super) &'e E, pub(super) D);

impl<E: ?Sized, D> fmt::Display for Described<'_, E, D>
where
    D: Fn(&E, &mut fmt::Formatter<'_>) -> fmt::Result,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (self.1)(self.0, f)
    }
}

/// What the logs say of an attempt's failure.
pub(super) fn describe_failure<'o, R, D>(
    outcome: &'o R,
    class: &Classification,
    describe: &'o D,
) -> Failure<'o, R::Error, D>
where
    R: Outcome,
    D: Fn(&R::Error, &mut fmt::Formatter<'_>) -> fmt::Result,
{
    match outcome.split() {
        Ok(_) => Failure::Value(FailedValue(*class)),
        Err(error) => Failure::Error(Described(error, describe)),
    }
}

/// An error with the function that writes it, or a value that is a failure.
pub(super) enum Failure<'o, E, D> {
    Error(Described<'o, E, &'o D>),
    Value(FailedValue),
}

impl<E, D> fmt::Display for Failure<'_, E, D>
where
    D: Fn(&E, &mut fmt::Formatter<'_>) -> fmt::Result,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Error(error) => error.fmt(f),
            Failure::Value(value) => value.fmt(f),
        }
    }
}

impl<B: Backoff, C: Clock> Call<'_, B, C> {
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
        if let Some(throttle) = self.policy.throttle
            && !throttle.allows()
        {
            return Err(GiveUp::Throttled);
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
