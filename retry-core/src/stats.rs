//! Per-function statistics, readable in-process with [`all`] and [`get`],
//! and with the `metrics` feature exported through the `metrics` facade as
//! they happen (counters ending in `_total` and a histogram of call
//! duration; the names and labels are in the `reattempt` guide's chapter
//! on operations).
//!
//! Every retried function counts its calls as they end: successes at the
//! first attempt and after retries, give-ups by reason, the attempts made,
//! the time calls took from their start (every call's with the `timing`
//! feature; without it, that of the calls that retried and read their
//! clock as they started: see [`Stats::timed_calls`]), the alerts raised,
//! and the calls cancelled before they ended. Every count is an atomic
//! add, exact under any contention.

use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;

use crate::give_up::GiveUp;
use crate::site::sites;

// `reattempt::stats::Alert` is public API, and the expansion names `Site`
// through `__private`; both live in `site.rs`, a function's identity.
pub use crate::site::Alert;
#[doc(hidden)]
pub use crate::site::Site;

/// A snapshot of one function's statistics.
///
/// ```
/// use reattempt::retry;
///
/// #[retry(max = 3, backoff = none, name = "doc::stats")]
/// fn flaky(fail: bool) -> std::io::Result<()> {
///     if fail { Err(std::io::ErrorKind::TimedOut.into()) } else { Ok(()) }
/// }
///
/// flaky(false).unwrap();
/// flaky(true).unwrap_err();
/// let stats = reattempt::stats::get("doc::stats").unwrap();
/// assert_eq!((stats.calls, stats.first_try_successes, stats.give_ups.exhausted), (2, 1, 1));
/// assert_eq!(stats.attempts, 4);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// The function's name, as in the logs.
    pub function: &'static str,
    /// Calls that ended: returned to their caller, or cancelled.
    pub calls: u64,
    /// Calls that succeeded at the first attempt, or at a hedge of it
    /// ([`hedges_won`](Self::hedges_won) counts those).
    pub first_try_successes: u64,
    /// Calls that succeeded after one or more retries.
    pub successes_after_retries: u64,
    /// Calls that gave up, by reason.
    pub give_ups: GiveUps,
    /// Attempts made, first ones and hedges included.
    pub attempts: u64,
    /// Hedges started: attempts started beside a slow one (`hedge`).
    pub hedges: u64,
    /// Hedges that succeeded before every attempt started earlier in
    /// their call, and so gave the call its outcome.
    pub hedges_won: u64,
    /// Time spent by the [`timed_calls`](Self::timed_calls), each from its
    /// start, first attempt and waits included.
    pub time: Duration,
    /// The calls whose time is in [`time`](Self::time). With the `timing`
    /// feature (which `metrics` turns on), every call that ended. Without
    /// it, the calls that retried and read their clock as they started,
    /// which a call does when its time will be seen: it has a deadline,
    /// hooks or a dead-letter sink, or a subscriber listens to the
    /// library's events. A call that read no clock then is not timed at
    /// all, rather than from a later point.
    pub timed_calls: u64,
    /// Alerts raised (`alert_after`).
    pub alerts: u64,
    /// Calls that gave up and were answered by their `fallback`: counted
    /// in [`give_ups`](Self::give_ups) too, by the reason they gave up.
    pub fallbacks: u64,
    /// Calls dropped before they ended: an async call's future dropped
    /// during an attempt, a wait or a hook (by a timeout, a `select!`, a
    /// shutdown), the `after` hook of a success included, or a body or a
    /// hook that panicked. A call that gave up was counted as given up
    /// when it decided so: cut in the hooks that follow, it stays so.
    pub cancelled: u64,
}

