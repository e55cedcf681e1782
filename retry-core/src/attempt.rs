//! The attempt state machine that the `#[retry]` expansion drives.
//!
//! The expansion runs the body, hands its result to [`Call::next`] and
//! either returns ([`Step::Done`]) or waits and runs the body again
//! ([`Step::Retry`]). Every decision (classification, delay, deadline,
//! giving up, logging) is made here.

use core::fmt;
use core::time::Duration;
use std::time::Instant;

use crate::backoff::Backoff;
use crate::class::{Class, Classification};
use crate::clock::Clock;
use crate::jitter::Rng;
use crate::log;
use crate::outcome::Outcome;
use crate::policy::Policy;

/// What to do after an attempt.
#[derive(Debug, PartialEq, Eq)]
pub enum Step<R> {
    /// Return this result to the caller.
    Done(R),
    /// Wait this long, then run the body again.
    Retry(Duration),
}

/// Why a call stopped retrying and returned its last error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GiveUp {
    /// Every attempt `max` allowed has been made.
    Exhausted,
    /// The next wait would end past the deadline.
    Deadline,
    /// The error is logical: it will not pass by retrying.
    Permanent,
    /// The error says the caller's input is wrong.
    Validation,
    /// The server asked for a delay longer than `max_retry_after`.
    RetryAfterTooLong,
}

impl GiveUp {
    /// The reason as it appears in logs.
    pub const fn as_str(self) -> &'static str {
        match self {
            GiveUp::Exhausted => "exhausted",
            GiveUp::Deadline => "deadline",
            GiveUp::Permanent => "permanent",
            GiveUp::Validation => "validation",
            GiveUp::RetryAfterTooLong => "retry_after_too_long",
        }
    }
}

impl fmt::Display for GiveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One call of a retried function: its attempt count, its clock and its
/// jitter state.
///
/// ```
/// use retry::{Call, Classification, Policy, Step, SystemClock};
/// use retry::backoff::Fixed;
/// use std::time::Duration;
///
/// let policy = Policy::new("doc", Fixed::new(Duration::from_millis(10))).max_attempts(2);
/// let mut call = Call::new(&policy, SystemClock);
/// let describe = |e: &&str, f: &mut std::fmt::Formatter<'_>| f.write_str(e);
///
/// let first: Result<(), &str> = Err("busy");
/// let step = call.next(first, |_| Classification::transient(), describe);
/// assert_eq!(step, Step::Retry(Duration::from_millis(10)));
///
/// let second: Result<(), &str> = Err("busy");
/// let step = call.next(second, |_| Classification::transient(), describe);
/// assert_eq!(step, Step::Done(Err("busy")));
/// assert_eq!(call.gave_up(), Some(retry::GiveUp::Exhausted));
/// ```
#[derive(Debug)]
pub struct Call<'p, B, C> {
    policy: &'p Policy<B>,
    clock: C,
    attempt: u32,
    started: Option<Instant>,
    previous_delay: Duration,
    rng: Option<Rng>,
    gave_up: Option<GiveUp>,
}

impl<'p, B: Backoff, C: Clock> Call<'p, B, C> {
    /// A call about to make its first attempt. The clock is read now only
    /// when the policy has a deadline, so the success path of a call without
    /// one costs no clock read.
    #[inline]
    pub fn new(policy: &'p Policy<B>, clock: C) -> Call<'p, B, C> {
        let started = policy.deadline.map(|_| clock.now());
        Call {
            policy,
            clock,
            attempt: 1,
            started,
            previous_delay: Duration::ZERO,
            rng: None,
            gave_up: None,
        }
    }

    /// A call whose jitter draws from `rng` instead of a generator seeded
    /// from entropy: the delays of a seeded call are reproducible.
    pub fn with_rng(mut self, rng: Rng) -> Call<'p, B, C> {
        self.rng = Some(rng);
        self
    }

    /// The number of the attempt in progress (1 for the first).
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// Why the call gave up, once it has.
    pub fn gave_up(&self) -> Option<GiveUp> {
        self.gave_up
    }

