//! The attempts of a call whose function waits on the default timer and
//! runs nothing between its attempts that must follow the wait (no
//! `before` hook) or that must not count it (no permit, no timer): each
//! waits out the delay its retry decided before it runs, so that the loop
//! of an `async fn` awaits once per attempt, not twice. Every await point
//! is a state of the function's future that rustc lays out and checks in
//! each annotated function (`benches/HISTORY.md`, round 3, gives what the
//! await this saves cost).

use core::future::Future;
use core::task::{Context, Poll};
use core::time::Duration;

use super::Call;
use super::failure_state::{Boxed, Slot};
use crate::backoff::Backoff;
use crate::clock::Clock;
use crate::current;
use crate::scoped::CallRef;
#[cfg(feature = "tokio")]
use crate::scoped::Scoped;

/// An attempt made by [`Call::next`]: after a retry, it first waits out
/// the delay that [`Call::wait_next`] set, on the default timer (dropped
/// during the wait, the retry never started: its budget token goes back);
/// then it runs the attempt's future as [`Scoped`] runs one.
#[cfg(feature = "tokio")]
pub type Next<'c, 'p, B, C, F> = Scoped<&'c mut Call<'p, B, C, Boxed>, F>;

impl<B, C: Clock> current::sealed::Sealed for &mut Call<'_, B, C, Boxed> {}

impl<'p, B: Backoff, C: Clock> CallRef for &mut Call<'p, B, C, Boxed> {
    type Call = Call<'p, B, C, Boxed>;

    #[inline]
    fn call(&self) -> &Call<'p, B, C, Boxed> {
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

impl<'p, B: Backoff, C: Clock> Call<'p, B, C, Boxed> {
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
