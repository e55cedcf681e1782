//! The attempt state machine that the `#[retry]` expansion drives.
//!
//! The expansion runs the body, hands its outcome to [`Call::decide`] and
//! either returns it ([`Decision::Return`], [`Decision::GiveUp`]) or waits
//! and runs the body again ([`Decision::Retry`]). Every decision
//! (classification, delay, deadline, budget, giving up, logging, records,
//! alerts, statistics) is made here.

use core::fmt;
use core::future::Future;
use core::mem::ManuallyDrop;
use core::sync::atomic::AtomicU8;
use core::time::Duration;

use tracing::Span;

use crate::backoff::Backoff;
use crate::breaker::BreakerOpen;
use crate::class::Classification;
use crate::class::CodeKind;
use crate::clock::Clock;
use crate::current::{self, Frame, HasFrame};
use crate::export;
use crate::fallback::{Ended, answered};
pub use crate::fields::{FieldVisitor, Fields, Named, NoFields};
use crate::give_up::GiveUp;
use crate::hedge::RoundEnded;
use crate::hooks::Context;
use crate::jitter::Rng;
use crate::limited::Limited;
use crate::log;
use crate::outcome::{FromBreakerOpen, FromThrottled, FromTimeout, Outcome};
use crate::policy::{Idempotent, Policy};
use crate::read_outcome::JudgeValue;
use crate::site::Site;
use crate::spans::{self, Spans};
use crate::throttle::Throttled;
use crate::timeout::AttemptTimeout;
use decide::FailedValue;
use instead::{ByTimeout, Instead, NoLast};
use phase::{NEVER_RAN, NO_RETRY, RAN, TIMED_OUT};

mod decide;
mod failures;
mod first;
mod hedged;
pub(crate) mod instead;
mod phase;
mod round;
mod run;
mod wait;

use failures::{FailureState, Failures};
pub use first::{THREAD_WAITS, Waits, run_sync, throttled_early, throttles};
pub use instead::NoDeadline;
pub use round::{Attempts, Round, RoundEvent};

/// What to do after an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The attempt succeeded: return its outcome to the caller.
    Return,
    /// The attempt failed and no other will follow: return its outcome to
    /// the caller.
    GiveUp(GiveUp),
    /// Wait this long, then run the body again.
    Retry(Duration),
}

/// One call of a retried function: its attempt count, its clock and its
/// jitter state.
#[derive(Debug)]
pub struct Call<'p, B, C: Clock> {
    policy: &'p Policy<B>,
    /// The function's site, the attempt in progress (or about to start)
    /// and the call's id: what `attempt()` reads while an attempt runs.
    frame: Frame,
    clock: C,
    started: Option<C::Reading>,
    /// How the last attempt's timer ended it: [`RAN`] (it did not),
    /// [`TIMED_OUT`] or [`NEVER_RAN`].
    timed_out: AtomicU8,
    /// Whether the outcome was returned to the caller; a call dropped
    /// before that was cancelled.
    end: End,
    /// A retry was decided (its budget token taken) and its attempt has
    /// not started yet: [`NO_RETRY`], or the failure it follows
    /// ([`AFTER_TRANSIENT`](phase::AFTER_TRANSIENT), [`AFTER_RATE_LIMITED`](phase::AFTER_RATE_LIMITED)). It is counted when it
    /// starts, and its token given back if the call is dropped first.
    retry_pending: AtomicU8,
    /// The number of the last attempt a hedged round started, which may
    /// come after the one whose outcome ended the round (`frame.number`);
    /// 0 in a call that never hedged.
    hedged_to: u32,
    /// The call's spans, when a subscriber is interested. Taken and
    /// dropped by `Drop`, out of line: a field with drop glue of its own
    /// would be dropped by a call even when `None`.
    spans: ManuallyDrop<Option<Box<Spans>>>,
    /// Created at the first failure (or the first hook), so that a call that
    /// succeeds at once initialises none of it.
    failures: Failures,
}

/// Where a call stands with its caller.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum End {
    /// The outcome has not been returned: dropped now, the call was
    /// cancelled.
    Open,
    /// As `Open`, for a function with an `after` hook: its success is
    /// counted as it is returned, after the hook, so that a call dropped
    /// during the hook is counted as cancelled
    /// ([`count_success_on_return`](Call::count_success_on_return)).
    OpenUntilReturned,
    /// The outcome was returned to the caller, or is being returned.
    Returned,
}

