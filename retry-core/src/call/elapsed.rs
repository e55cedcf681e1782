//! The time a call has taken, as hooks, logs and statistics see it.

use core::time::Duration;

use super::{Call, Slot};
use crate::backoff::Backoff;
use crate::clock::{Clock, saturating_nanos};

impl<B: Backoff, C: Clock, S: Slot> Call<'_, B, C, S> {
    /// Reads the clock now, if the call has not: for a call with hooks,
    /// which see the time since the call started, called as the call is
    /// built.
    #[inline]
    pub fn start_clock(&mut self) {
        if self.started.is_none() {
            self.started = Some(self.clock.now());
        }
    }

    /// Time since the call started, skipped test-mode waits included, or
    /// `None` for a call that read no clock as it started
    /// ([`timed_from_start`](super::timed_from_start)): nothing would have
    /// seen its time then, and a later reading would leave out what came
    /// before it.
    #[inline]
    pub(super) fn elapsed(&self) -> Option<Duration> {
        self.started.map(|started| self.elapsed_since(started))
    }

    /// [`elapsed`](Self::elapsed) in whole nanoseconds, as the statistics
    /// add it up: a clock that counts nanoseconds gives it without a
    /// `Duration`.
    #[inline]
    pub(super) fn elapsed_nanos(&self) -> Option<u64> {
        let since = self.clock.nanos_since(self.started?);
        Some(match self.skipped() {
            Some(skipped) => since.saturating_add(saturating_nanos(skipped)),
            None => since,
        })
    }

    /// Time since `started`, skipped test-mode waits included.
    #[inline]
    pub(super) fn elapsed_since(&self, started: C::Reading) -> Duration {
        let since = self.clock.since(started);
        match self.skipped() {
            Some(skipped) => since.saturating_add(skipped),
            None => since,
        }
    }

    /// The test-mode waits the call skipped, when there are some: adding
    /// them only then, saturating arithmetic on a zero costs a retry more
    /// than the check.
    #[inline]
    pub(super) fn skipped(&self) -> Option<Duration> {
        match self.failures.peek() {
            Some(failures) if !failures.skipped.is_zero() => Some(failures.skipped),
            _ => None,
        }
    }
}
