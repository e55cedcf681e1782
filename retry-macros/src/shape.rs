//! The shape of an expansion: which loop a function gets, decided once
//! from its arguments and whether it is async. Everything after
//! [`Shape::of`] matches on the shape instead of asking the arguments again.
//!
//! Every shape runs the body's tokens exactly once, in a closure (sync) or
//! an `async` block (async) that each attempt calls or makes anew. Paths
//! below are shortened; locals have mixed-site hygiene. The input is
//!
//! ```text
//! #[retry(max = 3, backoff = fixed(200ms))]
//! fn fetch(url: &str) -> Result<String, Error> { body }   // or `async fn`
//! ```
//!
//! **`SyncEarly`**: a sync function whose loop runs nothing of the user's
//! but the body, with a constant policy. The first attempt runs before any
//! call state is built; the rest of the call runs in the core, out of line.
//! A policy of literals without shared state is a `static __RETRY_POLICY`
//! built by the `Policy`'s `const fn`s. A `throttle` is asked before the
//! first attempt (`throttles`, `throttled_early`); a `fallback` answers
//! after the call, from what a call that gave up left in its slot
//! (`__retry_ended`, passed as the last argument instead of `None`).
//!
//! ```text
//! static __RETRY_SITE: Site = Site::new(concat!(module_path!(), "::fetch"));
//! let __retry_body = || -> Ret { body };
//! let __retry_out = run_sync(
//!     &__RETRY_POLICY, &__RETRY_SITE, __retry_body,
//!     judge, classify, describe, THREAD_WAITS,   // or Waits::new(sleep, late)
//! );
//! __retry_out
//! ```
//!
//! **`SyncLoop`**: any other sync function. Its call state is built
//! first (its failure state, as every call's, boxed at the first failure
//! from the thread's spare); the body runs in the call's scope (where
//! `reattempt::attempt()` sees it) and the loop sleeps on the thread or in
//! the user's `sleep`, and calls the hooks.
//!
//! ```text
//! let mut __retry_call = Call::new(&__RETRY_POLICY, &__RETRY_SITE, SystemClock);
//! loop {
//!     __retry_call.begin_attempt();
//!     let __retry_delay = {
//!         let __retry_out = __retry_call.scope(&__RETRY_POLICY, || -> Ret { body });
//!         match __retry_call.decide(&__RETRY_POLICY, &__retry_out, ..) {
//!             Decision::Retry(delay) => delay,
//!             _ => return __retry_out,
//!         }
//!     };
//!     thread_sleep(__retry_delay);
//! }
//! ```
//!
//! **`Async`**: an async function. Its call state, the failure state
//! boxed so that the future stays small, is built first, with the methods
//! its loop calls; each wrapper of an attempt (the frame's `scoped`, a
//! timer, a permit) holds it by value, so that an attempt that is cut, or
//! dropped with a cancelled call, is dropped before its permit passes on.
//! Where it waits is decided here too ([`Wait`]): in the loop, or in the
//! next attempt, which saves the loop an await (each await is a state of
//! the function's future, which rustc lays out and checks in every
//! function).
//!
//! ```text
//! let mut __retry_call = Call::new(&__RETRY_POLICY, &__RETRY_SITE, async_clock());
//! loop {
//!     let __retry_delay = {
//!         let __retry_out = __retry_call.next(attempt::<Ret, _>(async { body })).await;
//!         match __retry_call.decide(..) {
//!             Decision::Retry(delay) => delay,
//!             _ => return __retry_out,
//!         }
//!     };
//!     __retry_call.wait_next(__retry_delay);
//! }
//! ```
//!
//! Waiting in the loop (`Wait::InLoop`), each attempt opens its span with
//! `__retry_call.begin_attempt()` and runs as `__retry_call.scoped(..)`,
//! and the loop ends with `wait(&mut __retry_call, __retry_delay).await`
//! or the user's `__retry_sleep(__retry_delay).await`.
//!
//! **`AsyncHedged`**: an async function with `hedge`, which its policy
//! holds (`.hedge(Hedge::new(&__RETRY_LATENCIES, 50ms))`, over a latency
//! sketch of the function's own). Its call state is built first, as
//! `Async`'s. Each round of attempts is a `Round`,
//! pinned in the loop: `begin_round` makes its first attempt with the
//! closure `__retry_make`, and each await of `round_event` runs the
//! attempts in flight (in a list of slots as long as `in_flight`, each in
//! a span of its own) until a hedge starts, an attempt fails beside
//! others, or the round ends with a decision, so that the hooks see each.
//!
//! ```text
//! let mut __retry_call = Call::new(&__RETRY_POLICY, &__RETRY_SITE, async_clock());
//! let __retry_make = || attempt::<Ret, _>(async { body });
//! let __retry_attempts = Attempts::new(&__retry_make, timer, cut);
//! loop {
//!     let mut __retry_round = pin!(Round::new(Slot::new(Slot::new(End))));
//!     __retry_call.begin_round(__retry_round.as_mut(), &__retry_attempts);
//!     let __retry_delay = loop {
//!         match __retry_call.round_event(__retry_round.as_mut(), &__retry_attempts, ..).await {
//!             RoundEvent::Hedged(_) | RoundEvent::Beside(..) => {}
//!             RoundEvent::Ended(__retry_out, __retry_decision, _) => break match __retry_decision {
//!                 Decision::Retry(delay) => delay,
//!                 _ => return __retry_out,
//!             },
//!         }
//!     };
//!     wait(&mut __retry_call, __retry_delay).await;
//! }
//! ```

use syn::Expr;

use crate::args::{After, Args, Curve, Hooks, On};

