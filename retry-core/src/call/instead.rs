//! What stands for an attempt that never ran: the deadline came while it
//! waited for its permit of a `limit`, or while the wait before it ran late
//! (a timer that fired late on a loaded machine). A timeout, where the
//! outcome type can be made of one; else the last attempt's outcome, which
//! is all that happened, kept from that attempt's end until the next one
//! starts.
//!
//! The expansion makes the place it keeps that outcome with
//! `Probe::<R>::new().__retry_last()`, which method resolution picks by
//! `R`: [`TimeoutStands`] for an outcome type that is `FromTimeout`, which
//! keeps nothing; [`LastStands`] for any other that is `Send`, so that
//! keeping it across the wait leaves an async function's future as `Send`
//! as it was; [`NothingStands`] for the rest, whose attempts wait for their
//! permit however long, and start after a wait that ran late. A sync
//! function's future is no concern, so `__retry_last_sync()` keeps any
//! other outcome type ([`LastStands`]). A sync function whose first attempt
//! runs before its call is built passes what makes a timeout instead
//! ([`Late`]); its last outcome is kept in the core.

use core::marker::PhantomData;
use core::time::Duration;

use crate::outcome::FromTimeout;
use crate::timeout::AttemptTimeout;

/// What an attempt's outcome is if the deadline comes before it runs; with
/// nothing, the attempt waits for its permit however long. A trait, so
/// that an async attempt's future holds a value of the outcome type only
/// where one is kept: it is `Send` as before for any other. Its methods
/// give plain types: an associated or opaque type held across an await
/// would fail rustc's check of `Send` for futures whose outcome borrows.
pub trait Instead<R> {
    /// Whether something stands for the attempt.
    fn stands(&self) -> bool;

    /// The outcome of an attempt that was given `given` and never ran;
    /// `None` when nothing stands for it.
    fn outcome(self, given: Duration) -> Option<R>;

    /// Drops what would have stood for the attempt, which runs: nothing of
    /// the last attempt is held while it does.
    #[inline(always)]
    fn discard(self)
    where
        Self: Sized,
    {
    }
}

/// A timeout stands for the attempt, where the outcome type can be made of
/// one.
#[derive(Debug)]
pub struct ByTimeout<R>(pub(crate) Option<fn(AttemptTimeout) -> R>);

impl<R> Instead<R> for ByTimeout<R> {
    #[inline]
    fn stands(&self) -> bool {
        self.0.is_some()
    }

    #[inline]
    fn outcome(self, given: Duration) -> Option<R> {
        self.0
            .map(|from_timeout| from_timeout(AttemptTimeout::new(given)))
    }
}

/// The last attempt's outcome stands for the attempt, where there was one.
#[derive(Debug)]
pub struct ByLast<R>(Option<R>);

impl<R> Instead<R> for ByLast<R> {
    #[inline]
    fn stands(&self) -> bool {
        self.0.is_some()
    }

    #[inline]
    fn outcome(self, _given: Duration) -> Option<R> {
        self.0
    }
}

/// Nothing stands for the attempt: what an async attempt's own timer
/// leaves to that timer (a timeout, which it makes itself), or leaves to
/// run.
#[derive(Debug)]
pub struct NoLast;

impl<R> Instead<R> for NoLast {
    #[inline(always)]
    fn stands(&self) -> bool {
        false
    }

    #[inline(always)]
    fn outcome(self, _given: Duration) -> Option<R> {
        None
    }
}

/// An outcome type made of a timeout: the timeout stands for an attempt
/// that never ran, and no outcome is kept.
#[derive(Debug)]
pub struct TimeoutStands<R>(PhantomData<fn() -> R>);

impl<R: FromTimeout> TimeoutStands<R> {
    pub(crate) const fn new() -> TimeoutStands<R> {
        TimeoutStands(PhantomData)
    }

    /// Drops the outcome of an attempt that failed: a timeout will stand
    /// for the next.
    #[inline(always)]
    pub fn keep(&mut self, _outcome: R) {}

    /// The timeout stands for the next attempt.
    #[inline(always)]
    pub fn instead(&mut self) -> ByTimeout<R> {
        ByTimeout(Some(R::from_timeout))
    }

