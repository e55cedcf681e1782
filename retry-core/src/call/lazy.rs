//! An async call whose [`Call`] is built at its first failure: until then
//! it holds what its first attempt's frame needs, so that a call that
//! succeeds at once stores, reads back and drops a few words instead of the
//! whole call state, on every poll and after the attempt.

use core::fmt;
use core::future::Future;
use core::mem::ManuallyDrop;
#[cfg(feature = "tokio")]
use core::time::Duration;

use tracing::Span;

use super::failure_state::Boxed;
use super::first::{first_succeeded, succeeded};
use super::{Call, Decision, FieldVisitor, no_fields, no_span, starts};
use crate::backoff::Backoff;
use crate::class::Classification;
use crate::clock::Clock;
use crate::current::{self, Frame, HasFrame};
use crate::outcome::Outcome;
use crate::policy::Policy;
use crate::read_outcome::JudgeValue;
use crate::scoped::Scoped;
use crate::site::Site;
use crate::spans;

/// An async call that builds its [`Call`] only when its first attempt
/// fails (or from the start, when a subscriber may want its spans). The
/// expansion makes one for an `async fn` whose loop holds nothing of the
/// user's (no hook, `if_result`, `on = |e| ..` closure, `fields(..)`,
/// `limit`, `classic` breaker, `attempt_timeout`, `deadline` or `policy`,
/// which may set either); it has the methods of a [`Call`] that such a
/// loop calls, and, where the loop waits on tokio's timer, [`next`] and
/// [`retries`], whose attempts wait out their retry's delay before they
/// run.
///
/// [`next`]: LazyCall::next
/// [`retries`]: LazyCall::retries
#[derive(Debug)]
pub struct LazyCall<'p, B, C: Clock> {
    /// Dropped by `Drop`: a built call out of line, so that no function
    /// compiles the drop of one, nor runs its glue after a first-try
    /// success.
    pub(super) state: ManuallyDrop<State<'p, B, C>>,
}

#[derive(Debug)]
pub(super) enum State<'p, B, C: Clock> {
    /// The first attempt, before any failure.
    First(First<C>),
    /// The call, after a failure or from the start.
    Built(Call<'p, B, C, Boxed>),
}

/// What a call at its first attempt keeps: that attempt's frame, the
/// clock the call will be built with, and whether the attempt's success
/// ended the call.
#[derive(Debug)]
pub(super) struct First<C: Clock> {
    frame: Frame,
    /// Read at the start only for a deadline or the duration metric.
    started: Option<C::Reading>,
    clock: C,
    ended: bool,
}

impl<B, C: Clock> Drop for LazyCall<'_, B, C> {
    /// A call dropped before its first attempt ended was cancelled; a built
    /// call counts its own cancellation.
    #[inline]
    fn drop(&mut self) {
        match &*self.state {
            State::First(first) => {
                if !first.ended {
                    cancelled(first.frame.site);
                }
            }
            State::Built(_) => drop_built(&mut self.state),
        }
    }
}

/// Drops a built call, out of line: so that no function compiles the drop
/// of one, and a first-try success runs none of its glue
/// (`benches/HISTORY.md`, round 14, gives what the safe drop cost).
#[cold]
#[inline(never)]
fn drop_built<B, C: Clock>(state: &mut ManuallyDrop<State<'_, B, C>>) {
    // SAFETY: only `LazyCall`'s `Drop` calls this, once, and nothing uses
    // the state after; it is dropped in place.
    unsafe { ManuallyDrop::drop(state) }
}

/// A call dropped during its first attempt.
#[cold]
#[inline(never)]
fn cancelled(site: &'static Site) {
    site.cancelled();
}