/// The code of a value that `if_result` rejected.
pub(crate) const REJECTED: &str = "if_result";

/// What a call does as it starts, before its first attempt: the site
/// registered and the budget's deposit made. Gives the start time when the
/// call's time will be seen ([`timed_from_start`]); `watched`: whether a
/// subscriber was ever set ([`spans::may_start`]), which the caller has
/// asked already.
#[inline]
fn starts<B, C: Clock>(
    policy: &Policy<B>,
    site: &'static Site,
    clock: &C,
    watched: bool,
) -> Option<C::Reading> {
    site.register();
    if let Some(budget) = policy.budget {
        budget.deposit();
    }
    timed_from_start(policy, watched).then(|| clock.now())
}

/// Whether a call reads its clock as it starts: when something will see
/// its time, which then counts from there, first attempt included. Its
/// deadline counts from then; its dead-letter record gives it; the `timing`
/// feature (which `metrics` turns on) counts every call's; a subscriber
/// that listens to the library's events logs it (asked only when one was
/// ever set: `watched`). A call with hooks reads it too, as it is built
/// ([`Call::start_clock`]). Any other call reads no clock, and no figure
/// stands for its time.
#[inline]
fn timed_from_start<B>(policy: &Policy<B>, watched: bool) -> bool {
    policy.deadline.is_some()
        || policy.dead_letter.is_some()
        || export::TIMES_EVERY_CALL
        || (watched && log::listening())
}

/// Whether the call's last failure, kept in `failures`, had an HTTP
/// outcome, so that the next attempt is a resend.
fn after_http(failures: &Failures) -> bool {
    failures
        .peek()
        .and_then(|f| f.last_class)
        .is_some_and(|c| c.code_kind() == CodeKind::Http)
}

/// What every success tells the policy's shared state: the alert streak
/// ends, and the breaker hears of it.
#[inline]
fn success_seen<B>(policy: &Policy<B>, site: &'static Site) {
    if policy.alert_after.is_some() {
        site.success_streak();
    }
    if let Some(breaker) = policy.breaker {
        breaker.record(false);
    }
    if let Some(throttle) = policy.throttle {
        throttle.succeeded();
    }
}