impl Stats {
    /// The statistics `site` has counted.
    pub(crate) fn of(site: &Site) -> Stats {
        let count = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let give_ups = GiveUps {
            exhausted: count(&site.gave_up[GiveUp::Exhausted.index()]),
            deadline: count(&site.gave_up[GiveUp::Deadline.index()]),
            permanent: count(&site.gave_up[GiveUp::Permanent.index()]),
            validation: count(&site.gave_up[GiveUp::Validation.index()]),
            retry_after_too_long: count(&site.gave_up[GiveUp::RetryAfterTooLong.index()]),
            budget: count(&site.gave_up[GiveUp::Budget.index()]),
            nested: count(&site.gave_up[GiveUp::Nested.index()]),
            maybe_applied: count(&site.gave_up[GiveUp::MaybeApplied.index()]),
            breaker: count(&site.gave_up[GiveUp::Breaker.index()]),
            throttled: count(&site.gave_up[GiveUp::Throttled.index()]),
        };
        let first_try = count(&site.first_try);
        let after_retries = count(&site.after_retries);
        let cancelled = count(&site.cancelled);
        let calls = first_try + after_retries + give_ups.total() + cancelled;
        let hedges = count(&site.hedges);
        Stats {
            function: site.name,
            calls,
            first_try_successes: first_try,
            successes_after_retries: after_retries,
            give_ups,
            attempts: calls + count(&site.retries) + hedges,
            hedges,
            hedges_won: count(&site.hedges_won),
            time: Duration::from_nanos(count(&site.nanos)),
            timed_calls: count(&site.timed),
            alerts: count(&site.alerts),
            cancelled,
            fallbacks: count(&site.fell_back),
        }
    }
}

/// Give-ups by reason.
///
/// ```
/// use reattempt::retry;
///
/// #[retry(name = "inventory::lookup", max = 2, backoff = none)]
/// fn lookup() -> std::io::Result<()> {
///     Err(std::io::ErrorKind::NotFound.into())
/// }
///
/// lookup().unwrap_err();
/// let give_ups = reattempt::stats::get("inventory::lookup").unwrap().give_ups;
/// assert_eq!((give_ups.permanent, give_ups.total()), (1, 1));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GiveUps {
    /// Every attempt `max` allows was made.
    pub exhausted: u64,
    /// The next wait would have ended past the deadline.
    pub deadline: u64,
    /// A logical error.
    pub permanent: u64,
    /// A validation error.
    pub validation: u64,
    /// The server asked for a delay over `max_retry_after`.
    pub retry_after_too_long: u64,
    /// The retry budget was spent.
    pub budget: u64,
    /// An inner call gave up after one attempt inside an outer retry
    /// (`nested = single`).
    pub nested: u64,
    /// An attempt that may have taken effect, under `idempotent = false`.
    pub maybe_applied: u64,
    /// The retry breaker was open.
    pub breaker: u64,
    /// The adaptive throttle rejected the call or its retry.
    pub throttled: u64,
}

impl GiveUps {
    /// Give-ups for every reason.
    pub fn total(&self) -> u64 {
        self.exhausted
            + self.deadline
            + self.permanent
            + self.validation
            + self.retry_after_too_long
            + self.budget
            + self.nested
            + self.maybe_applied
            + self.breaker
            + self.throttled
    }
}

/// The statistics of every retried function that has been called, by name.
pub fn all() -> Vec<Stats> {
    let mut stats: Vec<Stats> = sites().map(Stats::of).collect();
    stats.sort_by(|a, b| a.function.cmp(b.function));
    stats
}

/// The statistics of the function named `function` (as in the logs), once
/// it has been called.
pub fn get(function: &str) -> Option<Stats> {
    let mut found = sites()
        .filter(|site| site.name() == function)
        .map(Stats::of);
    let first = found.next()?;
    // Two functions may share a name (`name = "..."`): their counts add up.
    Some(found.fold(first, |mut sum, more| {
        sum.calls += more.calls;
        sum.first_try_successes += more.first_try_successes;
        sum.successes_after_retries += more.successes_after_retries;
        sum.give_ups.exhausted += more.give_ups.exhausted;
        sum.give_ups.deadline += more.give_ups.deadline;
        sum.give_ups.permanent += more.give_ups.permanent;
        sum.give_ups.validation += more.give_ups.validation;
        sum.give_ups.retry_after_too_long += more.give_ups.retry_after_too_long;
        sum.give_ups.budget += more.give_ups.budget;
        sum.give_ups.nested += more.give_ups.nested;
        sum.give_ups.maybe_applied += more.give_ups.maybe_applied;
        sum.give_ups.breaker += more.give_ups.breaker;
        sum.give_ups.throttled += more.give_ups.throttled;
        sum.attempts += more.attempts;
        sum.time += more.time;
        sum.timed_calls += more.timed_calls;
        sum.alerts += more.alerts;
        sum.cancelled += more.cancelled;
        sum.fallbacks += more.fallbacks;
        sum
    }))
}
