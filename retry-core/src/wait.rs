//! The wait between async attempts on the default timer: tokio's, or
//! outside any tokio runtime one that a thread of this crate's own ends.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use crate::default_timer::DefaultTimer;

/// A wait on the timer a call keeps with its failure state, made by
/// [`Call::wait`](crate::call::Call::wait). It borrows the timer rather than
/// owning it, so that it adds a pointer to the function's future, not a
/// timer.
#[derive(Debug)]
#[must_use = "a wait does nothing unless awaited"]
pub struct Wait<'c>(Option<Pin<&'c mut DefaultTimer>>);

impl<'c> Wait<'c> {
    pub(crate) fn new(timer: Option<Pin<&'c mut DefaultTimer>>) -> Wait<'c> {
        Wait(timer)
    }
}

impl Future for Wait<'_> {
    type Output = ();

    /// Out of line, as [`Call::wait`](crate::call::Call::wait) is.
    #[inline(never)]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match &mut self.0 {
            Some(timer) => timer.as_mut().poll(cx),
            None => Poll::Ready(()),
        }
    }
}
