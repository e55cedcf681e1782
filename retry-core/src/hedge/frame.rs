//! The frame of one attempt of a hedged round, owned by its slot: attempts
//! in flight together each have their own number, and share the call's id.

use core::task::{Context, Poll};

use crate::current::{Frame, HasFrame, sealed};
use crate::scoped::CallRef;

/// An attempt's own frame, which its [`Scoped`](crate::scoped::Scoped)
/// holds by value: entered on each of its polls and as it is dropped; and
/// its span, when the call has spans, entered on each poll.
#[derive(Debug)]
pub struct HedgeFrame(pub(crate) Frame, pub(crate) Option<tracing::Span>);

impl sealed::Sealed for HedgeFrame {}

impl HasFrame for HedgeFrame {
    /// Counts nothing: the round counts the attempt once it has started.
    #[inline]
    fn starts(&self) -> (&Frame, Option<&tracing::Span>) {
        (&self.0, self.1.as_ref())
    }

    #[inline]
    fn frame(&self) -> &Frame {
        &self.0
    }
}

impl CallRef for HedgeFrame {
    type Call = HedgeFrame;

    #[inline]
    fn call(&self) -> &HedgeFrame {
        self
    }

    #[inline]
    fn before_poll(&mut self, _: &mut Context<'_>) -> Poll<()> {
        Poll::Ready(())
    }
}
