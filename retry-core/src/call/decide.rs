//! What follows an attempt: its outcome read, classified and turned into a
//! [`Decision`].

use core::fmt;
use core::sync::atomic::Ordering;

use tracing::Span;

use super::cut::{RAN, timeout_class};
use super::failure_state::Held;
use super::{Call, Decision, End, FieldVisitor, REJECTED, Slot, success_seen};
use crate::backoff::Backoff;
use crate::class::Classification;
use crate::clock::Clock;
use crate::export;
use crate::outcome::Outcome;
use crate::policy::Policy;

impl<B: Backoff, C: Clock, S: Slot> Call<'_, B, C, S> {
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
