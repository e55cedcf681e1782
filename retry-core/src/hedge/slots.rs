//! Where the attempts of a hedged round wait: a list of slots as long as
//! the most attempts in flight, each empty or holding one attempt (in its
//! own frame, holding its permit of the call's limit, if any) and the
//! timer of its `attempt_timeout`, pinned in the round's future.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use tracing::Span;

use super::HedgeFrame;
use crate::limited::Limited;
use crate::scoped::Scoped;

/// An attempt as a slot holds it: inside its permit (limits are
/// `static`s), in its frame.
pub type InFlight<F> = Limited<'static, Scoped<HedgeFrame, F>>;

pin_project_lite::pin_project! {
    /// One place for an attempt in flight, and the rest of the list.
    #[derive(Debug)]
    pub struct Slot<F, W, T, R> {
        // Declared first, so dropped first: the attempt lets go of what
        // it holds before its timer does.
        #[pin]
        attempt: Option<InFlight<F>>,
        number: u32,
        // Whether its attempt has been polled: a hedge counts from then.
        polled: bool,
        // When it started, on the call's clock.
        started: Option<T>,
        // Its `attempt_timeout`, whose timer starts once it holds its
        // permit.
        timeout: Option<Duration>,
        #[pin]
        timer: Option<W>,
        #[pin]
        rest: R,
    }
}

/// The end of the list.
#[derive(Debug)]
pub struct End;

impl<F, W, T, R> Slot<F, W, T, R> {
    /// An empty slot before `rest`.
    pub const fn new(rest: R) -> Self {
        Slot {
            attempt: None,
            number: 0,
            polled: false,
            started: None,
            timeout: None,
            timer: None,
            rest,
        }
    }
}

/// An attempt that ended, with what the round knows of it.
pub struct Finished<T, O> {
    /// Its number.
    pub number: u32,
    /// When it started, on the call's clock.
    pub started: T,
    /// Its span, when the call has spans.
    pub span: Option<Span>,
    /// How it ended.
    pub ended: Ended<O>,
}

/// How an attempt in flight ended.
pub enum Ended<T> {
    /// It returned this outcome.
    Returned(T),
    /// Its `attempt_timeout`, this long, ran out first; it was dropped.
    TimedOut(Duration),
}

/// The slots of a hedged round, for attempts of type `F` timed by `W`,
/// whose start is a reading `T` of the call's clock.
pub trait Slots<F: Future, W, T>: sealed::Sealed {
    /// How many attempts are in flight.
    #[doc(hidden)]
    fn in_flight(&self) -> usize;

    /// Whether a slot is empty: fewer attempts are in flight than the
    /// round allows.
    #[doc(hidden)]
    fn has_room(&self) -> bool;

    /// Whether attempt `number`, in a slot, has run: polled, and out of
    /// the queue for its permit. `None` when no slot holds it (it ended,
    /// or was never started).
    #[doc(hidden)]
    fn ran(self: Pin<&mut Self>, number: u32) -> Option<bool>;

    /// Puts `attempt`, number `number`, started at `started`, in the
    /// first empty slot, with its `timeout`; gives it back
    /// when none is empty.
    #[doc(hidden)]
    fn start(
        self: Pin<&mut Self>,
        number: u32,
        started: T,
        attempt: InFlight<F>,
        timeout: Option<Duration>,
    ) -> Result<(), InFlight<F>>;

    /// Polls every attempt in flight, in the slots' order, until one ends,
    /// its slot emptied (the attempt dropped in its own frame). `timer`
    /// makes the timers of `attempt_timeout`.
    #[doc(hidden)]
    fn poll_ended(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        timer: &dyn Fn(Duration) -> W,
    ) -> Poll<Finished<T, F::Output>>;

    /// Drops every attempt in flight, each in its own frame, telling
    /// `dropped` when each started.
    #[doc(hidden)]
    fn clear(self: Pin<&mut Self>, dropped: &mut dyn FnMut(T));
}

mod sealed {
    /// Keeps [`Slots`](super::Slots) to the lists of this module.
    pub trait Sealed {}
}

