//! A call's failures: the state that only they need, made at the first
//! (so that a call that succeeds at once makes none of it), and the
//! failure path, out of line: logs, alerts, the breaker, the choice
//! between a retry and a give-up, and the dead-letter record.

use core::cell::Cell;
use core::fmt;
#[cfg(feature = "tokio")]
use core::pin::Pin;
use core::sync::atomic::Ordering;
use core::time::Duration;
use std::time::SystemTime;

use tracing::{Level, Span};

use super::phase::{AFTER_RATE_LIMITED, AFTER_TRANSIENT, never_ran};
use super::{Call, Decision, End, FieldVisitor};
use crate::backoff::Backoff;
use crate::class::{Class, Classification};
use crate::clock::{Clock, saturating_nanos};
use crate::dead_letter::{self, AttemptRecord, DelayFrom, Record};
use crate::give_up::GiveUp;
use crate::jitter::Rng;
use crate::log;
use crate::policy::Idempotent;
use crate::testing;

impl<B: Backoff, C: Clock> Call<'_, B, C> {
    /// What a call that succeeded after retries records: its statistics and
    /// its log. Out of line, for the functions that decide inline; its time
    /// through a `Duration`, which every clock gives.
    #[cold]
    #[inline(never)]
    pub(super) fn succeeded_after_retries(&mut self, span: &dyn Fn() -> Span) {
        self.record_success_after_retries(span, |call| call.elapsed().map(saturating_nanos));
    }

    /// [`succeeded_after_retries`](Self::succeeded_after_retries), inline:
    /// for the rest of a sync call, made once for each backoff type, where
    /// a call of its own was on each retry's path. Its time in nanoseconds
    /// from the clock, which the system clock counts, without a
    /// `Duration` between.
    #[inline]
    pub(super) fn succeeded_after_retries_inline(&mut self, span: &dyn Fn() -> Span) {
        self.record_success_after_retries(span, |call| call.elapsed_nanos());
    }

    #[inline]
    fn record_success_after_retries(
        &mut self,
        span: &dyn Fn() -> Span,
        elapsed_nanos: impl FnOnce(&Self) -> Option<u64>,
    ) {
        let failures = self.failures();
        failures.last_class = None;
        failures.last_delay = None;
        let elapsed = elapsed_nanos(self);
        if self.end == End::OpenUntilReturned {
            self.hold(Held::AfterRetries(elapsed));
        } else {
            self.frame.site.success_after_retries(elapsed);
        }
        if log::wanted(Level::INFO) {
            log::succeeded(self.about(self.frame.number, elapsed.map(Duration::from_nanos), span));
        }
    }

    /// The decision after a failed attempt of class `class`, which `error`
    /// describes: a retry, or the end of the call. `hedge`: the attempt
    /// was a hedge of a hedged round, as its dead-letter record says.
    #[cold]
    #[inline(never)]
    pub(super) fn failed(
        &mut self,
        class: Classification,
        error: &dyn fmt::Display,
        span: &dyn Fn() -> Span,
        fields: &dyn Fn(FieldVisitor<'_>),
        hedge: bool,
    ) -> Decision {
        self.failed_inline(class, error, span, fields, hedge)
    }

    /// [`failed`](Self::failed), inline: for the decision on an error,
    /// made once for each error type, where a call of its own was on each
    /// async retry's path. `hedge`: the attempt was a hedge.
    #[inline(always)]
    pub(super) fn failed_inline(
        &mut self,
        class: Classification,
        error: &dyn fmt::Display,
        span: &dyn Fn() -> Span,
        fields: &dyn Fn(FieldVisitor<'_>),
        hedge: bool,
    ) -> Decision {
        // The attempt's failure is recorded on its span, and its events go
        // in it.
        let attempt_span = self.spans.as_deref().map(|spans| {
            spans.failed(&class);
            spans.attempt().clone()
        });
        let _in_attempt = attempt_span.as_ref().map(Span::enter);
        self.failure_seen(&class, span);
        let elapsed = self.elapsed();
        match self.next_delay(&class, elapsed) {
            Ok((delay, from)) => {
                if self.policy.max_attempts.is_none() && self.policy.deadline.is_none() {
                    log::retrying_for_ever(self.frame.site, &self.frame.call_id);
                }
                if log::wanted(Level::WARN) {
                    log::retrying(
                        self.about(self.frame.number, elapsed, span),
                        &class,
                        error,
                        delay,
                    );
                }
                self.remember(&class, Some((delay, from)), self.frame.number, hedge);
                let after = if class.class() == Class::RateLimited {
                    AFTER_RATE_LIMITED
                } else {
                    AFTER_TRANSIENT
                };
                self.retry_pending.store(after, Ordering::Relaxed);
                self.frame.number = self.attempts_made().saturating_add(1);
                let wait = testing::wait(delay);
                let failures = self.failures();
                failures.last_delay = Some(delay);
                // Only test mode skips a wait (and waits nothing instead).
                if wait != delay {
                    failures.skipped = failures.skipped.saturating_add(delay.saturating_sub(wait));
                }
                if let Some(spans) = &mut *self.spans {
                    spans.end();
                }
                Decision::Retry(wait)
            }
            Err(reason) => {
                self.remember(&class, None, self.frame.number, hedge);
                self.give_up(reason, class, error, elapsed, span, fields);
                Decision::GiveUp(reason)
            }
        }
    }

    /// What every failed attempt tells the policy's shared state and the
    /// call: the breaker and the alert streak hear of it, and the call
    /// keeps its class.
    #[inline(always)]
    pub(super) fn failure_seen(&mut self, class: &Classification, span: &dyn Fn() -> Span) {
        // An attempt that never ran says nothing of the backend: the
        // breaker does not count it, and it neither ends nor extends a
        // streak of the same failure. Asked only where there is a breaker
        // or an alert, so that a retry with neither reads no code.
        if let Some(breaker) = self.policy.breaker
            && !never_ran(class)
        {
            breaker.record(true);
        }
        if let Some(throttle) = self.policy.throttle
            && !never_ran(class)
        {
            throttle.failed(class);
        }
        self.failures().last_class = Some(*class);
        if let Some(after) = self.policy.alert_after
            && !never_ran(class)
            && let Some(alert) = self.frame.site.failure_streak(class, after.get())
        {
            if log::wanted(Level::ERROR) {
                log::alert(&alert, &self.frame.call_id, span);
            }
            if let Some(hook) = self.policy.on_alert {
                hook(&alert);
            }
        }
    }

    /// The call ends without success: logged, counted, recorded (its last
    /// attempt, if it made one, is already in the history).
    pub(super) fn give_up(
        &mut self,
        reason: GiveUp,
        class: Classification,
        error: &dyn fmt::Display,
        elapsed: Option<Duration>,
        span: &dyn Fn() -> Span,
        fields: &dyn Fn(FieldVisitor<'_>),
    ) {
        if log::wanted(log::gave_up_level(reason, self.frame.number)) {
            log::gave_up(
                self.about(self.frame.number, elapsed, span),
                &class,
                error,
                reason,
            );
        }
        self.end = End::Returned;
        self.frame
            .site
            .gave_up(reason, elapsed, self.attempts_made() > 1);
        let failures = self.failures();
        failures.last_delay = None;
        failures.gave_up = Some(reason);
        if let Some(sink) = self.policy.dead_letter {
            let record = self.record(reason, &class, error, elapsed, fields);
            dead_letter::deliver(sink, &record);
        }
        if let Some(spans) = &mut *self.spans {
            spans.gave_up(&class, reason);
            spans.end();
            spans.ended(self.frame.number);
        }
    }

    /// Adds attempt `attempt`, a hedge or not, to the history, when a sink
    /// will want it.
    #[inline]
    pub(super) fn remember(
        &mut self,
        class: &Classification,
        delay: Option<(Duration, DelayFrom)>,
        attempt: u32,
        hedge: bool,
    ) {
        if self.policy.dead_letter.is_some() {
            self.add_to_history(class, delay, attempt, hedge);
        }
    }

    #[cold]
    #[inline(never)]
    fn add_to_history(
        &mut self,
        class: &Classification,
        delay: Option<(Duration, DelayFrom)>,
        attempt: u32,
        hedge: bool,
    ) {
        self.failures().history.push(AttemptRecord {
            attempt,
            class: class.class(),
            code: class.code().map(str::to_owned),
            delay: delay.map(|(d, _)| d),
            delay_from: delay.map(|(_, from)| from),
            hedge,
        });
    }

    fn record(
        &mut self,
        reason: GiveUp,
        class: &Classification,
        error: &dyn fmt::Display,
        elapsed: Option<Duration>,
        fields: &dyn Fn(FieldVisitor<'_>),
    ) -> Record {
        // A call with a sink reads its clock as it starts
        // (`timed_from_start`), so its time is there.
        let elapsed = elapsed.unwrap_or_default();
        let mut named = Vec::new();
        fields(&mut |name, value| named.push((name, format!("{value:?}"))));
        let now = SystemTime::now();
        let call_id = self.frame.call_id.id();
        Record {
            function: self.frame.site.name(),
            call_id,
            idempotency_key: (self.policy.idempotent == Idempotent::Key)
                .then(|| call_id.idempotency_key()),
            host: dead_letter::host_name(),
            pid: std::process::id(),
            reason,
            class: class.class(),
            code: class.code().map(str::to_owned),
            error: error.to_string(),
            attempts: self.attempts_made(),
            first_attempt_at: now.checked_sub(elapsed).unwrap_or(now),
            last_attempt_at: now,
            elapsed,
            fields: named,
            history: std::mem::take(&mut self.failures().history),
        }
    }
}

/// Where a call keeps the state that only failures need: boxed at the
/// first failure, so that a call that succeeds at once makes none of it
/// and an async function's future does not hold it. The box is taken from
/// the thread's spare when there is one, and given back to it when the
/// call ends, so that retries in steady state allocate nothing.
#[derive(Debug, Default)]
pub(crate) struct Failures(Option<Box<FailureState>>);

impl Failures {
    /// The state, made at the first use.
    #[inline]
    pub(crate) fn state(&mut self) -> &mut FailureState {
        self.0.get_or_insert_with(take_spare)
    }

    /// The state, if made.
    #[inline]
    pub(crate) fn peek(&self) -> Option<&FailureState> {
        self.0.as_deref()
    }
}

impl Drop for Failures {
    /// Out of line only when there is a state: a success drops nothing.
    #[inline]
    fn drop(&mut self) {
        if let Some(state) = self.0.take() {
            give_back(state);
        }
    }
}

thread_local! {
    /// One failure state a call that ended left for the next. One is
    /// enough: a thread runs one attempt at a time, and the calls that are
    /// waiting keep theirs.
    static SPARE: Cell<Option<Box<FailureState>>> = const { Cell::new(None) };
}

#[cold]
#[inline(never)]
fn take_spare() -> Box<FailureState> {
    // While the thread's locals are torn down there is no spare.
    SPARE
        .try_with(Cell::take)
        .ok()
        .flatten()
        .unwrap_or_default()
}

#[cold]
#[inline(never)]
fn give_back(mut state: Box<FailureState>) {
    // Cleared as new, but for the history's buffer, field by field: every
    // field named, so that a new one is cleared here too, and none but the
    // timer dropped. The timer goes: it belongs to the runtime that made
    // it, which the next call on this thread may not run on.
    let FailureState {
        skipped,
        rng,
        last_class,
        last_delay,
        gave_up,
        history,
        held,
        #[cfg(feature = "tokio")]
        timer,
    } = &mut *state;
    *skipped = Duration::ZERO;
    *rng = None;
    *last_class = None;
    *last_delay = None;
    *gave_up = None;
    history.clear();
    *held = None;
    // Only a timer that was set can be waited on.
    #[cfg(feature = "tokio")]
    if timer.sleep.is_some() {
        *timer = Timer::default();
    }
    // A spare already there is freed: one is kept, the newer.
    let _ = SPARE.try_with(|spare| spare.set(Some(state)));
}

/// The part of a call's state that only failures need.
#[derive(Debug, Default)]
pub struct FailureState {
    /// Waits skipped by test mode, counted as time that passed.
    pub(super) skipped: Duration,
    pub(super) rng: Option<Rng>,
    pub(super) last_class: Option<Classification>,
    /// The delay of the last decision when it was a retry (so `attempt` has
    /// moved on); `None` after a success or a give-up.
    pub(super) last_delay: Option<Duration>,
    pub(super) gave_up: Option<GiveUp>,
    /// Kept only when there is a dead-letter sink to give it to.
    pub(super) history: Vec<AttemptRecord>,
    /// A success decided and not yet returned, under
    /// [`Call::count_success_on_return`](super::Call::count_success_on_return).
    pub(super) held: Option<Held>,
    /// The timer of the default async sleep.
    #[cfg(feature = "tokio")]
    pub(super) timer: Timer,
}

/// A success decided and not yet returned to the caller, as the call's
/// statistics will count it ([`Call::returns`](super::Call::returns)).
#[derive(Clone, Copy, Debug)]
pub(super) enum Held {
    /// At the first attempt, with the call's time when the `timing`
    /// feature reads it.
    FirstTry(Option<Duration>),
    /// After retries, with the call's time in nanoseconds when it read its
    /// clock as it started.
    AfterRetries(Option<u64>),
}

/// The timer of the default async sleep, and whether an attempt waits on it.
#[cfg(feature = "tokio")]
#[derive(Debug, Default)]
pub(super) struct Timer {
    /// Made at the first wait and reset for the next ones.
    pub(super) sleep: Option<Pin<Box<crate::default_timer::DefaultTimer>>>,
    /// Whether the next attempt made by [`Call::next`](super::Call::next)
    /// waits on `sleep` first.
    pub(super) waiting: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a call left in its failure state is gone when the next call
    /// takes it from the spare: all of it but the history's buffer.
    #[test]
    fn a_spare_given_back_is_taken_as_new_with_its_history_buffer() {
        let mut used = Box::new(FailureState {
            skipped: Duration::from_secs(3),
            rng: Some(Rng::seeded(7)),
            last_class: Some(Classification::transient()),
            last_delay: Some(Duration::from_millis(5)),
            gave_up: Some(GiveUp::Exhausted),
            history: Vec::with_capacity(4),
            held: Some(Held::AfterRetries(Some(5))),
            #[cfg(feature = "tokio")]
            timer: Timer {
                sleep: None,
                waiting: true,
            },
        });
        used.history.push(AttemptRecord {
            attempt: 1,
            class: Class::Transient,
            code: Some("reset".into()),
            delay: None,
            delay_from: None,
            hedge: false,
        });
        #[cfg(feature = "tokio")]
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        #[cfg(feature = "tokio")]
        runtime.block_on(async {
            used.timer.sleep = Some(Box::pin(crate::default_timer::DefaultTimer::after(
                Duration::from_secs(1),
            )));
        });
        let address = core::ptr::from_ref::<FailureState>(&used);
        give_back(used);
        let taken = take_spare();
        assert_eq!(
            core::ptr::from_ref::<FailureState>(&taken),
            address,
            "the same box"
        );
        // Every field, as its `Debug` shows it, is as new.
        assert_eq!(
            format!("{taken:?}"),
            format!("{:?}", FailureState::default())
        );
        assert_eq!(taken.history.capacity(), 4, "the buffer is kept");
    }
}
