//! The first attempt of a sync call, run before any [`Call`] is built:
//! a call that succeeds at once then costs the attempt's frame and a
//! counter, and the rest of the machinery stays out of line, in the code
//! that only a failure reaches.

use core::mem;

use super::failure_state::Inline;
use super::{Call, NO_RETRY};
use crate::backoff::Backoff;
use crate::class::Classification;
use crate::clock::Clock;
use crate::current::{CallIdCell, Frame};
use crate::export;
use crate::outcome::Outcome;
use crate::policy::Policy;
use crate::spans;
use crate::stats::Site;

/// What is left of a sync call after [`first_attempt`]: the first attempt's
/// failed outcome, or nothing when the first attempt has not run.
#[derive(Debug)]
pub struct Rest<R> {
    outcome: Option<R>,
    call_id: Option<CallIdCell>,
}

/// Counts a call whose first attempt unwinds as cancelled, as a dropped
/// [`Call`] is; forgotten when the attempt returns, so that it costs
/// nothing then.
struct Unwinding(&'static Site);

impl Drop for Unwinding {
    #[cold]
    fn drop(&mut self) {
        self.0.cancelled();
    }
}

/// Runs the first attempt of a sync call, when `policy` asks nothing of it
/// but to run where [`attempt()`](crate::attempt()) sees it: no deadline,
/// no concurrency limit, no duration metric, and no spans (no subscriber
/// was ever set). A success is counted and returned; otherwise the
/// [`Rest`] goes to [`Call::resume_inline`], which decides what follows
/// the failure, or runs the first attempt itself when this did not.
///
/// `judge_value` is `decide`'s: whether a successful value is a failure.
#[inline]
pub fn first_attempt<B, R, A, V>(
    policy: &'static Policy<B>,
    site: &'static Site,
    attempt: &mut A,
    judge_value: V,
) -> Result<R, Rest<R>>
where
    R: Outcome,
    A: FnMut() -> R,
    V: FnOnce(&R::Value) -> Option<Classification>,
{
    let plain = policy.deadline.is_none() && policy.limit.is_none() && !export::TIMES_EVERY_CALL;
    if !plain || spans::may_start() {
        return Err(Rest {
            outcome: None,
            call_id: None,
        });
    }
    site.register();
    if let Some(budget) = policy.budget {
        budget.deposit();
    }
    let call_id = CallIdCell::default();
    let unwinding = Unwinding(site);
    let outcome = Frame {
        site,
        number: 1,
        max: policy.max_attempts,
        call_id: &call_id,
        limit: None,
    }
    .enter(attempt);
    mem::forget(unwinding);
    let succeeded = match outcome.split() {
        Ok(value) => judge_value(value).is_none(),
        Err(_) => false,
    };
    if !succeeded {
        return Err(Rest {
            outcome: Some(outcome),
            call_id: Some(call_id),
        });
    }
    site.first_try_success(None);
    if policy.alert_after.is_some() {
        site.success_streak();
    }
    if let Some(breaker) = policy.breaker {
        breaker.record(false);
    }
    Ok(outcome)
}

/// Runs what is left of a sync call, out of line: the code of the retry
/// loop stays out of the function that the success path runs through.
#[inline(never)]
pub fn rest<T>(call: impl FnOnce() -> T) -> T {
    call()
}

impl<'p, B: Backoff, C: Clock> Call<'p, B, C, Inline> {
    /// The call that goes on from `rest`: the one whose first attempt
    /// [`first_attempt`] ran, or, when that ran none, a new one.
    #[inline]
    pub fn resume_inline<R>(
        policy: &'p Policy<B>,
        site: &'static Site,
        clock: C,
        rest: &mut Rest<R>,
    ) -> Call<'p, B, C, Inline> {
        let Some(call_id) = rest.call_id.take() else {
            return Call::new_inline(policy, site, clock);
        };
        // Registered, and its budget deposit made, by the first attempt;
        // it had no spans, and no clock to start without a deadline.
        Call {
            policy,
            site,
            clock,
            attempt: 1,
            call_id,
            started: None,
            timed_out: Default::default(),
            ended: false,
            retry_pending: NO_RETRY.into(),
            spans: mem::ManuallyDrop::new(None),
            failures: Inline::default(),
        }
    }

    /// The outcome of the call's first attempt, to decide on: the one
    /// [`first_attempt`] ran, or, when that ran none, one this runs as the
    /// loop would.
    #[inline]
    pub fn first_outcome<R, A: FnMut() -> R>(
        &mut self,
        rest: Rest<R>,
        policy: &Policy<B>,
        attempt: &mut A,
    ) -> R {
        match rest.outcome {
            Some(outcome) => outcome,
            None => {
                self.begin_attempt();
                self.scope(policy, attempt)
            }
        }
    }
}
