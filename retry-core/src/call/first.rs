//! The first attempt of a sync call, run before any [`Call`] is built:
//! a call that succeeds at once then costs the attempt's frame and a
//! counter, and the rest of the machinery stays out of line, in the code
//! that only a failure reaches. A call that may have spans (a subscriber
//! was set) makes all of its attempts there.

use core::cell::Cell;
use core::fmt;
use core::mem::{self, ManuallyDrop};
use core::sync::atomic::Ordering;
use core::time::Duration;

use super::decide::FailedValue;
use super::instead::{Late, NoDeadline, Within};
use super::phase::{NEVER_RAN, RAN, timeout_class};
use super::{Call, Decision, starts, success_seen};
use crate::backoff::Backoff;
use crate::class::Classification;
use crate::clock::{Clock, SystemClock, SystemReading, thread_sleep};
use crate::current::Frame;
use crate::export;
use crate::fallback::Ended;
use crate::fields::{no_fields, no_span};
use crate::outcome::{FromThrottled, Outcome};
use crate::policy::Policy;
use crate::read_outcome::{DynJudge, JudgeValue};
use crate::site::Site;
use crate::spans;

/// How a call whose first attempt ran began: that attempt's frame (with
/// the call's id, if the body drew it) and the call's start time.
#[derive(Debug)]
struct Started {
    frame: Frame,
    at: Option<SystemReading>,
}

/// How a sync call waits between attempts, and how it ends after them:
/// `sleep`, its sleeper; `late`, which makes the outcome of an attempt
/// that a wait ran past the deadline kept from starting (a `Late`):
/// `NoDeadline` for a policy without one; and, under `fallback = ..`,
/// `ended`, where a call that gives up leaves what its fallback needs
/// ([`Ended`]): the fallback answers after the call, where the body's
/// closure no longer borrows the arguments.
#[derive(Debug)]
pub struct Waits<'e, S, L> {
    sleep: S,
    late: L,
    ended: Option<&'e mut Option<Ended>>,
}

impl<S: Sleeper, L> Waits<'static, S, L> {
    /// Waits on `sleep`, with `late` for a wait that ran past the deadline.
    #[inline]
    pub fn new(sleep: S, late: L) -> Waits<'static, S, L> {
        Waits {
            sleep,
            late,
            ended: None,
        }
    }
}

impl<S, L> Waits<'_, S, L> {
    /// The same waits, for a call that leaves what its fallback needs in
    /// `ended` when it gives up.
    #[inline]
    pub fn ending(self, ended: &mut Option<Ended>) -> Waits<'_, S, L> {
        Waits {
            sleep: self.sleep,
            late: self.late,
            ended: Some(ended),
        }
    }
}

/// The waits of most sync functions: on the thread, with no deadline, and
/// no fallback. A constant, so that a function names it rather than calls
/// [`Waits::new`], which rustc checks again in each.
pub const THREAD_WAITS: Waits<'static, ThreadSleep, NoDeadline> = Waits {
    sleep: ThreadSleep,
    late: NoDeadline,
    ended: None,
};

/// What a sync call sleeps with: a function of the delay (`sleep = ..`),
/// or [`ThreadSleep`].
pub trait Sleeper {
    /// Sleeps `delay`.
    fn sleep(&self, delay: Duration);
}

impl<F: Fn(Duration)> Sleeper for F {
    #[inline]
    fn sleep(&self, delay: Duration) {
        self(delay);
    }
}

/// The thread's own sleep, as a type of no size.
#[derive(Clone, Copy, Debug)]
pub struct ThreadSleep;

impl Sleeper for ThreadSleep {
    #[inline]
    fn sleep(&self, delay: Duration) {
        thread_sleep(delay);
    }
}