impl<'p, B: Backoff, C: Clock> Call<'p, B, C> {
    /// A call about to make its first attempt, which boxes its failure
    /// state at the first failure. The clock is read now only when the
    /// call's time will be seen ([`timed_from_start`]).
    #[inline]
    pub fn new(policy: &'p Policy<B>, site: &'static Site, clock: C) -> Call<'p, B, C> {
        let watched = spans::may_start();
        let started = starts(policy, site, &clock, watched);
        let spans = if watched {
            spans::start_watched(site)
        } else {
            None
        };
        let frame = Frame::first(site, policy.max_attempts);
        Call::at_attempt_one(policy, frame, clock, started, spans)
    }

    /// A call at its first attempt, whose frame is `frame`, started at
    /// `started`.
    #[inline]
    fn at_attempt_one(
        policy: &'p Policy<B>,
        frame: Frame,
        clock: C,
        started: Option<C::Reading>,
        spans: Option<Box<Spans>>,
    ) -> Call<'p, B, C> {
        if let Some(spans) = &spans
            && policy.idempotent == Idempotent::Key
        {
            spans.idempotency_key(&frame.call_id.id().idempotency_key());
        }
        Call {
            policy,
            frame,
            clock,
            started,
            timed_out: AtomicU8::new(RAN),
            end: End::Open,
            retry_pending: AtomicU8::new(NO_RETRY),
            hedged_to: 0,
            spans: ManuallyDrop::new(spans),
            failures: Failures::default(),
        }
    }

    /// What an event of attempt `attempt` says of the call, `elapsed`
    /// into it, with the user's fields in `span`.
    fn about<'a>(
        &'a self,
        attempt: u32,
        elapsed: Option<Duration>,
        span: &'a dyn Fn() -> Span,
    ) -> log::About<'a, B> {
        log::About {
            site: self.frame.site,
            policy: self.policy,
            attempt,
            call_id: &self.frame.call_id,
            elapsed,
            span,
        }
    }

    fn failures(&mut self) -> &mut FailureState {
        self.failures.state()
    }

    /// A call whose jitter draws from `rng` instead of a generator seeded
    /// from entropy: the delays of a seeded call are reproducible.
    pub fn with_rng(mut self, rng: Rng) -> Call<'p, B, C> {
        self.failures().rng = Some(rng);
        self
    }

    /// The number of the attempt in progress, or about to start (1 for the
    /// first).
    pub fn attempt(&self) -> u32 {
        self.frame.number
    }

    /// How many attempts the call made or started: the number of the
    /// attempt in progress, or of the last a hedged round started.
    #[inline]
    fn attempts_made(&self) -> u32 {
        self.frame.number.max(self.hedged_to)
    }

    /// Why the call gave up, once it has.
    pub fn gave_up(&self) -> Option<GiveUp> {
        self.failures.peek().and_then(|f| f.gave_up)
    }

    /// Decides what follows an attempt that returned `outcome`.
    ///
    /// The outcome is read through functions of the error (`classify`,
    /// `describe` for the logs), of the value (`judge_value`: a closure
    /// that gives the classification of a value that is a failure, as an
    /// HTTP response with an error status or a value `if_result` rejects,
    /// else `None`; or [`NoFailure`](crate::read_outcome::NoFailure) when no value is),
    /// and [`Fields`], the span the call's log events go in and the
    /// arguments named in `fields(..)` for records. Each is called only on
    /// the path that needs it.
    ///
    /// `policy` is the call's own policy again, as [`scope`](Self::scope)
    /// takes it.
    #[inline]
    pub fn decide<R, F, D, V>(
        &mut self,
        policy: &Policy<B>,
        outcome: &R,
        classify: F,
        describe: D,
        judge_value: V,
        fields: impl Fields,
    ) -> Decision
    where
        R: Outcome + ?Sized,
        F: Fn(&R::Error) -> Classification,
        D: Fn(&R::Error, &mut fmt::Formatter<'_>) -> fmt::Result,
        V: JudgeValue<R::Value>,
    {
        debug_assert!(core::ptr::eq(policy, self.policy), "the call's own policy");
        // Copies: over no `fields(..)`, closures of no size, which a
        // success hands on without a store.
        let span = move || fields.span();
        let fields = move |visit: FieldVisitor<'_>| fields.visit(visit);
        match outcome.split() {
            Ok(value) => match judge_value.judge(value) {
                Some(class) => self.failed(class, &FailedValue(class), &span, &fields, false),
                None => self.succeeded(policy, &span),
            },
            Err(error) => self.error_failed(error, &classify, &describe, &span, &fields),
        }
    }

    /// Under `breaker = classic(..)`: whether the policy's breaker refuses
    /// the call before its first attempt.
    #[inline]
    pub fn refuses(&self) -> bool {
        self.policy
            .breaker
            .is_some_and(|breaker| !breaker.allow_call())
    }

    /// The outcome of a call its breaker [refuses](Call::refuses), which
    /// gives up with reason [`GiveUp::Breaker`] after no attempt: logged,
    /// counted and recorded like any give-up, with the code
    /// `breaker_open`.
    #[cold]
    #[inline(never)]
    pub fn refused<R: FromBreakerOpen>(&mut self, fields: impl Fields) -> R {
        let open = BreakerOpen::new();
        self.not_attempted(GiveUp::Breaker, "breaker_open", &open, fields);
        R::from_breaker_open(open)
    }

    /// Under `throttle = ..`: whether the policy's adaptive throttle
    /// rejects the call before its first attempt.
    #[inline]
    pub fn throttles(&self) -> bool {
        throttles(self.policy)
    }

    /// The outcome of a call its throttle [rejects](Call::throttles),
    /// which gives up with reason [`GiveUp::Throttled`] after no attempt:
    /// logged, counted and recorded like any give-up, with the code
    /// `throttled`.
    #[cold]
    #[inline(never)]
    pub fn throttled<R: FromThrottled>(&mut self, fields: impl Fields) -> R {
        let throttled = Throttled::new();
        self.not_attempted(GiveUp::Throttled, "throttled", &throttled, fields);
        R::from_throttled(throttled)
    }

    /// Under `fallback = ..`: whether the call's fallback answers it
    /// (a dynamic policy may turn it off).
    #[inline]
    pub fn falls_back(&self) -> bool {
        self.policy.fallback
    }

    /// The call gave up, and its fallback answered: logged, counted, and
    /// said on the call's span, after everything its giving up recorded.
    #[cold]
    #[inline(never)]
    pub fn fell_back(&self, fields: impl Fields) {
        answered(
            self.frame.site,
            &self.frame.call_id,
            self.spans.as_deref(),
            &|| fields.span(),
        );
    }

    /// What the call leaves for its fallback as it ends, having given up:
    /// its identity, and its spans, which stay open until the fallback
    /// answers.
    pub(crate) fn ended(&mut self) -> Ended {
        Ended {
            site: self.frame.site,
            call_id: self.frame.call_id.moved(),
            spans: self.spans.take(),
            falls_back: self.policy.fallback,
        }
    }

    /// A call that gives up for `reason` before its first attempt, which
    /// `error` stands for, with the code `code`.
    fn not_attempted(
        &mut self,
        reason: GiveUp,
        code: &'static str,
        error: &dyn fmt::Display,
        fields: impl Fields,
    ) {
        self.frame.number = 0;
        // The call counted as a first attempt as it started; none went out.
        if let Some(budget) = self.policy.budget {
            budget.take_back_deposit();
        }
        let class = Classification::transient().with_code(code).not_applied();
        let elapsed = self.elapsed();
        // What `on_give_up` reads as the call's last failure.
        self.failures().last_class = Some(class);
        self.give_up(
            reason,
            class,
            error,
            elapsed,
            &|| fields.span(),
            &|visit: FieldVisitor<'_>| fields.visit(visit),
        );
    }

    /// Opens the span of the attempt about to run, when the call has spans.
    #[inline]
    pub fn begin_attempt(&mut self) {
        if let Some(spans) = &mut *self.spans {
            spans.begin(self.frame.number, after_http(&self.failures));
        }
    }

    // The methods whose bounds what the user wrote can fail (`decide` above,
    // and the wrappers of an attempt: an error type that cannot stand for
    // a timeout, a sleeper that returns no future) stay beside the type:
    // rustc's note of such an error names a method of an impl in another
    // module by that module's path. The rest of a decision is in
    // `decide.rs`, the other wrappers in `run.rs`.

    /// Runs the async attempt that `attempt` makes for at most
    /// `attempt_timeout`, or the time left before the deadline if that is
    /// shorter, timed by `sleep` (the function's sleeper, so that it works
    /// on any executor); an attempt still running then is dropped and
    /// returns [`AttemptTimeout`](crate::AttemptTimeout). The attempt is
    /// made in this future's state, so that it is held once.
    pub fn timed<'c, R, F, T, W>(
        &'c self,
        attempt: impl FnOnce() -> F + 'c,
        sleep: T,
    ) -> impl Future<Output = R> + 'c
    where
        R: FromTimeout + 'c,
        F: Future<Output = R> + 'c,
        T: FnOnce(Duration) -> W + 'c,
        W: Future<Output = ()>,
    {
        // `cut`'s future itself: awaited in an async fn of its own, the
        // attempt would be held twice.
        self.cut(attempt, sleep, Some(R::from_timeout), NoLast)
    }

    /// [`timed`](Self::timed) when `from_timeout` can make an outcome of a
    /// timeout; otherwise the attempt runs to its end. Where the wait
    /// before a retry ran past the deadline, the retry does not start: the
    /// timeout stands for it, or else `late` (the last attempt's outcome),
    /// if something does.
    pub fn cut<'c, R, F, T, W>(
        &'c self,
        attempt: impl FnOnce() -> F + 'c,
        sleep: T,
        from_timeout: Option<fn(AttemptTimeout) -> R>,
        late: impl Instead<R> + 'c,
    ) -> impl Future<Output = R> + 'c
    where
        F: Future<Output = R> + 'c,
        T: FnOnce(Duration) -> W + 'c,
        W: Future<Output = ()>,
        R: 'c,
    {
        self.race::<TIMED_OUT, _, _, _, _>(
            attempt,
            sleep,
            ByTimeout(from_timeout),
            late,
            Self::attempt_limit,
            |_| true,
        )
    }

    /// The [`limited`](Self::limited) attempt that `limited` makes, for a
    /// call with a deadline: the wait for the permit ends at the deadline
    /// when something can stand for the attempt's outcome ([`Instead`]),
    /// and the attempt does not run; its outcome is that, as if it had run
    /// past the deadline. Once the attempt holds its permit, its own timer
    /// ([`cut`](Self::cut)) bounds it.
    pub fn limited_within<'c, R, F, T, W>(
        &'c self,
        limited: impl FnOnce() -> Limited<'c, F> + 'c,
        sleep: T,
        instead: impl Instead<R> + 'c,
    ) -> impl Future<Output = R> + 'c
    where
        F: Future<Output = R> + 'c,
        T: FnOnce(Duration) -> W + 'c,
        W: Future<Output = ()>,
        R: 'c,
    {
        self.race::<NEVER_RAN, _, _, _, _>(
            limited,
            sleep,
            instead,
            NoLast,
            Self::deadline_left,
            Limited::is_queued,
        )
    }

    /// The span of the attempt in progress, when the call has spans.
    #[inline]
    fn attempt_span(&self) -> Option<&Span> {
        self.spans.as_deref().map(Spans::attempt)
    }

    /// What hooks see: before an attempt (`outcome` is `None`) or after it.
    pub fn context<'o, R: ?Sized>(&mut self, outcome: Option<&'o R>) -> Context<'o, R> {
        // A call with hooks reads its clock as it is built
        // (`start_clock`), so its time is there.
        let elapsed = self.elapsed().unwrap_or_default();
        let attempt = self.frame.number;
        let (policy, site) = (self.policy, self.frame.site);
        let call_id = self.frame.call_id.id();
        let failures = self.failures();
        let (attempt, class, gave_up) = match outcome {
            None => (attempt, None, None),
            Some(_) if failures.last_delay.is_some() => (attempt - 1, failures.last_class, None),
            Some(_) => (attempt, failures.last_class, failures.gave_up),
        };
        Context {
            name: site.name(),
            attempt,
            max: policy.max(),
            elapsed,
            outcome,
            class,
            delay: failures.last_delay,
            gave_up,
            call_id,
            hedge: false,
        }
    }

    /// What hooks see of an attempt of a hedged round: before a hedge
    /// (`outcome` is `None`), after one that failed beside others, or
    /// after the one that ended the round.
    pub fn round_context<'o, R: ?Sized>(
        &mut self,
        outcome: Option<&'o R>,
        seen: RoundEnded,
    ) -> Context<'o, R> {
        let mut context = self.context(outcome);
        context.attempt = seen.attempt;
        context.hedge = seen.hedge;
        if seen.succeeded || outcome.is_none() {
            context.class = None;
        }
        if seen.beside || outcome.is_none() {
            context.delay = None;
            context.gave_up = None;
        }
        context
    }
}

