//! Statistics exported through the `metrics` facade as they happen
//! (feature `metrics`); without the feature, nothing.
//!
//! | metric | kind | labels |
//! |---|---|---|
//! | `reattempt_calls_total` | counter | `function`, `outcome` = `first_try`, `after_retries`, `gave_up` or `cancelled` |
//! | `reattempt_first_try_successes_total` | counter | `function` |
//! | `reattempt_successes_after_retries_total` | counter | `function` |
//! | `reattempt_give_ups_total` | counter | `function`, `reason` |
//! | `reattempt_attempts_total` | counter | `function` |
//! | `reattempt_retries_total` | counter | `function` |
//! | `reattempt_alerts_total` | counter | `function` |
//! | `reattempt_hedges_total` | counter | `function` |
//! | `reattempt_hedges_won_total` | counter | `function` |
//! | `reattempt_call_duration_seconds` | histogram, seconds | `function`, `outcome` (not for `cancelled`) |
//!
//! The duration runs from the start of the call, its first attempt and the
//! waits included: with the feature on, every call reads the clock as it
//! starts.

use core::time::Duration;

#[cfg(feature = "metrics")]
use metrics::{Key, Label, Level, Metadata};

use crate::give_up::GiveUp;

/// How a call ended, as the `outcome` label says it.
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
pub(crate) enum Ended {
    FirstTry,
    AfterRetries,
    GaveUp(GiveUp),
    Cancelled,
}

/// Every label set a function's series use, built when its site is: a
/// series' key then borrows them, so that exporting allocates nothing.
#[cfg(feature = "metrics")]
#[derive(Debug)]
pub(crate) struct Labels {
    function: [Label; 1],
    /// By [`Ended::index`].
    outcome: [[Label; 2]; 4],
    /// The series' keys, made (and their hashes computed) at the first
    /// event: they borrow the labels above, so they allocate nothing.
    keys: std::sync::OnceLock<Keys>,
    /// By [`GiveUp::index`].
    reason: [[Label; 2]; GiveUp::ALL.len()],
}

/// Without the feature, no labels.
#[cfg(not(feature = "metrics"))]
#[derive(Debug)]
pub(crate) struct Labels;

#[cfg(feature = "metrics")]
const OUTCOMES: [&str; 4] = ["first_try", "after_retries", "gave_up", "cancelled"];

impl Labels {
    /// The labels of the function named `function`.
    #[cfg(feature = "metrics")]
    pub(crate) const fn new(function: &'static str) -> Labels {
        const fn pair(
            function: &'static str,
            key: &'static str,
            value: &'static str,
        ) -> [Label; 2] {
            [
                Label::from_static_parts("function", function),
                Label::from_static_parts(key, value),
            ]
        }
        const fn reason(function: &'static str, i: usize) -> [Label; 2] {
            pair(function, "reason", GiveUp::ALL[i].as_str())
        }
        Labels {
            keys: std::sync::OnceLock::new(),
            function: [Label::from_static_parts("function", function)],
            outcome: [
                pair(function, "outcome", OUTCOMES[0]),
                pair(function, "outcome", OUTCOMES[1]),
                pair(function, "outcome", OUTCOMES[2]),
                pair(function, "outcome", OUTCOMES[3]),
            ],
            // One per reason: a reason added to `GiveUp::ALL` fails to
            // compile here until it has its labels.
            reason: [
                reason(function, 0),
                reason(function, 1),
                reason(function, 2),
                reason(function, 3),
                reason(function, 4),
                reason(function, 5),
                reason(function, 6),
                reason(function, 7),
                reason(function, 8),
                reason(function, 9),
            ],
        }
    }

    /// Without the feature, no labels.
    #[cfg(not(feature = "metrics"))]
    pub(crate) const fn new(_function: &'static str) -> Labels {
        Labels
    }
}

#[cfg(feature = "metrics")]
impl Ended {
    const fn index(self) -> usize {
        match self {
            Ended::FirstTry => 0,
            Ended::AfterRetries => 1,
            Ended::GaveUp(_) => 2,
            Ended::Cancelled => 3,
        }
    }
}

#[cfg(feature = "metrics")]
static METADATA: Metadata<'static> = Metadata::new("reattempt", Level::INFO, Some("reattempt"));

