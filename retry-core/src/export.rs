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

#[cfg(feature = "metrics")]
fn count(name: &'static str, labels: &'static [Label]) {
    let key = Key::from_static_parts(name, labels);
    metrics::with_recorder(|recorder| recorder.register_counter(&key, &METADATA).increment(1));
}

/// A call ended `how`, `elapsed` after it started (`None` when it was
/// cancelled, or when its clock was not read at the start).
#[cfg(feature = "metrics")]
pub(crate) fn call_ended(labels: &'static Labels, how: Ended, elapsed: Option<Duration>) {
    let outcome = &labels.outcome[how.index()];
    count("reattempt_calls_total", outcome);
    // Its first attempt; retries are counted as they start.
    count("reattempt_attempts_total", &labels.function);
    match how {
        Ended::FirstTry => count("reattempt_first_try_successes_total", &labels.function),
        Ended::AfterRetries => count("reattempt_successes_after_retries_total", &labels.function),
        Ended::GaveUp(reason) => count("reattempt_give_ups_total", &labels.reason[reason.index()]),
        Ended::Cancelled => {}
    }
    if let Some(elapsed) = elapsed {
        let key = Key::from_static_parts("reattempt_call_duration_seconds", outcome);
        metrics::with_recorder(|recorder| {
            recorder
                .register_histogram(&key, &METADATA)
                .record(elapsed.as_secs_f64());
        });
    }
}

/// A retry started.
#[cfg(feature = "metrics")]
pub(crate) fn retry_started(labels: &'static Labels) {
    count("reattempt_attempts_total", &labels.function);
    count("reattempt_retries_total", &labels.function);
}

/// An alert fired.
#[cfg(feature = "metrics")]
pub(crate) fn alert(labels: &'static Labels) {
    count("reattempt_alerts_total", &labels.function);
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

/// Whether calls read the clock as they start, for the duration metric.
pub(crate) const TIMES_EVERY_CALL: bool = cfg!(feature = "metrics");