/// A sync call whose loop holds nothing of the user's: its first attempt
/// inline, as [`Call::new`] and [`Call::scope`] would make it, then,
/// when it failed, the rest of the call out of line (`rest_sync`). A
/// success is counted and returned. When a subscriber may want spans, no
/// attempt runs here: the whole call is `rest_sync`'s, so that what spans
/// take is made once for each backoff type, not for each function.
///
/// The expansion calls this with the body's closure and what reads its
/// outcome (probes of its error and value types, or closures), so that each
/// annotated function compiles one call; `judge_value` is `decide`'s:
/// whether a successful value is a failure. The first attempt and the
/// hand-over are one function with one way out to the rest, so that each
/// function compiles no `Result` of them to match.
///
/// `waits` says how the call waits between attempts, and where it leaves
/// what its fallback needs ([`Waits`]).
///
/// Only for a policy without a concurrency limit, whose permit only a call
/// holds: the expansion calls this for no other.
#[inline]
pub fn run_sync<B, R, A, V, D, S, L>(
    policy: &'static Policy<B>,
    site: &'static Site,
    mut attempt: A,
    judge_value: V,
    classify: &dyn Fn(&R::Error) -> Classification,
    describe: D,
    waits: Waits<'_, S, L>,
) -> R
where
    B: Backoff,
    R: Outcome,
    A: FnMut() -> R,
    V: JudgeValue<R::Value>,
    D: Fn(&R::Error, &mut fmt::Formatter<'_>) -> fmt::Result,
    S: Sleeper,
    L: Late<R>,
{
    let Waits { sleep, late, ended } = waits;
    debug_assert!(
        policy.limit.is_none(),
        "a first attempt without a call holds no permit"
    );
    // Taken before the first attempt's outcome is held: nothing between
    // that outcome and the call that takes it may unwind, or every function
    // would compile a landing pad to drop it.
    let judged = judge_value.as_dyn();
    // Without a start, no attempt has run: a subscriber may want the
    // call's spans, which the rest of the call makes, from its start.
    let (outcome, started) = 'rest: {
        if spans::may_start() {
            break 'rest (None, None);
        }
        let started = starts(policy, site, &SystemClock, false);
        let frame = Frame::first(site, policy.max_attempts);
        let entered = frame.enter_first();
        let outcome = attempt();
        let left = entered.leave();
        let succeeded = succeeded(&outcome, &judge_value);
        entered.judged(left);
        if succeeded {
            first_succeeded(policy, site, started, &SystemClock);
            return outcome;
        }
        let started = Started { frame, at: started };
        (Some(outcome), Some(started))
    };
    // Built here and handed over whole: the rest reads it where it is.
    let last = LastAttempt {
        outcome: ManuallyDrop::new(outcome),
        attempt: &mut attempt,
        classify,
        describe: &describe,
        judge_value: judged,
        late,
    };
    rest_sync(policy, site, last, started, &sleep, ended)
}

/// Under `throttle = ..`, whether the policy's adaptive throttle rejects
/// a call before its first attempt.
#[inline]
pub fn throttles<B>(policy: &Policy<B>) -> bool {
    policy.throttle.is_some_and(|throttle| !throttle.allows())
}

/// The outcome of a sync call whose first attempt would run early, which
/// its throttle [rejects](throttles): given up with reason `throttled`
/// after no attempt, as [`Call::throttled`] gives it up, with what its
/// fallback needs left in `ended`.
#[cold]
#[inline(never)]
pub fn throttled_early<B: Backoff, R: FromThrottled>(
    policy: &Policy<B>,
    site: &'static Site,
    ended: Option<&mut Option<Ended>>,
) -> R {
    let mut call = Call::new(policy, site, SystemClock);
    let outcome = call.throttled(super::NoFields);
    if let Some(ended) = ended {
        *ended = Some(call.ended());
    }
    outcome
}

/// Whether an attempt's outcome is a success: a value `judge_value` does
/// not take for a failure. A function of its own, made once for each
/// outcome type rather than in each function that reads one.
#[inline]
pub(super) fn succeeded<R, V>(outcome: &R, judge_value: &V) -> bool
where
    R: Outcome + ?Sized,
    V: JudgeValue<R::Value>,
{
    match outcome.split() {
        Ok(value) => judge_value.judge(value).is_none(),
        Err(_) => false,
    }
}

