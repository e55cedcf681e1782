//! The time a call has taken, as hooks, logs and statistics see it.

use core::time::Duration;

use super::{Call, Slot};
use crate::backoff::Backoff;
use crate::clock::{Clock, saturating_nanos};

impl<B: Backoff, C: Clock, S: Slot> Call<'_, B, C, S> {
    /// Reads the clock now, if the call has not: for a call with hooks,
    /// which see the time since the call started. Another call reads it
    /// only for a deadline, the duration metric, or at its first failure.
    #[inline]
    pub fn start_clock(&mut self) {
        if self.started.is_none() {
            self.started = Some(self.clock.now());
        }
    }

    /// Time since the call started, skipped test-mode waits included;
    /// without a deadline the clock starts at the first failure (or the
    /// first hook), so the success path never reads it. Inline: it is
    /// made once for each backoff and clock, into the failure path.
    #[inline]
    pub(super) fn elapsed(&mut self) -> Duration {
        match self.started {
            Some(started) => self.elapsed_since(started),
            None => self.start_clock_now(),
        }
    }

    /// [`elapsed`](Self::elapsed) in whole nanoseconds, as the statistics
    /// add it up: a clock that counts nanoseconds gives it without a
    /// `Duration`.
    #[inline]
    pub(super) fn elapsed_nanos(&mut self) -> u64 {
        match self.started {
            Some(started) => {
                let since = self.clock.nanos_since(started);
                match self.skipped() {
                    Some(skipped) => since.saturating_add(saturating_nanos(skipped)),
                    None => since,
                }
            }
            None => saturating_nanos(self.start_clock_now()),
        }
    }

    /// Starts the clock now, and gives the time the call has taken: the
    /// test-mode waits it skipped, as nothing is subtracted.
    #[inline]
    pub(super) fn start_clock_now(&mut self) -> Duration {
        self.started = Some(self.clock.now());
        self.failures.peek().map_or(Duration::ZERO, |f| f.skipped)
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