impl<'p, B: Backoff, C: Clock + Copy> LazyCall<'p, B, C> {
    /// A call about to make its first attempt.
    #[inline]
    pub fn new(policy: &'p Policy<B>, site: &'static Site, clock: C) -> LazyCall<'p, B, C> {
        if spans::may_start() {
            return built_at_start(policy, site, clock);
        }
        let started = starts(policy, site, &clock, false);
        // Returned from each branch, not chosen between: a choice of two
        // states is made aside and copied into the function's future.
        LazyCall {
            state: ManuallyDrop::new(State::First(First {
                frame: Frame::first(site, policy.max_attempts),
                started,
                clock,
                ended: false,
            })),
        }
    }

    /// The number of the attempt in progress, or about to start (1 for the
    /// first).
    pub fn attempt(&self) -> u32 {
        match &*self.state {
            State::First(_) => 1,
            State::Built(call) => call.attempt(),
        }
    }

    /// Opens the span of the attempt about to run, when the call has spans.
    #[inline]
    pub fn begin_attempt(&mut self) {
        if let State::Built(call) = &mut *self.state {
            call.begin_attempt();
        }
    }

    /// An async attempt that [`attempt()`](crate::attempt()) sees on every
    /// poll. It holds the attempt's future itself, pinned with it.
    #[inline]
    pub fn scoped<F: Future>(&self, attempt: F) -> Scoped<&Self, F> {
        Scoped::new(self, attempt)
    }

    /// Decides what follows an attempt that returned `outcome`, as
    /// [`Call::decide`] does; `policy` is the call's own policy again.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn decide<R, F, D, V, L, A>(
        &mut self,
        policy: &'p Policy<B>,
        outcome: &R,
        classify: F,
        describe: D,
        judge_value: V,
        span: L,
        fields: A,
    ) -> Decision
    where
        R: Outcome + ?Sized,
        F: Fn(&R::Error) -> Classification,
        D: Fn(&R::Error, &mut fmt::Formatter<'_>) -> fmt::Result,
        V: JudgeValue<R::Value>,
        L: Fn() -> Span,
        A: Fn(FieldVisitor<'_>),
    {
        let call = match &mut *self.state {
            State::First(first) => {
                if succeeded(outcome, &judge_value) {
                    first.ended = true;
                    first_succeeded(policy, first.frame.site, first.started, &first.clock);
                    return Decision::Return;
                }
                // The built call decides as any call does; a value that is
                // a failure is judged again there, on the failure path
                // only, rather than a second copy of that decision here.
                self.build(policy)
            }
            State::Built(call) => call,
        };
        call.decide(
            policy,
            outcome,
            classify,
            describe,
            judge_value,
            span,
            fields,
        )
    }

    /// The call, built from the first attempt's frame after it failed.
    #[cold]
    #[inline(never)]
    fn build(&mut self, policy: &'p Policy<B>) -> &mut Call<'p, B, C, Boxed> {
        if let State::First(first) = &*self.state {
            let call = Call::at_attempt_one(
                policy,
                first.frame.moved(),
                first.clock,
                first.started,
                None,
            );
            *self.state = State::Built(call);
        }
        match &mut *self.state {
            State::Built(call) => call,
            State::First(_) => unreachable!("built above"),
        }
    }

    /// The next attempt: the first, or the one a retry decided by
    /// [`retries`](Self::retries), which waits out the retry's delay
    /// before it runs.
    #[cfg(feature = "tokio")]
    #[inline]
    pub fn next<F: Future>(&mut self, attempt: F) -> super::Next<'_, 'p, B, C, F> {
        Scoped::new(self, attempt)
    }

    /// Without the `tokio` feature an async function needs `sleep = ...`:
    /// its attempt fails [`NeedsASleeper`](crate::__private::NeedsASleeper).
    #[cfg(not(feature = "tokio"))]
    pub fn next<F>(&mut self, _attempt: F) -> core::future::Pending<F::Output>
    where
        F: Future + crate::__private::NeedsASleeper,
    {
        core::future::pending()
    }

    /// Decides as [`decide`](Self::decide) does, for a function without
    /// `fields(..)` (a `LazyCall`'s), and whether the call goes on: for a
    /// retry, the next attempt ([`next`](Self::next)) waits out its delay
    /// on tokio's timer before it runs.
    #[inline]
    pub fn retries<R, F, D, V>(
        &mut self,
        policy: &'p Policy<B>,
        outcome: &R,
        classify: F,
        describe: D,
        judge_value: V,
    ) -> bool
    where
        R: Outcome + ?Sized,
        F: Fn(&R::Error) -> Classification,
        D: Fn(&R::Error, &mut fmt::Formatter<'_>) -> fmt::Result,
        V: JudgeValue<R::Value>,
    {
        let decision = self.decide(
            policy,
            outcome,
            classify,
            describe,
            judge_value,
            no_span,
            no_fields,
        );
        let Decision::Retry(delay) = decision else {
            return false;
        };
        // Only a retry waits, and deciding one built the call. A zero
        // delay sets no wait, and is told here, so that a retry of no delay
        // makes no call for it.
        #[cfg(feature = "tokio")]
        if !delay.is_zero()
            && let State::Built(call) = &mut *self.state
        {
            call.wait_before_next(delay);
        }
        // Without tokio no function that calls this compiles: its `next`
        // is not a future.
        #[cfg(not(feature = "tokio"))]
        let _ = delay;
        true
    }

    /// Waits `delay` on tokio's timer, as [`Call::wait`] does.
    #[cfg(feature = "tokio")]
    #[inline]
    pub fn wait(&mut self, delay: Duration) -> crate::wait::Wait<'_> {
        match &mut *self.state {
            State::Built(call) => call.wait(delay),
            // Only a retry waits, and deciding one built the call.
            State::First(_) => crate::wait::Wait::new(None),
        }
    }
}

/// A call built as it starts: one that may have spans.
#[cold]
#[inline(never)]
fn built_at_start<'p, B: Backoff, C: Clock>(
    policy: &'p Policy<B>,
    site: &'static Site,
    clock: C,
) -> LazyCall<'p, B, C> {
    let started = starts(policy, site, &clock, true);
    LazyCall {
        state: ManuallyDrop::new(State::Built(Call::started(policy, site, clock, started))),
    }
}

