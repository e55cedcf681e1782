//! The attempts of a [`LazyCall`] whose function waits on tokio's timer:
//! each waits out the delay its retry decided before it runs, so that the
//! loop of an `async fn` awaits once per attempt, not twice. Every await
//! point is a state of the function's future that rustc lays out and
//! checks in each annotated function (`benches/HISTORY.md`, round 3, gives
//! what the await this saves cost).

use core::task::{Context, Poll};

use super::LazyCall;
use super::lazy::State;
use crate::backoff::Backoff;
use crate::clock::Clock;
use crate::current;
use crate::scoped::{CallRef, Scoped};

/// An attempt of a [`LazyCall`], made by [`LazyCall::next`]: after a
/// retry, it first waits out the delay that the retry decided, on tokio's
/// timer (dropped during the wait, the retry never started: its budget
/// token goes back); then it runs the attempt's future as
/// [`Scoped`] runs one.
pub type Next<'c, 'p, B, C, F> = Scoped<&'c mut LazyCall<'p, B, C>, F>;

impl<B, C: Clock> current::sealed::Sealed for &mut LazyCall<'_, B, C> {}

impl<'p, B: Backoff, C: Clock> CallRef for &mut LazyCall<'p, B, C> {
    type Call = LazyCall<'p, B, C>;

    #[inline]
    fn call(&self) -> &LazyCall<'p, B, C> {
        self
    }

    #[inline]
    fn before_poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        // A first attempt waits for nothing and has no span to open.
        match &mut *self.state {
            State::Built(built) => built.before_attempt(cx),
            State::First(_) => Poll::Ready(()),
        }
    }
}
