//! Where a call's last attempt stands beside its outcome: a retry decided
//! whose attempt has not started yet (counted when it starts, its budget
//! token given back if it never does), how a timer ended the attempt, and
//! a call dropped before a decision returned its outcome.

use core::sync::atomic::Ordering;

use super::{Call, End};
use crate::class::{Applied, Class, Classification};
use crate::clock::Clock;

/// No retry is pending.
pub(super) const NO_RETRY: u8 = 0;
/// A retry after a transient failure is pending.
pub(super) const AFTER_TRANSIENT: u8 = 1;
/// A retry after a rate-limited failure is pending.
pub(super) const AFTER_RATE_LIMITED: u8 = 2;

impl<B, C: Clock> Drop for Call<'_, B, C> {
    #[inline]
    fn drop(&mut self) {
        // Taken first: were `cancelled` to unwind (a metrics recorder
        // that panics), the spans would still be dropped with the call.
        let spans = self.spans.take();
        if self.end != End::Returned {
            self.cancelled();
        }
        if let Some(spans) = spans {
            drop_spans(spans);
        }
    }
}

/// A call's spans, dropped out of line: a call without them drops inline.
#[cold]
#[inline(never)]
fn drop_spans(spans: Box<crate::spans::Spans>) {
    drop(spans);
}

impl<B, C: Clock> Call<'_, B, C> {
    /// The call was dropped before its outcome was returned: the token of
    /// a retry that never ran goes back.
    #[cold]
    #[inline(never)]
    pub(super) fn cancelled(&mut self) {
        self.frame.site.cancelled();
        self.refund_pending_retry();
    }

    /// Whether a retry was decided whose attempt has not started.
    #[inline]
    pub(super) fn retry_is_pending(&self) -> bool {
        self.retry_pending.load(Ordering::Relaxed) != NO_RETRY
    }

    /// Gives back the budget token of a retry that was decided and will
    /// never run.
    pub(super) fn refund_pending_retry(&self) {
        let pending = self.retry_pending.swap(NO_RETRY, Ordering::Relaxed);
        if pending != NO_RETRY
            && let Some(budget) = self.policy.budget
        {
            budget.refund_for(if pending == AFTER_RATE_LIMITED {
                Class::RateLimited
            } else {
                Class::Transient
            });
        }
    }

    /// The deadline came before the attempt started (while it waited for
    /// its permit, or during a wait that overran): it will never run. A
    /// retry gives its token back; a first attempt takes back its deposit.
    #[cold]
    pub(super) fn never_ran(&self) {
        self.timed_out.store(NEVER_RAN, Ordering::Relaxed);
        if self.frame.number <= 1
            && let Some(budget) = self.policy.budget
        {
            budget.take_back_deposit();
        }
        self.refund_pending_retry();
    }

    /// An attempt starts running (after its permit, if any): a retry that
    /// was pending is now made.
    #[inline]
    pub(super) fn attempt_starts(&self) {
        if self.retry_is_pending() {
            self.retry_starts();
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn retry_starts(&self) {
        self.retry_starts_inline();
    }

    /// [`retry_starts`](Self::retry_starts), inline: for the rest of a sync
    /// call, made once for each backoff type, whose attempts after the
    /// first each follow a retry and wait for no permit.
    #[inline]
    pub(super) fn retry_starts_inline(&self) {
        if self.retry_pending.swap(NO_RETRY, Ordering::Relaxed) != NO_RETRY {
            self.frame.site.retry();
        }
    }
}

/// `Call::timed_out`: the last attempt was not cut.
pub(super) const RAN: u8 = 0;
/// `Call::timed_out`: the last attempt ran past its time and was dropped.
pub(super) const TIMED_OUT: u8 = 1;
/// `Call::timed_out`: the deadline came before the last attempt started
/// (while it waited for its permit of a concurrency limit, or during a wait
/// before it that overran); it never ran.
pub(super) const NEVER_RAN: u8 = 2;

/// The code of an attempt that never ran: the deadline came first.
pub(super) const NOT_STARTED: &str = "not_started";

/// The classification of an attempt a timer cut: [`TIMED_OUT`] or
/// [`NEVER_RAN`].
#[cold]
#[inline(never)]
pub(super) fn timeout_class(cut: u8) -> Classification {
    let class = Classification::transient();
    if cut == NEVER_RAN {
        // It never ran, so it cannot have taken effect.
        class.with_code(NOT_STARTED).not_applied()
    } else {
        class.with_code("attempt_timeout")
    }
}

/// Whether `class` is that of an attempt that never ran.
pub(super) fn never_ran(class: &Classification) -> bool {
    class.applied() == Applied::No && class.code() == Some(NOT_STARTED)
}