    /// Decides what follows an attempt that returned `outcome`.
    ///
    /// `classify` is called only on an error; `describe` writes the error
    /// into the logs.
    #[inline]
    pub fn next<R, F, D>(&mut self, outcome: R, classify: F, describe: D) -> Step<R>
    where
        R: Outcome,
        F: FnOnce(&R::Error) -> Classification,
        D: Fn(&R::Error, &mut fmt::Formatter<'_>) -> fmt::Result,
    {
        let delay = match outcome.error() {
            None => {
                if self.attempt > 1 {
                    self.succeeded_after_retries();
                }
                return Step::Done(outcome);
            }
            Some(error) => self.failed(classify(error), &Described(error, describe)),
        };
        match delay {
            Some(delay) => Step::Retry(delay),
            None => Step::Done(outcome),
        }
    }

    #[cold]
    #[inline(never)]
    fn succeeded_after_retries(&mut self) {
        let elapsed = self.elapsed();
        log::succeeded(self.policy, self.attempt, elapsed);
    }

    #[cold]
    #[inline(never)]
    fn failed(&mut self, class: Classification, error: &dyn fmt::Display) -> Option<Duration> {
        let elapsed = self.elapsed();
        let delay = self.decide(&class, elapsed);
        match delay {
            Ok(delay) => {
                log::retrying(self.policy, self.attempt, &class, error, delay, elapsed);
                self.attempt = self.attempt.saturating_add(1);
                self.previous_delay = delay;
                Some(delay)
            }
            Err(reason) => {
                log::gave_up(self.policy, self.attempt, &class, error, reason, elapsed);
                self.gave_up = Some(reason);
                None
            }
        }
    }

    /// The delay before the next attempt, or why there is none.
    fn decide(&mut self, class: &Classification, elapsed: Duration) -> Result<Duration, GiveUp> {
        match class.class() {
            Class::Logical => return Err(GiveUp::Permanent),
            Class::Validation => return Err(GiveUp::Validation),
            Class::Transient | Class::RateLimited => {}
        }
        if let Some(max) = self.policy.max_attempts
            && self.attempt >= max.get()
        {
            return Err(GiveUp::Exhausted);
        }
        let delay = match class.retry_after() {
            Some(asked) if self.policy.honor_retry_after => {
                if asked > self.policy.max_retry_after {
                    return Err(GiveUp::RetryAfterTooLong);
                }
                asked
            }
            _ => self.backoff_delay(),
        };
        if let Some(deadline) = self.policy.deadline
            && elapsed.saturating_add(delay) >= deadline
        {
            return Err(GiveUp::Deadline);
        }
        Ok(delay)
    }

    fn backoff_delay(&mut self) -> Duration {
        let backoff = &self.policy.backoff;
        let retry = self.attempt;
        let delay = backoff.delay(retry);
        let jitter = self.policy.jitter;
        if !jitter.is_random() {
            return delay.min(backoff.max_delay());
        }
        let base = backoff.delay(1);
        let previous = if retry == 1 {
            base
        } else {
            self.previous_delay
        };
        let rng = self.rng.get_or_insert_with(Rng::from_entropy);
        jitter.apply(delay, previous, base, backoff.max_delay(), rng)
    }

    /// Time since the call started; without a deadline the clock starts at
    /// the first failure, so the success path never reads it.
    fn elapsed(&mut self) -> Duration {
        let now = self.clock.now();
        let started = *self.started.get_or_insert(now);
        now.saturating_duration_since(started)
    }
}

/// An error and the function that writes it, as one `Display` value.
struct Described<'e, E, D>(&'e E, D);

