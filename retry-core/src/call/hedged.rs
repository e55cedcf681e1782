//! A hedged round: the call's next attempt, and more beside it while it is
//! slow, until one succeeds, one fails for good, or every one has failed
//! (see [`crate::hedge`]).

use core::fmt;
use core::future::{Future, poll_fn};
use core::pin::Pin;
use core::task::Poll;
use core::time::Duration;

use tracing::{Level, Span};

use super::decide::describe_failure;
use super::round::{
    Attempts, Beside, Happened, Hedging, Round, RoundEnd, RoundEvent, RoundState, UnrunHedge, arm,
    cut_short, timed_out,
};
use super::{Call, FieldVisitor, Fields};
use crate::backoff::Backoff;
use crate::breaker::RetryBreaker;
use crate::class::{Class, Classification};
use crate::clock::Clock;
use crate::current::Frame;
use crate::hedge::{Ended, Finished, HedgeFrame, LatencySketch, RoundEnded, Slots};
use crate::limited::{Admission, Limited};
use crate::log::{self, HedgeEvent};
use crate::outcome::Outcome;
use crate::read_outcome::JudgeValue;
use crate::scoped::Scoped;
use crate::spans;

impl<B: Backoff, C: Clock> Call<'_, B, C> {
    /// Begins `round`: makes its first attempt with `attempts` and sets the
    /// timers of its next hedge and of the deadline (on the function's
    /// sleeper). The attempt runs from the first
    /// [`round_event`](Self::round_event). A
    /// retry that was pending stays so until the attempt starts (after
    /// the `before` hook, and its permit of the limit): a call dropped
    /// before then gives its token back, as an unhedged one does.
    pub fn begin_round<L, F, M, T, W, R>(
        &mut self,
        round: Pin<&mut Round<L, W>>,
        attempts: &Attempts<M, T, R>,
    ) where
        F: Future<Output = R>,
        M: Fn() -> F,
        L: Slots<F, W, Option<C::Reading>>,
        T: Fn(Duration) -> W,
        W: Future<Output = ()>,
    {
        let Attempts { make, timer, cut } = attempts;
        let cut = *cut;
        // Every attempt of the round shares the call's id, so it is drawn
        // before the first is copied.
        self.frame.call_id.get_or_draw();
        let mut round = round.project();
        let first = self.frame.number;
        // Attempts are cut (by `attempt_timeout`, and by the deadline,
        // which bounds the whole round) only where a timeout can stand for
        // their outcome.
        let left = cut.and(self.deadline_left());
        *round.state = RoundState {
            first,
            next: first.saturating_add(1),
            last_allowed: self.policy.max_attempts.map_or(u32::MAX, |max| max.get()),
            timeout: cut.and(self.policy.attempt_timeout),
            left,
            due: false,
            unrun_hedge: None,
        };
        round.deadline.set(left.map(&timer));
        // Each attempt has a span of its own, when the call has spans. The
        // round's first attempt waits for its permit of the limit, as any
        // attempt does.
        let span = self.round_span(first, false);
        let attempt = Limited::new(self.policy.limit, self.scoped_as(first, span, make()));
        let started = self.started_at();
        let timeout = round.state.timeout;
        // The slots are empty: the attempt has a place.
        let _ = round.slots.start(first, started, attempt, timeout);
        arm(round.hedge_timer, round.state, self.hedge_after(), &timer);
    }

    /// Runs `round` until a hedge starts, an attempt fails beside others,
    /// or the round ends: then gives that, with the decision on the
    /// outcome that ended it, as [`decide`](Self::decide) makes it (which
    /// takes the same readers of the outcome).
    ///
    /// The round ends with the first attempt to succeed, or to fail in a
    /// way no other attempt would change (a logical or validation
    /// failure), and every other attempt in flight is dropped before it
    /// returns. A failure that may pass, while another attempt is in
    /// flight, is logged and the round goes on; the last such failure ends
    /// it. Every attempt counts against `max`.
    pub async fn round_event<L, F, M, T, W, R, K, D, V>(
        &mut self,
        round: Pin<&mut Round<L, W>>,
        attempts: &Attempts<M, T, R>,
        classify: K,
        describe: D,
        judge_value: V,
        fields: impl Fields,
    ) -> RoundEvent<R>
    where
        R: Outcome,
        F: Future<Output = R>,
        M: Fn() -> F,
        L: Slots<F, W, Option<C::Reading>>,
        T: Fn(Duration) -> W,
        W: Future<Output = ()>,
        K: Fn(&R::Error) -> Classification,
        D: Fn(&R::Error, &mut fmt::Formatter<'_>) -> fmt::Result,
        V: JudgeValue<R::Value>,
    {
        let Attempts { make, timer, cut } = attempts;
        let cut = *cut;
        let policy = self.policy;
        // Copies: over no `fields(..)`, closures of no size, which a
        // success hands on without a store.
        let span = move || fields.span();
        let fields = move |visit: FieldVisitor<'_>| fields.visit(visit);
        let mut round = round.project();
        let state = &mut *round.state;
        let first = state.first;
        let seen = |number: u32, succeeded, beside| RoundEnded {
            attempt: number,
            hedge: number != first,
            succeeded,
            beside,
        };
        let happened = poll_fn(|cx| {
            loop {
                let ended = round.slots.as_mut().poll_ended(cx, &timer);
                // The round's first attempt, where it follows a retry, makes
                // that retry once it has started: it holds its permit (it
                // is polled at once then), or it has ended. Until then, a
                // call dropped gives the retry's token back.
                if self.retry_is_pending() && round.slots.as_mut().ran(first) != Some(false) {
                    self.retry_starts();
                }
                // The hedge the last event started has run once its slot
                // polled it (the slots before it may have ended the round
                // first): it is counted then. One that never ran, dropped
                // in the hooks before it or with its round, gives its
                // token back as it is dropped.
                if let Some(hedge) = state.unrun_hedge.take_if(|hedge| {
                    matches!(&ended, Poll::Ready(finished) if finished.number == hedge.number)
                        || round.slots.as_mut().ran(hedge.number) == Some(true)
                }) {
                    hedge.runs();
                    self.frame.site.hedge_started();
                }
                if let Poll::Ready(finished) = ended {
                    let Finished {
                        number,
                        started,
                        span: attempt_span,
                        ended,
                    } = finished;
                    self.latency(started);
                    let (outcome, ended) = match ended {
                        Ended::Returned(outcome) => {
                            let ended = self.ended_as(&outcome, &classify, &judge_value);
                            (outcome, ended)
                        }
                        Ended::TimedOut(given) => (timed_out(cut, given), cut_short()),
                    };
                    match ended {
                        RoundEnd::MayPass(class) if round.slots.in_flight() > 0 => {
                            let error = describe_failure(&outcome, &class, &describe);
                            if let Some(attempt_span) = &attempt_span {
                                spans::failed(attempt_span, &class);
                            }
                            let _in_attempt = attempt_span.as_ref().map(Span::enter);
                            let beside = Beside {
                                number,
                                hedge: number != first,
                                in_flight: round.slots.in_flight(),
                            };
                            self.failed_beside(beside, class, &error, &span);
                            // A server that asks callers to slow down gets
                            // no more hedges.
                            if class.class() == Class::RateLimited {
                                round.hedge_timer.set(None);
                                state.due = false;
                            }
                            return Poll::Ready(Happened::Beside(number, outcome));
                        }
                        ended => {
                            self.drop_in_flight(round.slots.as_mut());
                            // The call decides on this attempt's outcome,
                            // in its span.
                            if let (Some(spans), Some(attempt_span)) =
                                (self.spans.as_deref_mut(), attempt_span)
                            {
                                spans.resume(attempt_span);
                            }
                            return Poll::Ready(Happened::Ended(number, outcome, ended));
                        }
                    }
                }
                if let (Some(fired), Some(left)) =
                    (round.deadline.as_mut().as_pin_mut(), state.left)
                    && fired.poll(cx).is_ready()
                {
                    // What stands for the attempts the deadline cut is that
                    // of the last to start.
                    self.drop_in_flight(round.slots.as_mut());
                    let outcome = timed_out(cut, left);
                    return Poll::Ready(Happened::Ended(state.next - 1, outcome, cut_short()));
                }
                if let Some(fired) = round.hedge_timer.as_mut().as_pin_mut()
                    && fired.poll(cx).is_ready()
                {
                    round.hedge_timer.set(None);
                    state.due = true;
                }
                if !state.due || !round.slots.has_room() {
                    return Poll::Pending;
                }
                state.due = false;
                let number = state.next;
                let delay = self.hedge_after().unwrap_or_default();
                match self.hedge(number, delay, &make, &span) {
                    Hedging::Start(attempt) => {
                        let started = self.started_at();
                        let timeout = state.timeout;
                        // A slot is free: fewer are in flight than the
                        // round allows.
                        let _ = round
                            .slots
                            .as_mut()
                            .start(number, started, attempt, timeout);
                        state.next = state.next.saturating_add(1);
                        arm(
                            round.hedge_timer.as_mut(),
                            state,
                            self.hedge_after(),
                            &timer,
                        );
                        return Poll::Ready(Happened::Hedged(number));
                    }
                    // No permit is free: the next hedge is due later.
                    Hedging::NotNow => arm(
                        round.hedge_timer.as_mut(),
                        state,
                        self.hedge_after(),
                        &timer,
                    ),
                    Hedging::NoMore => {}
                }
            }
        })
        .await;
        let (number, outcome, ended) = match happened {
            Happened::Hedged(number) => {
                // Counted once it runs, after the hooks before it.
                round.state.unrun_hedge = Some(UnrunHedge {
                    number,
                    budget: self.policy.budget,
                });
                return RoundEvent::Hedged(seen(number, false, false));
            }
            Happened::Beside(number, outcome) => {
                return RoundEvent::Beside(outcome, seen(number, false, true));
            }
            Happened::Ended(number, outcome, ended) => (number, outcome, ended),
        };
        // The next attempt, if any, comes after every one this round
        // started.
        self.hedged_to = state.next - 1;
        let succeeded = matches!(ended, RoundEnd::Succeeded);
        let decision = match ended {
            RoundEnd::Succeeded => {
                if number != first {
                    self.hedge_won(number, &span);
                }
                // A call that never retried succeeds as at its first
                // attempt, whichever attempt of the round won: it is a
                // first-try success, and its hedge's win is counted apart.
                self.frame.number = if first == 1 { 1 } else { number };
                self.succeeded(policy, &span)
            }
            RoundEnd::MayPass(class) | RoundEnd::ForGood(class) => {
                // The failure is the attempt's own.
                self.frame.number = number;
                let error = describe_failure(&outcome, &class, &describe);
                self.failed(class, &error, &span, &fields, number != first)
            }
        };
        RoundEvent::Ended(outcome, decision, seen(number, succeeded, false))
    }

    /// When an attempt starts, on the call's clock, where its latency goes
    /// to a sketch; no clock is read otherwise.
    fn started_at(&self) -> Option<C::Reading> {
        self.sketch().map(|_| self.clock.now())
    }

    /// How long an attempt runs before a hedge starts beside it, as the
    /// call's policy (a dynamic one included) says; `None` when the hedges
    /// are off, or a percentile has too few samples and no `min`.
    fn hedge_after(&self) -> Option<Duration> {
        self.policy.hedge.and_then(|hedge| hedge.after())
    }

    /// Where the attempts' latencies go: the function's sketch, while the
    /// hedge in force is a percentile.
    fn sketch(&self) -> Option<&'static LatencySketch> {
        self.policy.hedge.and_then(|hedge| hedge.sketch())
    }

    /// Under `hedge(after = pNN)`, the latency of an attempt that ended,
    /// or the time it ran before it was dropped, goes to the function's
    /// sketch: a hedge that wins does not hide the tail of the attempt it
    /// beat.
    fn latency(&self, started: Option<C::Reading>) {
        if let (Some(sketch), Some(started)) = (self.sketch(), started) {
            sketch.record(self.clock.since(started));
        }
    }

    /// Drops every attempt still in flight, each in its own frame; the
    /// time each ran goes to the sketch, if any
    /// ([`latency`](Self::latency)). A retry whose attempt was dropped
    /// still waiting for its permit (the deadline came, or a hedge ended
    /// the round) never ran: its token goes back, uncounted.
    fn drop_in_flight<F, W, L>(&self, slots: Pin<&mut L>)
    where
        F: Future,
        L: Slots<F, W, Option<C::Reading>>,
    {
        slots.clear(&mut |started| self.latency(started));
        self.refund_pending_retry();
    }

    /// The span of attempt `number` of a round, a `hedge` or not, when the
    /// call has spans.
    fn round_span(&self, number: u32, hedge: bool) -> Option<Span> {
        let spans = self.spans.as_deref()?;
        Some(spans.round_span(number, hedge, super::after_http(&self.failures)))
    }

    /// Attempt `number`, made of `attempt`, in its own frame and `span`.
    fn scoped_as<F>(&self, number: u32, span: Option<Span>, attempt: F) -> Scoped<HedgeFrame, F> {
        Scoped::new(HedgeFrame(self.frame_of(number), span), attempt)
    }

    /// Hedge `number`, when it may start: the breaker is not open, the
    /// deadline leaves it at least `after`, a permit of the limit is free
    /// (it does not queue for one), the throttle lets it out (asked only
    /// once nothing else stops it, as each rejection counts), and the
    /// budget gives it a token (a hedge is extra load, as a retry is).
    fn hedge<F>(
        &self,
        number: u32,
        after: Duration,
        make: &impl Fn() -> F,
        span: &dyn Fn() -> Span,
    ) -> Hedging<F> {
        let policy = self.policy;
        if policy.breaker.is_some_and(RetryBreaker::is_open)
            || self.deadline_left().is_some_and(|left| left < after)
        {
            return Hedging::NoMore;
        }
        let Some(admission) = Admission::try_now(policy.limit) else {
            return Hedging::NotNow;
        };
        if policy.throttle.is_some_and(|throttle| !throttle.allows()) {
            return Hedging::NoMore;
        }
        if let Some(budget) = policy.budget
            && !budget.try_withdraw()
        {
            return Hedging::NoMore;
        }
        // Made once it starts, so that no hedge that does not start has
        // a span, nor an attempt made.
        let attempt_span = self.round_span(number, true);
        {
            let _in_hedge = attempt_span.as_ref().map(Span::enter);
            self.hedge_starts(number, span);
        }
        let scoped = self.scoped_as(number, attempt_span, make());
        Hedging::Start(Limited::admitted(admission, scoped))
    }

    /// The frame of attempt `number` of this call: its own, with the
    /// call's id (drawn).
    fn frame_of(&self, number: u32) -> Frame {
        Frame {
            number,
            ..self.frame.moved()
        }
    }

    /// How an attempt that returned `outcome` ended.
    fn ended_as<R, K, V>(&self, outcome: &R, classify: &K, judge_value: &V) -> RoundEnd
    where
        R: Outcome,
        K: Fn(&R::Error) -> Classification,
        V: JudgeValue<R::Value>,
    {
        let class = match outcome.split() {
            Ok(value) => match judge_value.judge(value) {
                Some(class) => class,
                None => return RoundEnd::Succeeded,
            },
            Err(error) => self.error_class(|| classify(error)),
        };
        match class.class() {
            Class::Transient | Class::RateLimited => RoundEnd::MayPass(class),
            Class::Logical | Class::Validation => RoundEnd::ForGood(class),
        }
    }

    /// A hedge starts: attempt `number`, beside those in flight. (Its
    /// budget token is taken; it is counted once it runs, [`UnrunHedge`].)
    fn hedge_starts(&self, number: u32, span: &dyn Fn() -> Span) {
        self.hedge_logged(number, HedgeEvent::Started, span);
    }

    /// Attempt `number`, a hedge, succeeded first: logged in its span.
    fn hedge_won(&self, number: u32, span: &dyn Fn() -> Span) {
        let attempt_span = self.spans.as_deref().map(|spans| spans.attempt().clone());
        let _in_attempt = attempt_span.as_ref().map(Span::enter);
        self.frame.site.hedge_won();
        self.hedge_logged(number, HedgeEvent::Won, span);
    }

    /// The DEBUG event of a hedge that started or won.
    fn hedge_logged(&self, number: u32, event: HedgeEvent, span: &dyn Fn() -> Span) {
        if log::wanted(Level::DEBUG) {
            let (site, call_id) = (self.frame.site, &self.frame.call_id);
            log::hedge(site, self.policy, number, call_id, event, span);
        }
    }

    /// Attempt `number` failed in a way that may pass while `in_flight`
    /// others run: logged, kept in the history and the alert streak as any
    /// failure is, without a decision.
    fn failed_beside(
        &mut self,
        beside: Beside,
        class: Classification,
        error: &dyn fmt::Display,
        span: &dyn Fn() -> Span,
    ) {
        let Beside {
            number,
            hedge,
            in_flight,
        } = beside;
        self.failure_seen(&class, span);
        if log::wanted(Level::WARN) {
            let elapsed = self.elapsed();
            log::failed_beside(self.about(number, elapsed, span), &class, error, in_flight);
        }
        self.remember(&class, None, number, hedge);
    }
}
