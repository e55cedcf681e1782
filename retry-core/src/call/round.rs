//! A hedged round as the function's loop holds it: its attempts in flight,
//! its timers and where it stands ([`Round`]), and what it tells the loop
//! ([`RoundEvent`]).

use core::future::Future;
use core::pin::Pin;
use core::time::Duration;

use super::Decision;
use super::phase::{TIMED_OUT, timeout_class};
use crate::budget::RetryBudget;
use crate::class::Classification;
use crate::hedge::{InFlight, RoundEnded};
use crate::timeout::AttemptTimeout;

pin_project_lite::pin_project! {
    /// A hedged round in progress, pinned in the function's future: its
    /// attempts in flight (`slots`), the timer of its next hedge and that
    /// of the deadline, and where it stands. The expansion makes one for
    /// each round; [`Call::begin_round`] starts it and
    /// [`Call::round_event`] runs it until something happens that the
    /// hooks may see.
    #[derive(Debug)]
    pub struct Round<L, W> {
        #[pin]
        pub(super) slots: L,
        #[pin]
        pub(super) deadline: Option<W>,
        #[pin]
        pub(super) hedge_timer: Option<W>,
        pub(super) state: RoundState,
    }
}

/// Where a round stands.
#[derive(Debug, Default)]
pub(super) struct RoundState {
    /// The number of its first attempt.
    pub(super) first: u32,
    /// The number the next attempt it starts will have.
    pub(super) next: u32,
    /// The highest number `max` allows.
    pub(super) last_allowed: u32,
    /// Each attempt's `attempt_timeout`, where a timeout can stand for
    /// its outcome.
    pub(super) timeout: Option<Duration>,
    /// What was left of the deadline as the round began, where a timeout
    /// can stand for the outcome.
    pub(super) left: Option<Duration>,
    /// A hedge is due: its delay passed while every slot was taken.
    pub(super) due: bool,
    /// The hedge the last event started, which has not run yet: the hooks
    /// before it run.
    pub(super) unrun_hedge: Option<UnrunHedge>,
}

/// A hedge started (its budget token taken, where the call has a budget)
/// whose body has not run: the hooks before it run. Dropped so, with its
/// round (the call was cancelled in those hooks), it gives its token
/// back; it is counted only once it [`runs`](Self::runs).
#[derive(Debug)]
pub(super) struct UnrunHedge {
    /// The hedge's attempt number.
    pub(super) number: u32,
    /// The budget its token was taken from, if any.
    pub(super) budget: Option<&'static RetryBudget>,
}

impl UnrunHedge {
    /// The hedge runs: its token stays taken.
    pub(super) fn runs(mut self) {
        self.budget = None;
    }
}

impl Drop for UnrunHedge {
    fn drop(&mut self) {
        if let Some(budget) = self.budget {
            budget.refund();
        }
    }
}

/// How a hedged function makes and times its attempts, bound once for the
/// call: `make` makes an attempt, `timer` (the function's sleeper) times
/// its hedges and the deadline, and `cut` makes the outcome of an attempt
/// a timer cuts, where the outcome type can be a timeout.
#[derive(Debug)]
pub struct Attempts<M, T, R> {
    pub(super) make: M,
    pub(super) timer: T,
    pub(super) cut: Option<fn(AttemptTimeout) -> R>,
}

impl<M, T, R> Attempts<M, T, R> {
    /// The function's attempts, made by `make`, timed by `timer`, cut into
    /// outcomes by `cut`.
    #[inline]
    pub fn new<F, W>(make: M, timer: T, cut: Option<fn(AttemptTimeout) -> R>) -> Attempts<M, T, R>
    where
        M: Fn() -> F,
        F: Future<Output = R>,
        T: Fn(Duration) -> W,
        W: Future<Output = ()>,
    {
        Attempts { make, timer, cut }
    }
}

impl<L, W> Round<L, W> {
    /// A round that has not begun, whose attempts go in `slots`.
    pub fn new(slots: L) -> Round<L, W> {
        Round {
            slots,
            deadline: None,
            hedge_timer: None,
            state: RoundState::default(),
        }
    }
}

/// What happened in a round, for the hooks: a hedge started, an attempt
/// failed beside others, or the round ended, with the decision on the
/// outcome that ended it.
#[derive(Debug)]
pub enum RoundEvent<R> {
    /// A hedge started (it has not run yet).
    Hedged(RoundEnded),
    /// An attempt failed in a way that may pass while others run.
    Beside(R, RoundEnded),
    /// The round ended with this attempt's outcome.
    Ended(R, Decision, RoundEnded),
}

/// How an attempt of a round ended, as the round reads it.
pub(super) enum RoundEnd {
    Succeeded,
    /// A failure after which another attempt may succeed.
    MayPass(Classification),
    /// A failure that no other attempt would change.
    ForGood(Classification),
}

/// What a round's poll saw happen.
pub(super) enum Happened<R> {
    /// Hedge `number` started.
    Hedged(u32),
    /// Attempt `number` failed beside others with this outcome.
    Beside(u32, R),
    /// Attempt `number` ended the round.
    Ended(u32, R, RoundEnd),
}

/// Sets the timer of the round's next hedge, `after` the last attempt
/// started, when one may start: `max` leaves room for it, and the hedges
/// are not off (`after` is `None`).
pub(super) fn arm<W, T: Fn(Duration) -> W>(
    timer: Pin<&mut Option<W>>,
    state: &RoundState,
    after: Option<Duration>,
    make: &T,
) {
    let mut timer = timer;
    match after {
        Some(after) if state.next <= state.last_allowed => timer.set(Some(make(after))),
        _ => timer.set(None),
    }
}

/// An attempt that failed while others of its round run.
pub(super) struct Beside {
    pub(super) number: u32,
    /// Whether it started as a hedge.
    pub(super) hedge: bool,
    /// How many others run.
    pub(super) in_flight: usize,
}

/// Whether a hedge starts.
pub(super) enum Hedging<F> {
    /// The hedge, in its span when the call has spans.
    Start(InFlight<F>),
    /// Not now: no permit of the limit is free.
    NotNow,
    /// No more in this round.
    NoMore,
}

/// The outcome of an attempt a timer cut after `given`: a timeout, which
/// only a round that can make one (`cut`) sets a timer for.
pub(super) fn timed_out<R>(cut: Option<fn(AttemptTimeout) -> R>, given: Duration) -> R {
    match cut {
        Some(from_timeout) => from_timeout(AttemptTimeout::new(given)),
        None => unreachable!("no timer cuts an attempt whose outcome cannot be a timeout"),
    }
}

/// How a round reads an attempt that a timer cut.
pub(super) fn cut_short() -> RoundEnd {
    RoundEnd::MayPass(timeout_class(TIMED_OUT))
}
