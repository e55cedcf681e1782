//! The time a call has taken and its waits: the clock as hooks, logs and
//! statistics see it, and the attempts of a call whose function waits on
//! the default timer and runs nothing between its attempts that must
//! follow the wait (no `before` hook) or that must not count it (no
//! permit, no timer). Each of those waits out the delay its retry decided
//! before it runs, so that the loop of an `async fn` awaits once per
//! attempt, not twice: every await point is a state of the function's
//! future that rustc lays out and checks in each annotated function
//! (`benches/HISTORY.md`, round 3, gives what the await this saves cost).

use core::future::Future;
#[cfg(feature = "tokio")]
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use super::Call;
use crate::backoff::Backoff;
use crate::clock::{Clock, saturating_nanos};
use crate::current;
use crate::scoped::CallRef;
#[cfg(feature = "tokio")]
use crate::scoped::Scoped;

/// An attempt made by [`Call::next`]: after a retry, it first waits out
/// the delay that [`Call::wait_next`] set, on the default timer (dropped
/// during the wait, the retry never started: its budget token goes back);
/// then it runs the attempt's future as [`Scoped`] runs one.
#[cfg(feature = "tokio")]
pub type Next<'c, 'p, B, C, F> = Scoped<&'c mut Call<'p, B, C>, F>;

impl<B, C: Clock> current::sealed::Sealed for &mut Call<'_, B, C> {}

impl<'p, B: Backoff, C: Clock> CallRef for &mut Call<'p, B, C> {
    type Call = Call<'p, B, C>;

    #[inline]
    fn call(&self) -> &Call<'p, B, C> {
        self
    }

    #[inline]
    fn before_poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        // A first attempt without spans has nothing to wait for or open.
        if self.failures.peek().is_none() && self.spans.is_none() {
            return Poll::Ready(());
        }
        self.before_attempt(cx)
    }
}

impl<'p, B: Backoff, C: Clock> Call<'p, B, C> {
    /// The next attempt: the first, or the one a retry decided, which
    /// waits out the delay [`wait_next`](Self::wait_next) set before it
    /// runs, then opens its span.
    #[cfg(feature = "tokio")]
    #[inline]
    pub fn next<F: Future>(&mut self, attempt: F) -> Next<'_, 'p, B, C, F> {
        Scoped::new(self, attempt)
    }

    /// Without the `tokio` feature an async function needs `sleep = ...`:
    /// its attempt fails [`NeedsASleeper`](crate::__private::NeedsASleeper).
    #[cfg(not(feature = "tokio"))]
    pub fn next<F>(&mut self, _attempt: F) -> core::future::Pending<F::Output>
    where
        F: Future + crate::__private::NeedsASleeper,
    {
        core::future::pending()
    }

    /// Sets the wait of `delay` that the next attempt made by
    /// [`next`](Self::next) waits out before it runs. A zero delay sets
    /// none.
    #[inline]
    pub fn wait_next(&mut self, delay: Duration) {
        #[cfg(feature = "tokio")]
        if !delay.is_zero() {
            self.wait_before_next(delay);
        }
        // Without tokio no function that calls this compiles: its `next`
        // is not a future.
        #[cfg(not(feature = "tokio"))]
        let _ = delay;
    }
}

impl<B: Backoff, C: Clock> Call<'_, B, C> {
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

impl<B: Backoff, C: Clock> Call<'_, B, C> {
    /// Waits `delay` on the default timer (tokio's, or outside any tokio
    /// runtime one that a thread of this crate's own ends): the default
    /// sleep of async functions.
    /// The timer lives with the call's failure state, so that it adds
    /// nothing to the size of the function's future, and is reused from one
    /// wait to the next. Out of line: only a retry reaches it, and inlined
    /// it would put tokio's timer code in every async function.
    #[cfg(feature = "tokio")]
    #[inline(never)]
    pub fn wait(&mut self, delay: Duration) -> crate::wait::Wait<'_> {
        if delay.is_zero() {
            return crate::wait::Wait::new(None);
        }
        crate::wait::Wait::new(Some(self.set_timer(delay)))
    }

    /// The call's timer, set to fire after `delay`.
    #[cfg(feature = "tokio")]
    fn set_timer(&mut self, delay: Duration) -> Pin<&mut crate::default_timer::DefaultTimer> {
        let deadline = crate::default_timer::deadline_after(delay);
        let timer = &mut self.failures().timer.sleep;
        match timer {
            Some(timer) => {
                timer.as_mut().reset(deadline);
                timer.as_mut()
            }
            None => timer
                .insert(Box::pin(crate::default_timer::DefaultTimer::made(deadline)))
                .as_mut(),
        }
    }

    /// Sets the wait of `delay`, which is not zero, that the next attempt
    /// made by [`next`](Self::next) waits out before it runs.
    #[cfg(feature = "tokio")]
    #[inline(never)]
    pub(super) fn wait_before_next(&mut self, delay: Duration) {
        debug_assert!(!delay.is_zero(), "a zero delay sets no wait");
        self.set_timer(delay);
        self.failures().timer.waiting = true;
    }

    /// What comes before each poll of an attempt made by
    /// [`next`](Self::next): the wait its retry set, then its span. Out of
    /// line, and cold, as only a retry or a traced call reaches it: so the
    /// path of a first attempt is laid out without it.
    #[cold]
    #[inline(never)]
    pub(super) fn before_attempt(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        #[cfg(feature = "tokio")]
        if self
            .failures
            .peek()
            .is_some_and(|failures| failures.timer.waiting)
        {
            let timer = &mut self.failures().timer;
            if let Some(sleep) = &mut timer.sleep
                && sleep.as_mut().poll(cx).is_pending()
            {
                return Poll::Pending;
            }
            timer.waiting = false;
        }
        #[cfg(not(feature = "tokio"))]
        let _ = cx;
        // Spans are opened before every attempt; a wait, once.
        if self.spans.as_deref().is_some_and(|spans| !spans.is_open()) {
            self.begin_attempt();
        }
        Poll::Ready(())
    }
}
