//! How each attempt runs: where `reattempt::attempt()` sees it, holding a
//! permit of the policy's concurrency limit, cut by its timeout or the
//! deadline, and after the wait its retry decided. A wrapper holds the
//! attempt by value, so that an attempt that is cut, or dropped with a
//! cancelled call, is dropped before its permit passes on.

use core::future::{Future, poll_fn};
use core::pin::{Pin, pin};
use core::sync::atomic::Ordering;
use core::task::Poll;
use core::time::Duration;

use super::instead::Instead;
use super::{Call, NEVER_RAN, NO_RETRY};
use crate::backoff::Backoff;
use crate::clock::Clock;
use crate::current::{self, InSpan};
use crate::limit::{ConcurrencyLimit, Permit};
use crate::limited::Limited;
use crate::policy::Policy;
use crate::scoped::Scoped;

impl<B: Backoff, C: Clock> Call<'_, B, C> {
    /// Runs a sync attempt where [`attempt()`](crate::attempt()) sees it,
    /// holding a permit of the policy's concurrency limit while it runs.
    ///
    /// `policy` is the call's own policy again: the expansion passes the
    /// `static` itself, so that the checks of what it does not use (a
    /// limit, a `max`) fold away instead of reading the call's memory.
    #[inline]
    pub fn scope<T>(&self, policy: &Policy<B>, attempt: impl FnOnce() -> T) -> T {
        // Not through `scope_within`: the rest of a sync call retries
        // through this one, and that longer function was on each of its
        // retries' paths.
        debug_assert!(core::ptr::eq(policy, self.policy), "the call's own policy");
        // Nested in an attempt that holds the same limit, the call shares
        // that slot: waiting for a second one could deadlock.
        let permit = policy.limit.map(|limit| match current::held_slot(limit) {
            Some(slot) => limit.share(slot),
            None => limit.acquire_blocking(),
        });
        self.run_in_frame(permit.as_ref(), attempt)
    }

    /// [`scope`](Self::scope) for a call with a deadline, whose wait for a
    /// permit of the concurrency limit ends at the deadline when something
    /// can stand for the attempt's outcome ([`Instead`]): the attempt does
    /// not run, and its outcome is that, as if it had run past the
    /// deadline. With nothing to stand for it (a first attempt whose error
    /// type has no `From<AttemptTimeout>`), it waits for the permit however
    /// long.
    #[inline]
    pub fn scope_within<R>(
        &self,
        policy: &Policy<B>,
        instead: impl Instead<R>,
        attempt: impl FnOnce() -> R,
    ) -> R {
        debug_assert!(core::ptr::eq(policy, self.policy), "the call's own policy");
        // Nested in an attempt that holds the same limit, the call shares
        // that slot, and waits for no permit the deadline could cut.
        let (limit, shared) = match policy.limit {
            Some(limit) => (Some(limit), current::held_slot(limit)),
            None => (None, None),
        };
        let permit = match (limit, shared) {
            (Some(limit), None) => match self.permit_or(limit, instead) {
                Ok(permit) => Some(permit),
                Err(outcome) => return outcome,
            },
            (limit, shared) => match self.overran(instead, || self.deadline_left()) {
                Some(outcome) => return outcome,
                None => limit.zip(shared).map(|(limit, slot)| limit.share(slot)),
            },
        };
        self.run_in_frame(permit.as_ref(), attempt)
    }

    /// The sync attempt itself, once its permit (if any) is held: counted,
    /// in its span, where `reattempt::attempt()` sees it, and marked as
    /// holding `permit` for the retried calls nested in it.
    #[inline(always)]
    fn run_in_frame<T>(&self, permit: Option<&Permit<'_>>, attempt: impl FnOnce() -> T) -> T {
        current::holding(permit, || {
            self.attempt_starts();
            let _span = InSpan::enter(self.attempt_span());
            self.frame.enter(attempt)
        })
    }

    /// What stands for a retry whose wait ended at or past the deadline (a
    /// timer that fired late), which then does not start; `None` for any
    /// other attempt. `instead` is dropped either way, before the attempt
    /// runs. A first attempt had no wait, and reads no clock here.
    /// `left` is the time left, read only for such a retry.
    #[inline]
    fn overran<R>(
        &self,
        instead: impl Instead<R>,
        left: impl FnOnce() -> Option<Duration>,
    ) -> Option<R> {
        if instead.stands()
            && self.retry_pending.load(Ordering::Relaxed) != NO_RETRY
            && left().is_some_and(|left| left.is_zero())
        {
            return self.instead_of_late(instead);
        }
        instead.discard();
        None
    }

    /// [`overran`](Self::overran)'s outcome, out of line: only a wait that
    /// ran late reaches it.
    #[cold]
    #[inline(never)]
    fn instead_of_late<R>(&self, instead: impl Instead<R>) -> Option<R> {
        let outcome = instead.outcome(Duration::ZERO)?;
        self.never_ran();
        Some(outcome)
    }

    /// A permit of `limit`, waited for until the deadline when something
    /// stands for the attempt, else however long; or, when the deadline
    /// came first, what stands for the attempt, which never ran. What
    /// stands for it is dropped here, not held while the attempt runs.
    fn permit_or<'l, R>(
        &self,
        limit: &'l ConcurrencyLimit,
        instead: impl Instead<R>,
    ) -> Result<Permit<'l>, R> {
        if let Some(left) = self.deadline_left()
            && instead.stands()
        {
            // With no time left (the wait before it ran late), the attempt
            // does not start even where a permit is free.
            if !left.is_zero()
                && let Some(permit) = limit.acquire_blocking_within(left)
            {
                return Ok(permit);
            }
            // `stands` said that something does; were it wrong, the wait
            // would go on, not the call end without an outcome.
            if let Some(outcome) = instead.outcome(left) {
                self.never_ran();
                return Err(outcome);
            }
        }
        Ok(limit.acquire_blocking())
    }

    /// An async attempt that [`attempt()`](crate::attempt()) sees on every
    /// poll, holding its future by value. It does not take a permit of the
    /// concurrency limit: wrap it in [`limited`](Self::limited) for that.
    #[inline]
    pub fn scoped<F: Future>(&self, attempt: F) -> Scoped<&Self, F> {
        Scoped::new(self, attempt)
    }

    /// An async attempt that holds a permit of the policy's concurrency
    /// limit while it runs, waiting for one first.
    #[inline]
    pub fn limited<'c, F: Future>(&'c self, attempt: F) -> Limited<'c, F> {
        Limited::new(self.policy.limit, attempt)
    }

    /// The attempt that `attempt` makes, raced against a timer of `sleep`,
    /// when something can stand for its outcome ([`Instead`]): the
    /// attempt's outcome, or, if the timer fires first, what stands for it.
    /// The attempt is made here, in this future's own state, and pinned
    /// there; made by the caller, it would be moved into this future and
    /// take its room in it twice. The timer is set to what
    /// `left` gives and polled while `runs` says that it runs; its firing
    /// is `FIRED` ([`TIMED_OUT`](super::phase::TIMED_OUT), or [`NEVER_RAN`] for a wait for a
    /// permit). All three are types, not values, so they take no room in
    /// the future. With no time left at all (the deadline passed while the
    /// wait before it overran), the attempt does not start: what stands
    /// for it is `instead`'s outcome, or, for a retry, `late`'s, which is
    /// dropped before the attempt runs.
    #[allow(
        clippy::manual_async_fn,
        reason = "an async fn would hold its arguments twice, as parameters and as locals"
    )]
    pub(super) fn race<'c, const FIRED: u8, R, F, T, W>(
        &'c self,
        attempt: impl FnOnce() -> F + 'c,
        sleep: T,
        instead: impl Instead<R> + 'c,
        late: impl Instead<R> + 'c,
        left: impl Fn(&Self) -> Option<Duration> + 'c,
        runs: impl Fn(Pin<&mut F>) -> bool + 'c,
    ) -> impl Future<Output = R> + 'c
    where
        F: Future<Output = R> + 'c,
        T: FnOnce(Duration) -> W + 'c,
        W: Future<Output = ()>,
        R: 'c,
    {
        async move {
            // In a block of its own, so that the time left is not kept in
            // the future across the awaits below.
            let limit = {
                let left = left(self);
                if let Some(outcome) = self.overran(late, || left) {
                    return outcome;
                }
                left.filter(|_| instead.stands())
            };
            let mut attempt = pin!(attempt());
            let Some(limit) = limit else {
                return attempt.await;
            };
            // Dropped once the timer no longer runs (the attempt holds its
            // permit), so that the attempt never runs beside it.
            let mut instead = Some(instead);
            let fired = if limit.is_zero() {
                NEVER_RAN
            } else {
                let timer = pin!(sleep(limit));
                match first_of(attempt.as_mut(), timer, runs, || instead = None).await {
                    Some(outcome) => return outcome,
                    None => FIRED,
                }
            };
            // `stands` said that something does, and the timer fired while
            // it ran; were either wrong, the attempt would go on, not the
            // call end without an outcome.
            let Some(outcome) = instead.and_then(|instead| instead.outcome(limit)) else {
                return attempt.await;
            };
            if fired == NEVER_RAN {
                self.never_ran();
            } else {
                self.timed_out.store(fired, Ordering::Relaxed);
            }
            outcome
        }
    }

    /// How long the next attempt may run: `attempt_timeout`, shortened to
    /// the time left before the deadline; `None` when neither is set.
    pub(super) fn attempt_limit(&self) -> Option<Duration> {
        match (self.policy.attempt_timeout, self.deadline_left()) {
            (Some(timeout), Some(left)) => Some(timeout.min(left)),
            (timeout, left) => timeout.or(left),
        }
    }

    /// The time left before the deadline, when the call has one.
    pub(super) fn deadline_left(&self) -> Option<Duration> {
        match (self.policy.deadline, self.started) {
            (Some(deadline), Some(started)) => {
                Some(deadline.saturating_sub(self.elapsed_since(started)))
            }
            _ => None,
        }
    }
}

/// The outcome of `attempt`, or `None` if `timer` fires first; the timer is
/// polled only while `timed` says that it runs, and `untimed` is called
/// when it does not.
async fn first_of<F: Future, W: Future<Output = ()>>(
    mut attempt: Pin<&mut F>,
    mut timer: Pin<&mut W>,
    timed: impl Fn(Pin<&mut F>) -> bool,
    mut untimed: impl FnMut(),
) -> Option<F::Output> {
    poll_fn(|cx| {
        if let Poll::Ready(outcome) = attempt.as_mut().poll(cx) {
            return Poll::Ready(Some(outcome));
        }
        // Asked through the pin: a shared reference to the running
        // attempt would forbid the borrows it holds of itself.
        if !timed(attempt.as_mut()) {
            untimed();
            return Poll::Pending;
        }
        timer.as_mut().poll(cx).map(|()| None)
    })
    .await
}