/// What `Call::decide` does after a first attempt that succeeded, for a
/// call that started at `started` on `clock`.
#[inline]
pub(super) fn first_succeeded<B, C: Clock>(
    policy: &Policy<B>,
    site: &'static Site,
    started: Option<C::Reading>,
    clock: &C,
) {
    let elapsed = match started {
        Some(started) if export::TIMES_EVERY_CALL => Some(clock.since(started)),
        _ => None,
    };
    site.first_try_success(elapsed);
    success_seen(policy, site);
}

/// Runs what is left of a sync call after its first attempt in
/// [`run_sync`]: the decision on that attempt, then the retries, each
/// waited for with `sleep`; or, for a call that may have spans, the whole
/// call.
///
/// Only the code that runs the body and reads its outcome is made for each
/// function, as its closures; this function is made once for each backoff
/// and outcome type, and the loop in it, `rest_of_call`, once for each
/// backoff type, so that an annotated function compiles little more than
/// its body and its first attempt. The policy is read from memory there,
/// on the failure path only. Both are made twice where functions of one
/// backoff type have a deadline and others have none ([`Within`]).
#[inline(never)]
fn rest_sync<B: Backoff, R: Outcome, L: Late<R>>(
    policy: &Policy<B>,
    site: &'static Site,
    mut last: LastAttempt<'_, R, L>,
    started: Option<Started>,
    sleep: &dyn Sleeper,
    ended: Option<&mut Option<Ended>>,
) -> R {
    // How the call started is read where the first attempt left it: only
    // the call state copies its frame.
    rest_of_call::<B, L::Within>(policy, site, started.as_ref(), &mut last, sleep, ended);
    ManuallyDrop::into_inner(last.outcome)
        .expect("the rest of a call returns on an attempt's outcome")
}

/// The body of a sync function, as the rest of its call runs it: a trait
/// of one method, so that its vtable holds one function made for each
/// annotated function, where a `dyn FnMut` vtable holds two more
/// (`call_once` and its shim).
trait Body<R> {
    /// Runs the body once.
    fn run(&mut self) -> R;
}

impl<R, A: FnMut() -> R> Body<R> for A {
    #[inline]
    fn run(&mut self) -> R {
        self()
    }
}

/// What the rest of a sync call asks of its last attempt.
enum Ask<'f, 'a> {
    /// Run the body again, holding the outcome for the next question.
    Run,
    /// Drop the last outcome, so that nothing of a failed attempt is held
    /// across the wait.
    Clear,
    /// The deadline passed before the next attempt started: a timeout
    /// takes the last outcome's place, where the outcome type is made of
    /// one; else the last outcome stands for the attempt.
    Late,
    /// How the last attempt failed, if it did.
    Failure,
    /// Write the last attempt's error, for the logs.
    Describe(&'f mut fmt::Formatter<'a>),
}

/// What the last attempt of a sync call answers.
enum Answer {
    /// Nothing to report: the body ran, the outcome was dropped or
    /// written, or the attempt succeeded.
    Nothing,
    /// A value that is a failure: an error status, or a value `if_result`
    /// rejects.
    Value(Classification),
    /// An error, as its classifier sees it.
    Error(Classification),
    /// The error could not be written.
    WriteFailed,
}

/// The attempts of the rest of a sync call, seen without the outcome's
/// type: one method, so that each outcome type makes one function for
/// the rest to call, where a method for each question made four, each
/// compiled again for each outcome type.
trait Attempts {
    /// Answers `ask` about the last attempt.
    fn ask(&mut self, ask: Ask<'_, '_>) -> Answer;
}