impl<B, C: Clock> current::sealed::Sealed for LazyCall<'_, B, C> {}

impl<B, C: Clock> HasFrame for LazyCall<'_, B, C> {
    #[inline]
    fn starts(&self) -> (&Frame, Option<&Span>) {
        match &*self.state {
            State::First(first) => (&first.frame, None),
            State::Built(call) => call.starts(),
        }
    }

    #[inline]
    fn frame(&self) -> &Frame {
        match &*self.state {
            State::First(first) => &first.frame,
            State::Built(call) => call.frame(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backoff::Fixed;
    use crate::clock::SystemClock;
    use crate::current::attempt;
    use crate::read_outcome::NoFailure;
    use core::time::Duration;

    fn decide(
        call: &mut LazyCall<'static, Fixed, SystemClock>,
        policy: &'static Policy<Fixed>,
        outcome: Result<(), &str>,
    ) -> Decision {
        call.decide(
            policy,
            &outcome,
            |_| Classification::transient(),
            |e, f| f.write_str(e),
            NoFailure,
            Span::none,
            |_| {},
        )
    }

    #[test]
    fn a_lazy_call_retries_a_transient_failure_then_gives_up_when_attempts_run_out() {
        static SITE: Site = Site::new("lazy_call_gives_up");
        static POLICY: Policy<Fixed> =
            Policy::new(Fixed::new(Duration::from_millis(10))).max_attempts(2);
        let mut call = LazyCall::new(&POLICY, &SITE, SystemClock);
        assert_eq!(
            decide(&mut call, &POLICY, Err("busy")),
            Decision::Retry(Duration::from_millis(10))
        );
        assert_eq!(
            decide(&mut call, &POLICY, Err("busy")),
            Decision::GiveUp(crate::GiveUp::Exhausted)
        );
    }

    /// Polls `attempt` once, as the expansion's loop does, and gives what
    /// `attempt()` saw inside it.
    fn seen_inside(call: &LazyCall<'static, Fixed, SystemClock>) -> current::Attempt {
        let mut seen = None;
        let scoped = call.scoped(async { seen = attempt() });
        let waker = std::task::Waker::noop();
        let mut cx = core::task::Context::from_waker(waker);
        assert!(core::pin::pin!(scoped).poll(&mut cx).is_ready());
        seen.expect("inside the attempt")
    }

    static POLICY: Policy<Fixed> =
        Policy::new(Fixed::new(Duration::from_millis(10))).max_attempts(3);

    #[test]
    fn a_first_failure_builds_the_call_with_the_id_the_first_attempt_drew() {
        static SITE: Site = Site::new("lazy-builds");
        let mut call = LazyCall::new(&POLICY, &SITE, SystemClock);
        // Built at once only when a subscriber may want spans, which no
        // test of this crate sets.
        assert!(!spans::may_start());
        assert!(matches!(*call.state, State::First(_)));
        assert_eq!(call.attempt(), 1);
        let first = seen_inside(&call);
        assert_eq!((first.number(), first.max()), (1, Some(3)));

        assert_eq!(
            decide(&mut call, &POLICY, Err("busy")),
            Decision::Retry(Duration::from_millis(10))
        );
        assert!(matches!(*call.state, State::Built(_)));
        assert_eq!(call.attempt(), 2);
        let second = seen_inside(&call);
        assert_eq!(second.number(), 2);
        assert_eq!(second.call_id(), first.call_id(), "one id for the call");

        assert_eq!(decide(&mut call, &POLICY, Ok(())), Decision::Return);
        drop(call);
        let stats = crate::stats::Stats::of(&SITE);
        assert_eq!(
            (stats.calls, stats.successes_after_retries, stats.cancelled),
            (1, 1, 0)
        );
    }

    #[test]
    fn a_first_try_success_ends_the_call_and_a_drop_before_cancels_it() {
        static SITE: Site = Site::new("lazy-ends");
        let mut call = LazyCall::new(&POLICY, &SITE, SystemClock);
        assert_eq!(decide(&mut call, &POLICY, Ok(())), Decision::Return);
        assert!(matches!(*call.state, State::First(_)), "nothing built");
        drop(call);
        drop(LazyCall::new(&POLICY, &SITE, SystemClock));
        let stats = crate::stats::Stats::of(&SITE);
        assert_eq!(
            (stats.calls, stats.first_try_successes, stats.cancelled),
            (2, 1, 1)
        );
    }
}