impl sealed::Sealed for End {}
impl<F, W, T, R: sealed::Sealed> sealed::Sealed for Slot<F, W, T, R> {}

impl<F: Future, W, T> Slots<F, W, T> for End {
    fn in_flight(&self) -> usize {
        0
    }

    fn has_room(&self) -> bool {
        false
    }

    fn ran(self: Pin<&mut Self>, _: u32) -> Option<bool> {
        None
    }

    fn start(
        self: Pin<&mut Self>,
        _: u32,
        _: T,
        attempt: InFlight<F>,
        _: Option<Duration>,
    ) -> Result<(), InFlight<F>> {
        Err(attempt)
    }

    fn poll_ended(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        _: &dyn Fn(Duration) -> W,
    ) -> Poll<Finished<T, F::Output>> {
        Poll::Pending
    }

    fn clear(self: Pin<&mut Self>, _: &mut dyn FnMut(T)) {}
}

impl<F, W, T, R> Slots<F, W, T> for Slot<F, W, T, R>
where
    F: Future,
    W: Future<Output = ()>,
    T: Copy,
    R: Slots<F, W, T>,
{
    fn in_flight(&self) -> usize {
        usize::from(self.attempt.is_some()) + self.rest.in_flight()
    }

    fn has_room(&self) -> bool {
        self.attempt.is_none() || self.rest.has_room()
    }

    fn ran(self: Pin<&mut Self>, number: u32) -> Option<bool> {
        let this = self.project();
        match this.attempt.as_pin_mut() {
            // Through the pin: a shared reference to a running attempt
            // would forbid the borrows it holds of itself.
            Some(attempt) if *this.number == number => Some(*this.polled && !attempt.is_queued()),
            _ => this.rest.ran(number),
        }
    }

    fn start(
        self: Pin<&mut Self>,
        number: u32,
        started: T,
        attempt: InFlight<F>,
        timeout: Option<Duration>,
    ) -> Result<(), InFlight<F>> {
        let mut this = self.project();
        if this.attempt.is_some() {
            return this.rest.start(number, started, attempt, timeout);
        }
        this.attempt.set(Some(attempt));
        *this.number = number;
        *this.polled = false;
        *this.started = Some(started);
        *this.timeout = timeout;
        Ok(())
    }

    fn poll_ended(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        timer: &dyn Fn(Duration) -> W,
    ) -> Poll<Finished<T, F::Output>> {
        let mut this = self.project();
        if let Some(mut attempt) = this.attempt.as_mut().as_pin_mut() {
            *this.polled = true;
            let ended = match attempt.as_mut().poll(cx) {
                Poll::Ready(outcome) => Some(Ended::Returned(outcome)),
                Poll::Pending => match *this.timeout {
                    Some(timeout) if !attempt.as_mut().is_queued() => {
                        if this.timer.is_none() {
                            this.timer.set(Some(timer(timeout)));
                        }
                        let fired = this
                            .timer
                            .as_mut()
                            .as_pin_mut()
                            .is_some_and(|timer| timer.poll(cx).is_ready());
                        fired.then_some(Ended::TimedOut(timeout))
                    }
                    _ => None,
                },
            };
            if let Some(ended) = ended
                && let Some(started) = this.started.take()
            {
                // The span outlives the attempt, for the round to record
                // how it ended.
                let span = attempt
                    .as_mut()
                    .attempt()
                    .and_then(|scoped| scoped.call_ref().1.clone());
                this.attempt.set(None);
                this.timer.set(None);
                return Poll::Ready(Finished {
                    number: *this.number,
                    started,
                    span,
                    ended,
                });
            }
        }
        this.rest.poll_ended(cx, timer)
    }

    fn clear(self: Pin<&mut Self>, dropped: &mut dyn FnMut(T)) {
        let mut this = self.project();
        this.attempt.set(None);
        this.timer.set(None);
        if let Some(started) = this.started.take() {
            dropped(started);
        }
        this.rest.clear(dropped);
    }
}