/// Which loop a function gets; see the module's documentation.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Shape {
    /// A sync first attempt before any call state, the rest in the core.
    SyncEarly,
    /// A sync loop around a call state built first.
    SyncLoop,
    /// An async loop around a call state built first, waiting where
    /// [`Wait`] says.
    Async(Wait),
    /// A call state built first, whose rounds of attempts hedge.
    AsyncHedged,
}

/// Where an async loop waits out the delay of a retry.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Wait {
    /// In the next attempt, made by `Call::next`, before it runs: on the
    /// default timer, with nothing between the attempts that must follow
    /// the wait (a `before` hook) or must not count it (a permit, a timer).
    InNextAttempt,
    /// In the loop, after the decision and its hooks.
    InLoop,
}

impl Shape {
    /// The shape of a function with these arguments.
    pub fn of(args: &Args, is_async: bool) -> Shape {
        let runs_only_the_body = runs_only_the_body(args);
        if !is_async {
            return if runs_only_the_body && args.policy.is_none() && constant_parts(args) {
                Shape::SyncEarly
            } else {
                Shape::SyncLoop
            };
        }
        if args.hedge.is_some() {
            return Shape::AsyncHedged;
        }
        let untimed = args.deadline.is_none() && args.attempt_timeout.is_none();
        let in_next_attempt = args.sleep.is_none()
            && args.hooks.before.is_none()
            && args.limit.is_none()
            && untimed
            && args.policy.is_none();
        Shape::Async(if in_next_attempt {
            Wait::InNextAttempt
        } else {
            Wait::InLoop
        })
    }

    /// Whether the function is async.
    pub fn is_async(self) -> bool {
        !matches!(self, Shape::SyncEarly | Shape::SyncLoop)
    }
}

/// Whether nothing of the user's but the body runs in the loop, and nothing
/// acts before the first attempt. The body of `SyncEarly` is one closure
/// that the loop calls again, alive for the whole call: anything else the
/// loop would run (a hook, a classifier closure, `if_result`, `fields(..)`)
/// could borrow an argument the body holds; a `fallback` runs after the
/// call, where the closure is gone, and a throttle is asked before it. A
/// limit or a classic breaker acts before the first attempt, and on the
/// call's state.
fn runs_only_the_body(args: &Args) -> bool {
    let Hooks {
        before,
        after,
        on_retry,
        on_give_up,
    } = &args.hooks;
    [before, after, on_retry, on_give_up, &args.if_result]
        .iter()
        .all(|expr| expr.is_none())
        && args.fields.is_none()
        && !matches!(args.on, Some(On::Closure(_)))
        && args.limit.is_none()
        && args.breaker.as_ref().is_none_or(|breaker| !breaker.classic)
}

/// Whether the policy's own parts can be built in a constant: a built-in
/// curve of literals, literal durations, shared state named by its
/// `static`, and an alert hook that is a path or a closure. With no
/// dynamic policy beside it, the function's policy is then a constant.
pub fn constant_parts(args: &Args) -> bool {
    let literal_curve = Curve::of(args.backoff.as_ref()).is_ok_and(|curve| curve.is_literal());
    let (hedge_after, hedge_min) = match args.hedge.as_ref().map(|hedge| &hedge.after) {
        Some(After::Fixed(after)) => (Some(after), None),
        Some(After::Percentile { min, .. }) => (None, min.as_ref()),
        None => (None, None),
    };
    let durations = [
        args.deadline.as_ref(),
        args.attempt_timeout.as_ref().map(|(_, d)| d),
        args.max_retry_after.as_ref(),
        hedge_after,
        hedge_min,
    ];
    let shared = [
        args.budget.as_ref(),
        args.breaker.as_ref().map(|breaker| &breaker.path),
        args.throttle.as_ref(),
        args.limit.as_ref(),
        args.dead_letter.as_ref(),
    ];
    literal_curve
        && durations
            .iter()
            .flatten()
            .all(|d| d.literal_value().is_some())
        && shared.iter().flatten().all(|e| matches!(e, Expr::Path(_)))
        && args
            .on_alert
            .as_ref()
            .is_none_or(|hook| matches!(hook, Expr::Path(_) | Expr::Closure(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(args: &str, is_async: bool) -> Shape {
        Shape::of(&syn::parse_str::<Args>(args).unwrap(), is_async)
    }

    #[test]
    fn a_sync_function_runs_its_first_attempt_early_only_with_nothing_but_its_body_and_a_constant_policy()
     {
        for args in [
            "",
            "max = 3, backoff = exp, jitter",
            "deadline = 5s",
            "budget = B",
            "throttle = T",
            "fallback = cached",
            "fallback = |e| cached(e, x)",
        ] {
            assert_eq!(shape(args, false), Shape::SyncEarly, "{args}");
        }
        for args in [
            "on_retry = log_it",
            "if_result = |v: &u64| *v == 0",
            "fields(x)",
            "limit = L",
            "breaker = classic(B)",
            "policy = dynamic()",
            "deadline = (secs(2))",
            "backoff = |n| ms(n)",
            "budget = &B",
        ] {
            assert_eq!(shape(args, false), Shape::SyncLoop, "{args}");
        }
    }

    #[test]
    fn an_async_function_waits_in_its_next_attempt_unless_something_must_follow_or_not_count_the_wait()
     {
        for args in ["max = 3, jitter", "after = f, on_retry = g", "fields(x)"] {
            assert_eq!(
                shape(args, true),
                Shape::Async(Wait::InNextAttempt),
                "{args}"
            );
        }
        for args in [
            "sleep = my_sleep",
            "deadline = 5s",
            "attempt_timeout = 1s",
            "policy = p()",
            "before = f",
            "limit = L",
        ] {
            assert_eq!(shape(args, true), Shape::Async(Wait::InLoop), "{args}");
        }
        assert_eq!(shape("hedge = 50ms", true), Shape::AsyncHedged);
    }
}
