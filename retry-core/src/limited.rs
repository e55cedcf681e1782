//! An attempt that holds a permit of a concurrency limit while it runs.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use crate::current::{Pushed, held_slot};
use crate::limit::{Acquire, ConcurrencyLimit, Permit};

/// Where an attempt stands with the call's concurrency limit.
#[derive(Debug)]
enum Gate<'c> {
    Open,
    Waiting(Acquire<'c>),
    /// The permit, returned by its `Drop`.
    Holding(Permit<'c>),
}

pin_project_lite::pin_project! {
    /// An attempt that holds a permit of a concurrency limit while it runs,
    /// waiting for one first, and returns it as soon as it ends (or is
    /// dropped).
    pub struct Limited<'c, F> {
        // `None` only once dropped: an attempt dropped with its wrapper
        // (its call was cancelled) is dropped while the permit is still
        // held and marked as held, so that what it lets go of passes on
        // before the permit does, and a retried call its destructors make
        // under the same limit shares the permit instead of waiting for
        // it.
        #[pin]
        future: Option<F>,
        gate: Gate<'c>,
    }

    impl<'c, F> PinnedDrop for Limited<'c, F> {
        fn drop(this: Pin<&mut Self>) {
            let mut this = this.project();
            let _pushed = match &*this.gate {
                Gate::Holding(permit) => Some(Pushed::new(permit)),
                Gate::Open | Gate::Waiting(_) => None,
            };
            this.future.set(None);
        }
    }
}

impl<F> core::fmt::Debug for Limited<'_, F> {
    // Not derived: that would read a running attempt through a shared
    // reference, which its own borrows of itself forbid.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Limited")
            .field("gate", &self.gate)
            .finish_non_exhaustive()
    }
}

impl<'c, F> Limited<'c, F> {
    pub(crate) fn new(limit: Option<&'c ConcurrencyLimit>, future: F) -> Limited<'c, F> {
        let gate = match limit {
            Some(limit) => Gate::Waiting(limit.acquire()),
            None => Gate::Open,
        };
        Limited {
            gate,
            future: Some(future),
        }
    }
}

impl<'c, F> Limited<'c, F> {
    /// An attempt let in by `admission`, holding its permit as it starts.
    pub(crate) fn admitted(admission: Admission<'c>, future: F) -> Limited<'c, F> {
        Limited {
            gate: admission.0,
            future: Some(future),
        }
    }

    /// The attempt, reached only through its pin: a shared reference to a
    /// running attempt would forbid the borrows it holds of itself.
    pub(crate) fn attempt(self: Pin<&mut Self>) -> Option<Pin<&mut F>> {
        self.project().future.as_pin_mut()
    }

    /// Whether it is still waiting for its permit: its attempt has not
    /// started. Through the pin, reading the gate alone.
    pub(crate) fn is_queued(self: Pin<&mut Self>) -> bool {
        matches!(self.project().gate, Gate::Waiting(_))
    }
}

/// A permit taken for an attempt not made yet, or none under no limit.
#[derive(Debug)]
pub(crate) struct Admission<'c>(Gate<'c>);

impl<'c> Admission<'c> {
    /// A permit of `limit` when one is free, without queueing for one: for
    /// an attempt that is skipped rather than queued (a hedge). Nested in
    /// an attempt on this thread that holds the limit, it shares that
    /// one's permit, as a queued one would. `None` when none is free.
    pub(crate) fn try_now(limit: Option<&'c ConcurrencyLimit>) -> Option<Admission<'c>> {
        let gate = match limit {
            None => Gate::Open,
            Some(limit) => match held_slot(limit) {
                Some(slot) => Gate::Holding(limit.share(slot)),
                None => Gate::Holding(limit.try_acquire()?),
            },
        };
        Some(Admission(gate))
    }
}

impl<F: Future> Future for Limited<'_, F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let gate = this.gate;
        // Taken only by the drop, after which nothing polls.
        let Some(mut future) = this.future.as_pin_mut() else {
            return Poll::Pending;
        };
        if let Gate::Waiting(waiting) = gate {
            if waiting.is_new()
                && let Some(slot) = held_slot(waiting.limit())
            {
                // Nested in an attempt that holds this limit: run under
                // its permit, shared, so that it stays held while this
                // attempt runs, should it outlive that one.
                *gate = Gate::Holding(waiting.limit().share(slot));
            } else {
                match Pin::new(waiting).poll(cx) {
                    Poll::Ready(permit) => *gate = Gate::Holding(permit),
                    Poll::Pending => return Poll::Pending,
                }
            }
        }
        // The attempt is polled in one place only: each would be a copy of
        // its code.
        let _pushed = match &*gate {
            Gate::Holding(permit) => Some(Pushed::new(permit)),
            Gate::Open | Gate::Waiting(_) => None,
        };
        let poll = future.as_mut().poll(cx);
        if poll.is_ready() {
            // The attempt is over (an async body's locals are dropped as it
            // returns): free the slot before the wait.
            *gate = Gate::Open;
        }
        poll
    }
}
