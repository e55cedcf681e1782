//! An attempt's future as its call runs it: seen by
//! [`attempt()`](crate::attempt()) on every poll, counted as started, in
//! the attempt's span, and dropped where `attempt()` still sees its call,
//! so that the destructors of an attempt that is cancelled (its call
//! dropped, its timer fired) see their own call wherever the drop happens:
//! in the body of another retried call, they would see that one.

use core::future::Future;
use core::mem::ManuallyDrop;
use core::pin::Pin;
use core::task::{Context, Poll};

use crate::current::{HasFrame, poll_in, sealed};

/// How an attempt reaches its call: by shared reference, or, for an attempt
/// made by [`Call::next`](crate::call::Call::next) that first waits out its
/// retry's delay, by unique one.
pub trait CallRef: sealed::Sealed {
    /// The call.
    #[doc(hidden)]
    type Call: HasFrame;

    /// The call, to read its frame.
    #[doc(hidden)]
    fn call(&self) -> &Self::Call;

    /// What comes before each poll of the attempt: the wait its retry set.
    #[doc(hidden)]
    fn before_poll(&mut self, cx: &mut Context<'_>) -> Poll<()>;
}

impl<K: HasFrame> sealed::Sealed for &K {}

impl<K: HasFrame> CallRef for &K {
    type Call = K;

    #[inline]
    fn call(&self) -> &K {
        self
    }

    #[inline]
    fn before_poll(&mut self, _: &mut Context<'_>) -> Poll<()> {
        Poll::Ready(())
    }
}

/// An attempt's future, run as one of its call's: made by `scoped` (and,
/// for a call whose attempts wait out their retry's delay, by `next`).
#[must_use = "an attempt does nothing unless awaited"]
pub struct Scoped<R: CallRef, F> {
    call: R,
    /// Dropped by `Drop`, in the call's frame. Not an `Option`: the
    /// discriminant would make every function's future larger.
    future: ManuallyDrop<F>,
}

impl<R: CallRef, F> Scoped<R, F> {
    pub(crate) fn new(call: R, future: F) -> Scoped<R, F> {
        Scoped {
            call,
            future: ManuallyDrop::new(future),
        }
    }

    /// How the attempt reaches its call, through the pin: a shared
    /// reference to the whole would reach the running attempt too, which
    /// its own borrows of itself forbid.
    pub(crate) fn call_ref(self: Pin<&mut Self>) -> &R {
        self.project().0
    }

    /// The call and the attempt's future, pinned.
    #[inline]
    fn project(self: Pin<&mut Self>) -> (&mut R, Pin<&mut F>) {
        // SAFETY: `future` is pinned with `Scoped` (structural pinning): it
        // is never moved out of a pinned `Scoped`, which is `Unpin` only
        // when `F` is, and whose `Drop` drops it in place. `call` is not
        // pinned.
        unsafe {
            let this = self.get_unchecked_mut();
            (&mut this.call, Pin::new_unchecked(&mut *this.future))
        }
    }
}

impl<R: CallRef + core::fmt::Debug, F> core::fmt::Debug for Scoped<R, F> {
    // Not derived: that would read a running attempt through a shared
    // reference, which its own borrows of itself forbid.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Scoped")
            .field("call", &self.call)
            .finish_non_exhaustive()
    }
}

impl<R: CallRef, F> Drop for Scoped<R, F> {
    #[inline]
    fn drop(&mut self) {
        let _entered = self.call.call().frame().entered();
        // SAFETY: dropped once, here, in place (so a pinned future is never
        // moved), and never used after.
        unsafe { ManuallyDrop::drop(&mut self.future) }
    }
}

impl<R: CallRef, F: Future> Future for Scoped<R, F> {
    type Output = F::Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let (call, future) = self.project();
        if call.before_poll(cx).is_pending() {
            return Poll::Pending;
        }
        poll_in(call.call(), future, cx)
    }
}
