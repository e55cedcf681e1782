//! Where the attempts of a hedged round wait: a list of slots as long as
//! the most attempts in flight, each empty or holding one attempt, pinned
//! in the round's future.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use super::HedgeFrame;
use crate::scoped::Scoped;

pin_project_lite::pin_project! {
    /// One place for an attempt in flight, and the rest of the list.
    #[derive(Debug)]
    pub struct Slot<F, R> {
        #[pin]
        attempt: Option<Scoped<HedgeFrame, F>>,
        #[pin]
        rest: R,
    }
}

/// The end of the list.
#[derive(Debug)]
pub struct End;

impl<F, R> Slot<F, R> {
    /// An empty slot before `rest`.
    pub const fn new(rest: R) -> Slot<F, R> {
        Slot {
            attempt: None,
            rest,
        }
    }
}

/// The slots of a hedged round, for attempts of type `F`.
pub trait Slots<F: Future>: sealed::Sealed {
    /// How many attempts are in flight.
    #[doc(hidden)]
    fn in_flight(&self) -> usize;

    /// Puts `attempt` in the first empty slot; gives it back when none is.
    #[doc(hidden)]
    fn start(self: Pin<&mut Self>, frame: HedgeFrame, attempt: F) -> Result<(), F>;

    /// Polls every attempt in flight, in the slots' order, until one
    /// ends: its number and outcome, its slot emptied (the attempt
    /// dropped in its own frame).
    #[doc(hidden)]
    fn poll_ended(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<(u32, F::Output)>;

    /// Drops every attempt in flight, each in its own frame.
    #[doc(hidden)]
    fn clear(self: Pin<&mut Self>);
}

mod sealed {
    /// Keeps [`Slots`](super::Slots) to the lists of this module.
    pub trait Sealed {}
}

impl sealed::Sealed for End {}
impl<F, R: sealed::Sealed> sealed::Sealed for Slot<F, R> {}

impl<F: Future> Slots<F> for End {
    fn in_flight(&self) -> usize {
        0
    }

    fn start(self: Pin<&mut Self>, _: HedgeFrame, attempt: F) -> Result<(), F> {
        Err(attempt)
    }

    fn poll_ended(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<(u32, F::Output)> {
        Poll::Pending
    }

    fn clear(self: Pin<&mut Self>) {}
}

impl<F: Future, R: Slots<F>> Slots<F> for Slot<F, R> {
    fn in_flight(&self) -> usize {
        usize::from(self.attempt.is_some()) + self.rest.in_flight()
    }

    fn start(self: Pin<&mut Self>, frame: HedgeFrame, attempt: F) -> Result<(), F> {
        let mut this = self.project();
        if this.attempt.is_some() {
            return this.rest.start(frame, attempt);
        }
        this.attempt.set(Some(Scoped::new(frame, attempt)));
        Ok(())
    }

    fn poll_ended(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<(u32, F::Output)> {
        let mut this = self.project();
        if let Some(attempt) = this.attempt.as_mut().as_pin_mut() {
            let number = attempt.call_ref().0.number;
            if let Poll::Ready(outcome) = attempt.poll(cx) {
                this.attempt.set(None);
                return Poll::Ready((number, outcome));
            }
        }
        this.rest.poll_ended(cx)
    }

    fn clear(self: Pin<&mut Self>) {
        let mut this = self.project();
        this.attempt.set(None);
        this.rest.clear();
    }
}
