//! The attempts of a [`LazyCall`] whose function waits on tokio's timer:
//! each waits out the delay its retry decided before it runs, so that the
//! loop of an `async fn` awaits once per attempt, not twice. Every await
//! point is a state of the function's future that rustc lays out and
//! checks in each annotated function (`benches/HISTORY.md`, round 3, gives
//! what the await this saves cost).

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use super::LazyCall;
use super::lazy::State;
use crate::backoff::Backoff;
use crate::clock::Clock;
use crate::current;

/// An attempt of a [`LazyCall`], made by [`LazyCall::next`]: after a
/// retry, it first waits out the delay that the retry decided, on tokio's
/// timer (dropped during the wait, the retry never started: its budget
/// token goes back); then it runs the attempt's future where
/// [`attempt()`](crate::attempt()) sees it, in the attempt's span when the
/// call has spans.
#[derive(Debug)]
#[must_use = "an attempt does nothing unless awaited"]
pub struct Next<'c, 'p, B, C: Clock, F> {
    call: &'c mut LazyCall<'p, B, C>,
    future: F,
}

impl<'c, 'p, B, C: Clock, F> Next<'c, 'p, B, C, F> {
    pub(super) fn new(call: &'c mut LazyCall<'p, B, C>, future: F) -> Next<'c, 'p, B, C, F> {
        Next { call, future }
    }
}

impl<B: Backoff, C: Clock, F: Future> Future for Next<'_, '_, B, C, F> {
    type Output = F::Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `future` is pinned with `Next` (structural pinning): it
        // is never moved out of a pinned `Next`, which has no `Drop` and is
        // `Unpin` only when `F` is.
        let (call, future) = unsafe {
            let this = self.get_unchecked_mut();
            (&mut *this.call, Pin::new_unchecked(&mut this.future))
        };
        // A first attempt waits for nothing and has no span to open.
        if let State::Built(built) = &mut *call.state
            && built.before_attempt(cx).is_pending()
        {
            return Poll::Pending;
        }
        current::poll_in(&*call, future, cx)
    }
}