/// The outcome of a sync call's last attempt, with what runs and reads it.
struct LastAttempt<'a, R: Outcome, L> {
    /// Dropped only by [`Ask::Clear`], which the rest of the call also asks
    /// when it unwinds ([`ClearOnUnwind`]): each place that drops an
    /// outcome inlines its drop, which an optimised build compiles again
    /// at each of those places.
    outcome: ManuallyDrop<Option<R>>,
    attempt: &'a mut dyn Body<R>,
    classify: &'a dyn Fn(&R::Error) -> Classification,
    describe: &'a dyn Fn(&R::Error, &mut fmt::Formatter<'_>) -> fmt::Result,
    /// `None` when no value is a failure.
    judge_value: Option<DynJudge<'a, R::Value>>,
    /// What makes an outcome of a timeout, where the outcome type can.
    late: L,
}

impl<R: Outcome, L: Late<R>> Attempts for LastAttempt<'_, R, L> {
    fn ask(&mut self, ask: Ask<'_, '_>) -> Answer {
        match ask {
            Ask::Run => {
                let outcome = self.attempt.run();
                // Nothing to drop: the rest clears an outcome before it runs
                // the body again, and the first attempt it runs has none.
                let previous = self.outcome.replace(outcome);
                debug_assert!(previous.is_none(), "an outcome was not cleared");
                mem::forget(previous);
                Answer::Nothing
            }
            Ask::Clear => {
                *self.outcome = None;
                Answer::Nothing
            }
            Ask::Late => {
                if let Some(timeout) = self.late.timeout() {
                    *self.outcome = Some(timeout);
                }
                Answer::Nothing
            }
            // Matched without `Option`'s combinators: each closure given to
            // one would be one more function for each outcome type.
            Ask::Failure => match &*self.outcome {
                Some(outcome) => match outcome.split() {
                    Ok(value) => match self.judge_value {
                        Some(judge) => match judge(value) {
                            Some(class) => Answer::Value(class),
                            None => Answer::Nothing,
                        },
                        None => Answer::Nothing,
                    },
                    Err(error) => Answer::Error((self.classify)(error)),
                },
                None => Answer::Nothing,
            },
            Ask::Describe(f) => match &*self.outcome {
                Some(outcome) => match outcome.split() {
                    Err(error) => match (self.describe)(error, f) {
                        Ok(()) => Answer::Nothing,
                        Err(fmt::Error) => Answer::WriteFailed,
                    },
                    Ok(_) => Answer::Nothing,
                },
                None => Answer::Nothing,
            },
        }
    }
}

/// The last attempt's error, as `Display`. Asking takes the attempts
/// mutably, and `Display` lends itself shared: the cell lends them for
/// the one question.
struct Describe<'a>(Cell<Option<&'a mut dyn Attempts>>);

impl fmt::Display for Describe<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(attempts) = self.0.take() else {
            return Ok(());
        };
        let answer = attempts.ask(Ask::Describe(f));
        self.0.set(Some(attempts));
        match answer {
            Answer::WriteFailed => Err(fmt::Error),
            _ => Ok(()),
        }
    }
}

/// The rest of a sync call. Without `started` no attempt has run: the
/// call starts here, with its spans; after a first attempt that failed,
/// the call is built from that attempt's frame. Either boxes its failure
/// state from the thread's spare at its first failure, as every call does.
#[inline(never)]
fn rest_of_call<B: Backoff, W: Within>(
    policy: &Policy<B>,
    site: &'static Site,
    started: Option<&Started>,
    attempts: &mut dyn Attempts,
    sleep: &dyn Sleeper,
    ended: Option<&mut Option<Ended>>,
) {
    let unwinding = ClearOnUnwind(attempts);
    let attempts = &mut *unwinding.0;
    let mut call: Call<'_, B, SystemClock> = match started {
        Some(Started { frame, at }) => {
            Call::at_attempt_one(policy, frame.moved(), SystemClock, *at, None)
        }
        None => {
            let mut call = Call::new(policy, site, SystemClock);
            call.begin_attempt();
            call.scope(policy, || {
                attempts.ask(Ask::Run);
            });
            call
        }
    };
    let gave_up = decide_and_retry::<B, W>(policy, &mut call, attempts, sleep);
    if gave_up && let Some(ended) = ended {
        *ended = Some(call.ended());
    }
    // Returned: the caller takes the last outcome.
    mem::forget(unwinding);
}