/// The key of every series of one function.
#[cfg(feature = "metrics")]
#[derive(Debug)]
struct Keys {
    calls: [Key; 4],
    duration: [Key; 4],
    first_try: Key,
    after_retries: Key,
    give_ups: [Key; GiveUp::ALL.len()],
    attempts: Key,
    retries: Key,
    alerts: Key,
    hedges: Key,
    hedges_won: Key,
}

#[cfg(feature = "metrics")]
impl Labels {
    fn keys(&'static self) -> &'static Keys {
        self.keys.get_or_init(|| Keys {
            calls: core::array::from_fn(|i| {
                Key::from_static_parts("reattempt_calls_total", &self.outcome[i])
            }),
            duration: core::array::from_fn(|i| {
                Key::from_static_parts("reattempt_call_duration_seconds", &self.outcome[i])
            }),
            first_try: Key::from_static_parts(
                "reattempt_first_try_successes_total",
                &self.function,
            ),
            after_retries: Key::from_static_parts(
                "reattempt_successes_after_retries_total",
                &self.function,
            ),
            give_ups: core::array::from_fn(|i| {
                Key::from_static_parts("reattempt_give_ups_total", &self.reason[i])
            }),
            attempts: Key::from_static_parts("reattempt_attempts_total", &self.function),
            retries: Key::from_static_parts("reattempt_retries_total", &self.function),
            alerts: Key::from_static_parts("reattempt_alerts_total", &self.function),
            hedges: Key::from_static_parts("reattempt_hedges_total", &self.function),
            hedges_won: Key::from_static_parts("reattempt_hedges_won_total", &self.function),
        })
    }
}

#[cfg(feature = "metrics")]
fn count(key: &Key) {
    metrics::with_recorder(|recorder| recorder.register_counter(key, &METADATA).increment(1));
}

/// A call ended `how`, `elapsed` after it started (`None` when it was
/// cancelled, or when its clock was not read at the start).
#[cfg(feature = "metrics")]
pub(crate) fn call_ended(labels: &'static Labels, how: Ended, elapsed: Option<Duration>) {
    let keys = labels.keys();
    count(&keys.calls[how.index()]);
    // Its first attempt; retries are counted as they start.
    count(&keys.attempts);
    match how {
        Ended::FirstTry => count(&keys.first_try),
        Ended::AfterRetries => count(&keys.after_retries),
        Ended::GaveUp(reason) => count(&keys.give_ups[reason.index()]),
        Ended::Cancelled => {}
    }
    if let Some(elapsed) = elapsed {
        let key = &keys.duration[how.index()];
        metrics::with_recorder(|recorder| {
            recorder
                .register_histogram(key, &METADATA)
                .record(elapsed.as_secs_f64());
        });
    }
}

/// A retry started.
#[cfg(feature = "metrics")]
pub(crate) fn retry_started(labels: &'static Labels) {
    let keys = labels.keys();
    count(&keys.attempts);
    count(&keys.retries);
}

/// A hedge started: one attempt more.
#[cfg(feature = "metrics")]
pub(crate) fn hedge_started(labels: &'static Labels) {
    let keys = labels.keys();
    count(&keys.attempts);
    count(&keys.hedges);
}

/// A hedge gave its call the outcome.
#[cfg(feature = "metrics")]
pub(crate) fn hedge_won(labels: &'static Labels) {
    count(&labels.keys().hedges_won);
}

/// An alert fired.
#[cfg(feature = "metrics")]
pub(crate) fn alert(labels: &'static Labels) {
    count(&labels.keys().alerts);
}

#[cfg(not(feature = "metrics"))]
#[inline(always)]
pub(crate) fn call_ended(_labels: &'static Labels, _how: Ended, _elapsed: Option<Duration>) {}

#[cfg(not(feature = "metrics"))]
#[inline(always)]
pub(crate) fn retry_started(_labels: &'static Labels) {}

#[cfg(not(feature = "metrics"))]
#[inline(always)]
pub(crate) fn alert(_labels: &'static Labels) {}

#[cfg(not(feature = "metrics"))]
#[inline(always)]
pub(crate) fn hedge_started(_labels: &'static Labels) {}

#[cfg(not(feature = "metrics"))]
#[inline(always)]
pub(crate) fn hedge_won(_labels: &'static Labels) {}

/// Whether every call reads its clock as it starts and counts its time
/// (the `timing` feature, which `metrics` turns on for its histogram).
pub(crate) const TIMES_EVERY_CALL: bool = cfg!(feature = "timing");