    /// What stands for an async attempt after a wait that ran late: the
    /// attempt's own timer makes the timeout, so nothing here.
    #[inline(always)]
    pub fn late(&mut self) -> NoLast {
        NoLast
    }
}

/// Any other outcome type that is `Send`: the last failed attempt's
/// outcome stands for the next attempt, which never ran.
#[derive(Debug)]
pub struct LastStands<R>(Option<R>);

impl<R> LastStands<R> {
    pub(crate) const fn new() -> LastStands<R> {
        LastStands(None)
    }

    /// Keeps the outcome of an attempt that failed, to stand for the next.
    #[inline(always)]
    pub fn keep(&mut self, outcome: R) {
        self.0 = Some(outcome);
    }

    /// The last outcome stands for the next attempt, if there was one: a
    /// first attempt has none.
    #[inline(always)]
    pub fn instead(&mut self) -> ByLast<R> {
        ByLast(self.0.take())
    }

    /// The last outcome stands for an async attempt after a wait that ran
    /// late, as for one the deadline finds waiting for its permit. Lent,
    /// not moved: moved, it would take its room in the attempt's future
    /// too.
    #[inline(always)]
    pub fn late(&mut self) -> &mut LastStands<R> {
        self
    }
}

impl<R> Instead<R> for &mut LastStands<R> {
    #[inline(always)]
    fn stands(&self) -> bool {
        self.0.is_some()
    }

    #[inline(always)]
    fn outcome(self, _given: Duration) -> Option<R> {
        self.0.take()
    }

    #[inline(always)]
    fn discard(self) {
        self.0 = None;
    }
}

/// An outcome type that is neither: nothing stands for an attempt.
#[derive(Debug)]
pub struct NothingStands<R>(PhantomData<fn() -> R>);

impl<R> NothingStands<R> {
    pub(crate) const fn new() -> NothingStands<R> {
        NothingStands(PhantomData)
    }

    /// Drops the outcome of an attempt that failed.
    #[inline(always)]
    pub fn keep(&mut self, _outcome: R) {}

    /// Nothing stands for the next attempt.
    #[inline(always)]
    pub fn instead(&mut self) -> ByTimeout<R> {
        ByTimeout(None)
    }

    /// Nothing stands for an async attempt after a wait that ran late.
    #[inline(always)]
    pub fn late(&mut self) -> NoLast {
        NoLast
    }
}

/// What makes the outcome of a sync attempt that the deadline came before
/// (the wait for it ran late): a timeout, where the outcome type is made
/// of one. A type, so that a function without a deadline passes one of no
/// size, and the rest of its call checks for no deadline.
pub trait Late<R> {
    /// Whether the policy has a deadline: [`Deadline`] or [`NoDeadline`].
    type Within: Within;

    /// The timeout that stands for such an attempt, if one can.
    fn timeout(&self) -> Option<R>;
}

/// Whether a policy has a deadline, as a type: the rest of a sync call is
/// made once for each.
pub trait Within {
    /// Whether it has.
    const DEADLINE: bool;
}

/// A policy with a deadline.
#[derive(Debug)]
pub struct Deadline;

/// A policy without a deadline: nothing stands for an attempt, and no
/// wait runs past a deadline.
#[derive(Debug, Clone, Copy)]
pub struct NoDeadline;

impl Within for Deadline {
    const DEADLINE: bool = true;
}

impl Within for NoDeadline {
    const DEADLINE: bool = false;
}

impl<R> Late<R> for NoDeadline {
    type Within = NoDeadline;

    #[inline(always)]
    fn timeout(&self) -> Option<R> {
        None
    }
}

/// With a deadline, what makes an outcome of a timeout, where the outcome
/// type can (`Probe::__retry_from_timeout`).
impl<R> Late<R> for Option<fn(AttemptTimeout) -> R> {
    type Within = Deadline;

    // Matched, not mapped: a closure would be one more function for each
    // outcome type.
    #[inline]
    fn timeout(&self) -> Option<R> {
        let Some(from_timeout) = self else {
            return None;
        };
        Some(from_timeout(AttemptTimeout::new(Duration::ZERO)))
    }
}