impl<E, D> fmt::Display for Described<'_, E, D>
where
    D: Fn(&E, &mut fmt::Formatter<'_>) -> fmt::Result,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (self.1)(self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backoff::{Exponential, Fixed, NoBackoff};
    use crate::clock::SystemClock;
    use crate::jitter::Jitter;
    use std::cell::Cell;

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
        fn now(&self) -> Instant {
            self.now.get()
        }
    }

    fn describe(e: &&str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(e)
    }

    fn fail<B: Backoff, C: Clock>(
        call: &mut Call<'_, B, C>,
        class: Classification,
    ) -> Step<Result<(), &'static str>> {
        call.next(Err("boom"), |_| class, describe)
    }

    const S: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn success_on_the_first_attempt_is_done_at_once() {
        let policy = Policy::new("t", Exponential::DEFAULT);
        let mut call = Call::new(&policy, SystemClock);
        let step = call.next(Ok::<u8, ()>(7), |_| unreachable!(), |_, _| Ok(()));
        assert_eq!(step, Step::Done(Ok(7)));
        assert_eq!(call.attempt(), 1);
    }

    #[test]
    fn exponential_waits_double_until_attempts_run_out() {
        let policy = Policy::new("t", Exponential::new(S(1), 2.0, S(30))).max_attempts(4);
        let mut call = Call::new(&policy, SystemClock);
        let t = Classification::transient();
        assert_eq!(fail(&mut call, t), Step::Retry(S(1)));
        assert_eq!(fail(&mut call, t), Step::Retry(S(2)));
        assert_eq!(fail(&mut call, t), Step::Retry(S(4)));
        assert_eq!(fail(&mut call, t), Step::Done(Err("boom")));
        assert_eq!(call.gave_up(), Some(GiveUp::Exhausted));
        assert_eq!(call.attempt(), 4);
    }

    #[test]
    fn logical_and_validation_errors_end_the_call_at_once() {
        let policy = Policy::new("t", NoBackoff);
        let mut call = Call::new(&policy, SystemClock);
        assert_eq!(
            fail(&mut call, Classification::logical()),
            Step::Done(Err("boom"))
        );
        assert_eq!(call.gave_up(), Some(GiveUp::Permanent));
        let mut call = Call::new(&policy, SystemClock);
        assert_eq!(
            fail(&mut call, Classification::validation()),
            Step::Done(Err("boom"))
        );
        assert_eq!(call.gave_up(), Some(GiveUp::Validation));
    }

    #[test]
    fn server_delay_replaces_the_backoff_and_a_too_long_one_gives_up() {
        let policy = Policy::new("t", Fixed::new(S(1))).max_retry_after(S(10));
        let mut call = Call::new(&policy, SystemClock);
        let asked = |d| Classification::rate_limited().with_retry_after(d);
        assert_eq!(fail(&mut call, asked(S(3))), Step::Retry(S(3)));
        assert_eq!(
            fail(&mut call, Classification::rate_limited()),
            Step::Retry(S(1))
        );
        assert_eq!(fail(&mut call, asked(S(11))), Step::Done(Err("boom")));
        assert_eq!(call.gave_up(), Some(GiveUp::RetryAfterTooLong));

        let ignoring = Policy::new("t", Fixed::new(S(1))).honor_retry_after(false);
        let mut call = Call::new(&ignoring, SystemClock);
        assert_eq!(fail(&mut call, asked(S(3600))), Step::Retry(S(1)));
    }

    #[test]
    fn enormous_server_delays_never_panic_and_never_sleep() {
        let policy = Policy::new("t", NoBackoff);
        let mut call = Call::new(&policy, SystemClock);
        let huge = Classification::rate_limited().with_retry_after(Duration::MAX);
        assert_eq!(fail(&mut call, huge), Step::Done(Err("boom")));
        assert_eq!(call.gave_up(), Some(GiveUp::RetryAfterTooLong));
    }

    #[test]
    fn no_wait_begins_that_would_end_at_or_past_the_deadline() {
        let clock = ManualClock::new();
        let policy = Policy::new("t", Fixed::new(S(1)))
            .unbounded()
            .deadline(S(5));
        let mut call = Call::new(&policy, &clock);
        let mut attempts = 1;
        while let Step::Retry(delay) = fail(&mut call, Classification::transient()) {
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
        let policy = Policy::new("t", Fixed::new(S(1)))
            .unbounded()
            .deadline(S(10));
        let mut call = Call::new(&policy, &clock);
        clock.advance(S(9));
        assert_eq!(
            fail(&mut call, Classification::transient()),
            Step::Done(Err("boom"))
        );
        assert_eq!(call.gave_up(), Some(GiveUp::Deadline));
    }

    #[test]
    fn seeded_jitter_is_reproducible_and_within_the_cap() {
        let policy = Policy::new("t", Exponential::new(S(1), 2.0, S(5)))
            .max_attempts(10)
            .jitter(Jitter::Full);
        let run = || {
            let mut call = Call::new(&policy, SystemClock).with_rng(Rng::seeded(42));
            let mut delays = Vec::new();
            while let Step::Retry(d) = fail(&mut call, Classification::transient()) {
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
        let policy = Policy::new("t", Exponential::new(S(1), 2.0, S(1000)))
            .max_attempts(20)
            .jitter(Jitter::Decorrelated);
        let mut call = Call::new(&policy, SystemClock).with_rng(Rng::seeded(7));
        let mut previous = S(1);
        while let Step::Retry(d) = fail(&mut call, Classification::transient()) {
            assert!(S(1) <= d && d <= previous * 3, "{d:?} after {previous:?}");
            previous = d;
        }
    }

    #[test]
    fn attempt_numbers_saturate_instead_of_overflowing() {
        let policy = Policy::new("t", NoBackoff).unbounded();
        let mut call = Call::new(&policy, SystemClock);
        call.attempt = u32::MAX;
        assert_eq!(
            fail(&mut call, Classification::transient()),
            Step::Retry(Duration::ZERO)
        );
        assert_eq!(call.attempt(), u32::MAX);
    }
}