/// The wait before the next attempt of a call with a deadline, which keeps
/// the last outcome across it: a wait that ran late, to or past the
/// deadline (a sleeper that woke late on a loaded machine), leaves the
/// next attempt unstarted, and the call gives up with what stands for it
/// ([`Ask::Late`]). Whether it gave up. Out of line, for the calls with a
/// deadline only.
#[inline(never)]
fn waited_past_the_deadline<B: Backoff>(
    call: &mut Call<'_, B, SystemClock>,
    attempts: &mut dyn Attempts,
    sleep: &dyn Sleeper,
    delay: Duration,
) -> bool {
    sleep.sleep(delay);
    if call.deadline_left().is_none_or(|left| !left.is_zero()) {
        attempts.ask(Ask::Clear);
        return false;
    }
    call.never_ran();
    attempts.ask(Ask::Late);
    call.begin_attempt();
    // Classified here as `error_class` would: the attempt never ran.
    call.timed_out.store(RAN, Ordering::Relaxed);
    let decision = call.failed(
        timeout_class(NEVER_RAN),
        &Describe(Cell::new(Some(&mut *attempts))),
        &no_span,
        &no_fields,
        false,
    );
    debug_assert!(
        !matches!(decision, Decision::Retry(_)),
        "no wait fits in no time left"
    );
    true
}

/// Drops the last outcome when the rest of a sync call unwinds (a
/// classifier, a sleeper or the body panicked), which [`LastAttempt`]
/// leaves to [`Ask::Clear`]. Forgotten when the rest returns.
struct ClearOnUnwind<'a>(&'a mut dyn Attempts);

impl Drop for ClearOnUnwind<'_> {
    fn drop(&mut self) {
        self.0.ask(Ask::Clear);
    }
}

/// A decision on each attempt's outcome and a wait before the next, until
/// one is returned: whether the call gave up. The call is borrowed, not
/// moved: moved into the loop, the whole call state would be copied.
#[inline]
fn decide_and_retry<B: Backoff, W: Within>(
    policy: &Policy<B>,
    call: &mut Call<'_, B, SystemClock>,
    attempts: &mut dyn Attempts,
    sleep: &dyn Sleeper,
) -> bool {
    loop {
        // In the attempt's frame, as `Call::error_class` classifies: the
        // classifier may ask which attempt the error is of.
        let failure = call.frame.enter(|| attempts.ask(Ask::Failure));
        let decision = match failure {
            // `WriteFailed` answers only a question to write the error.
            Answer::Nothing | Answer::WriteFailed => {
                call.succeeded_then(policy, &no_span, Call::succeeded_after_retries_inline)
            }
            Answer::Value(class) => {
                call.failed(class, &FailedValue(class), &no_span, &no_fields, false)
            }
            Answer::Error(class) => {
                // Not `error_class`: no sync attempt is timed out (only
                // async attempts have timers).
                debug_assert!(
                    call.timed_out.load(Ordering::Relaxed) == RAN,
                    "a sync attempt has no timer"
                );
                call.failed(
                    class,
                    &Describe(Cell::new(Some(&mut *attempts))),
                    &no_span,
                    &no_fields,
                    false,
                )
            }
        };
        let delay = match decision {
            Decision::Return => return false,
            Decision::GiveUp(_) => return true,
            Decision::Retry(delay) => delay,
        };
        // A constant, not the policy's deadline read from memory: the loop
        // is shared by the functions of a backoff type, and that read was
        // on each retry's path.
        if !W::DEADLINE {
            attempts.ask(Ask::Clear);
            sleep.sleep(delay);
        } else if waited_past_the_deadline(call, attempts, sleep, delay) {
            return true;
        }
        // Counted here, where a call of its own would cost each retry more
        // than the count: the attempt waits for no permit.
        call.retry_starts_inline();
        call.begin_attempt();
        call.scope(policy, || {
            attempts.ask(Ask::Run);
        });
    }
}