impl<B, C: Clock> current::sealed::Sealed for Call<'_, B, C> {}

impl<B, C: Clock> HasFrame for Call<'_, B, C> {
    #[inline]
    fn starts(&self) -> (&Frame, Option<&Span>) {
        self.attempt_starts();
        (&self.frame, self.spans.as_deref().map(Spans::attempt))
    }

    #[inline]
    fn frame(&self) -> &Frame {
        &self.frame
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backoff::{Exponential, Fixed, NoBackoff};
    use crate::clock::SystemClock;
    use crate::jitter::Jitter;
    use crate::read_outcome::NoFailure;
    use std::cell::Cell;
    use std::time::Instant;

    /// A clock that moves only when told to.
    struct ManualClock {
        now: Cell<Instant>,
    }

    impl ManualClock {
        fn new() -> ManualClock {
            ManualClock {
                now: Cell::new(Instant::now()),
            }
        }

        fn advance(&self, by: Duration) {
            self.now.set(self.now.get() + by);
        }
    }

    impl Clock for ManualClock {
        type Reading = Instant;

        fn now(&self) -> Instant {
            self.now.get()
        }

        fn since(&self, earlier: Instant) -> Duration {
            self.now.get().saturating_duration_since(earlier)
        }
    }

    #[test]
    fn a_call_retries_a_transient_failure_then_gives_up_when_attempts_run_out() {
        static SITE: Site = Site::new("call_gives_up");
        let policy = Policy::new(Fixed::new(Duration::from_millis(10))).max_attempts(2);
        let mut call = Call::new(&policy, &SITE, SystemClock);
        let mut decide = |outcome: Result<(), &str>| {
            call.decide(
                &policy,
                &outcome,
                |_| Classification::transient(),
                |e, f| f.write_str(e),
                NoFailure,
                NoFields,
            )
        };
        assert_eq!(
            decide(Err("busy")),
            Decision::Retry(Duration::from_millis(10))
        );
        assert_eq!(decide(Err("busy")), Decision::GiveUp(GiveUp::Exhausted));
    }

    #[test]
    fn a_call_reads_its_clock_as_it_starts_only_when_its_time_will_be_seen() {
        static SINK: crate::dead_letter::Memory = crate::dead_letter::Memory::new();
        let plain = Policy::new(NoBackoff);
        let seen = [
            plain.deadline(Duration::from_secs(1)),
            plain.dead_letter(&SINK),
        ];
        for policy in &seen {
            assert!(timed_from_start(policy, false));
        }
        // Unwatched, only the `timing` feature times a plain call.
        assert_eq!(timed_from_start(&plain, false), export::TIMES_EVERY_CALL);
    }

    fn describe(e: &&str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(e)
    }

    fn fail<B: Backoff, C: Clock>(call: &mut Call<'_, B, C>, class: Classification) -> Decision {
        let policy = call.policy;
        call.decide(
            policy,
            &Err::<(), &str>("boom"),
            |_| class,
            describe,
            NoFailure,
            NoFields,
        )
    }

    const S: fn(u64) -> Duration = Duration::from_secs;

    static SITE: Site = Site::new("t");

    #[test]
    fn success_on_the_first_attempt_is_done_at_once() {
        let policy = Policy::new(Exponential::DEFAULT);
        let mut call = Call::new(&policy, &SITE, SystemClock);
        let decision = call.decide(
            &policy,
            &Ok::<u8, ()>(7),
            |_| unreachable!(),
            |_, _| Ok(()),
            NoFailure,
            NoFields,
        );
        assert_eq!(decision, Decision::Return);
        assert_eq!(call.attempt(), 1);
    }

    #[test]
    fn an_operation_that_must_not_run_twice_retries_only_what_did_not_take_effect() {
        let policy = Policy::new(Fixed::new(S(1))).idempotent(Idempotent::No);
        let mut call = Call::new(&policy, &SITE, SystemClock);
        let refused = Classification::transient().not_applied();
        assert_eq!(fail(&mut call, refused), Decision::Retry(S(1)));
        assert_eq!(
            fail(&mut call, Classification::transient()),
            Decision::GiveUp(GiveUp::MaybeApplied)
        );

        let mut call = Call::new(&policy, &SITE, SystemClock);
        let served: Classification = crate::http::status(503);
        assert_eq!(fail(&mut call, served), Decision::Retry(S(1)));
        let gateway: Classification = crate::http::status(502);
        assert_eq!(
            fail(&mut call, gateway),
            Decision::GiveUp(GiveUp::MaybeApplied)
        );

        // The default retries both.
        let policy = Policy::new(Fixed::new(S(1)));
        let mut call = Call::new(&policy, &SITE, SystemClock);
        assert_eq!(
            fail(&mut call, crate::http::status(502)),
            Decision::Retry(S(1))
        );
    }

    #[test]
    fn exponential_waits_double_until_attempts_run_out() {
        let policy = Policy::new(Exponential::new(S(1), 2.0, S(30))).max_attempts(4);
        let mut call = Call::new(&policy, &SITE, SystemClock);
        let t = Classification::transient();
        assert_eq!(fail(&mut call, t), Decision::Retry(S(1)));
        assert_eq!(fail(&mut call, t), Decision::Retry(S(2)));
        assert_eq!(fail(&mut call, t), Decision::Retry(S(4)));
        assert_eq!(fail(&mut call, t), Decision::GiveUp(GiveUp::Exhausted));
        assert_eq!(call.attempt(), 4);
    }

    #[test]
    fn logical_and_validation_errors_end_the_call_at_once() {
        let policy = Policy::new(NoBackoff);
        let mut call = Call::new(&policy, &SITE, SystemClock);
        assert_eq!(
            fail(&mut call, Classification::logical()),
            Decision::GiveUp(GiveUp::Permanent)
        );
        let mut call = Call::new(&policy, &SITE, SystemClock);
        assert_eq!(
            fail(&mut call, Classification::validation()),
            Decision::GiveUp(GiveUp::Validation)
        );
    }

    #[test]
    fn a_server_delay_lengthens_the_backoff_never_shortens_it_and_a_too_long_one_gives_up() {
        let policy = Policy::new(Fixed::new(S(1))).max_retry_after(S(10));
        let mut call = Call::new(&policy, &SITE, SystemClock);
        let asked = |d| Classification::rate_limited().with_retry_after(d);
        assert_eq!(fail(&mut call, asked(S(3))), Decision::Retry(S(3)));
        assert_eq!(
            fail(&mut call, Classification::rate_limited()),
            Decision::Retry(S(1))
        );
        assert_eq!(
            fail(&mut call, asked(Duration::ZERO)),
            Decision::Retry(S(1))
        );
        assert_eq!(
            fail(&mut call, asked(S(11))),
            Decision::GiveUp(GiveUp::RetryAfterTooLong)
        );

        let ignoring = Policy::new(Fixed::new(S(1))).honor_retry_after(false);
        let mut call = Call::new(&ignoring, &SITE, SystemClock);
        assert_eq!(fail(&mut call, asked(S(3600))), Decision::Retry(S(1)));
    }

    #[test]
    fn enormous_server_delays_never_panic_and_never_sleep() {
        let policy = Policy::new(NoBackoff);
        let mut call = Call::new(&policy, &SITE, SystemClock);
        let huge = Classification::rate_limited().with_retry_after(Duration::MAX);
        assert_eq!(
            fail(&mut call, huge),
            Decision::GiveUp(GiveUp::RetryAfterTooLong)
        );
    }

    #[test]
    fn no_wait_begins_that_would_end_at_or_past_the_deadline() {
        let clock = ManualClock::new();
        let policy = Policy::new(Fixed::new(S(1))).unbounded().deadline(S(5));
        let mut call = Call::new(&policy, &SITE, &clock);
        let mut attempts = 1;
        while let Decision::Retry(delay) = fail(&mut call, Classification::transient()) {
            clock.advance(delay);
            attempts += 1;
        }
        // Attempts start at 0, 1, 2, 3 and 4 s; a wait to 5 s would reach the deadline.
        assert_eq!(attempts, 5);
        assert_eq!(call.gave_up(), Some(GiveUp::Deadline));
    }

    #[test]
    fn the_deadline_counts_the_time_attempts_take() {
        let clock = ManualClock::new();
        let policy = Policy::new(Fixed::new(S(1))).unbounded().deadline(S(10));
        let mut call = Call::new(&policy, &SITE, &clock);
        clock.advance(S(9));
        assert_eq!(
            fail(&mut call, Classification::transient()),
            Decision::GiveUp(GiveUp::Deadline)
        );
    }

    #[test]
    fn seeded_jitter_is_reproducible_and_within_the_cap() {
        let policy = Policy::new(Exponential::new(S(1), 2.0, S(5)))
            .max_attempts(10)
            .jitter(Jitter::Full);
        let run = || {
            let mut call = Call::new(&policy, &SITE, SystemClock).with_rng(Rng::seeded(42));
            let mut delays = Vec::new();
            while let Decision::Retry(d) = fail(&mut call, Classification::transient()) {
                delays.push(d);
            }
            delays
        };
        let delays = run();
        assert_eq!(delays.len(), 9);
        assert_eq!(delays, run());
        assert!(delays.iter().all(|d| *d <= S(5)));
    }

    #[test]
    fn decorrelated_jitter_grows_from_the_previous_delay() {
        let policy = Policy::new(Exponential::new(S(1), 2.0, S(1000)))
            .max_attempts(20)
            .jitter(Jitter::Decorrelated);
        let mut call = Call::new(&policy, &SITE, SystemClock).with_rng(Rng::seeded(7));
        let mut previous = S(1);
        while let Decision::Retry(d) = fail(&mut call, Classification::transient()) {
            assert!(S(1) <= d && d <= previous * 3, "{d:?} after {previous:?}");
            previous = d;
        }
    }

    #[test]
    fn attempt_numbers_saturate_instead_of_overflowing() {
        let policy = Policy::new(NoBackoff).unbounded();
        let mut call = Call::new(&policy, &SITE, SystemClock);
        call.frame.number = u32::MAX;
        assert_eq!(
            fail(&mut call, Classification::transient()),
            Decision::Retry(Duration::ZERO)
        );
        assert_eq!(call.attempt(), u32::MAX);
    }
}
