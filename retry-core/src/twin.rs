//! What a budget, a breaker and the alert streaks share with the rest of
//! the fleet, as the core sees it: a twin that counts what the local one
//! counts, and answers when asked, or says it could not.
//!
//! The core holds its twins through these traits, and `fleet/` (feature
//! `redis-fleet`) is what implements them, in Redis, and installs them:
//! the budget, the breaker and a function's site neither know where the
//! fleet's state is kept nor need a feature to ask it. Without the
//! feature nothing is ever installed, and every question is the local
//! one's to answer, after a look at an empty `OnceLock`.
//!
//! A twin's answer is `None` when the fleet did not answer (Redis slow or
//! down): the local state decides then, as it does before anything is
//! shared.

use core::fmt;
use core::time::Duration;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::OnceLock;

use crate::class::Classification;

/// The fleet's side of a [`RetryBudget`](crate::RetryBudget).
///
/// Slots are the local budget's slots of time, as it counts them: the twin
/// keeps what is counted in a slot only for as long as the local window
/// does.
///
/// Unwind-safe, so that a budget is as unwind-safe shared as not: a `dyn`
/// object is only when its trait says so.
pub(crate) trait BudgetTwin:
    fmt::Debug + Send + Sync + RefUnwindSafe + UnwindSafe + 'static
{
    /// `milli` milli-tokens deposited in the local slot `slot`: a first
    /// attempt's deposit, a refund, or (negative) a deposit taken back.
    fn deposit(&self, milli: i64, slot: u64);

    /// Asks the fleet for a retry's token of `cost` milli-tokens, with a
    /// window of slots of `slot_nanos` and the fleet's `reserve`, in the
    /// local slot `slot`: whether it gave it, or `None` when it did not
    /// answer.
    fn withdraw(&self, cost: i64, reserve: i64, slot_nanos: u64, slot: u64) -> Option<bool>;
}

/// The fleet's side of a [`RetryBreaker`](crate::RetryBreaker).
///
/// Unwind-safe for the reason a [`BudgetTwin`] is.
pub(crate) trait BreakerTwin:
    fmt::Debug + Send + Sync + RefUnwindSafe + UnwindSafe + 'static
{
    /// An attempt ended, failed or not, in the local slot `slot`, of a
    /// breaker with slots of `slot_nanos` and a `cool_down`.
    fn record(&self, failed: bool, slot_nanos: u64, cool_down: Duration, slot: u64);

    /// Whether the fleet lets a retry go, in the local slot `slot`, by the
    /// breaker's settings; `None` when it did not answer.
    fn allow_retry(
        &self,
        threshold: f64,
        min_attempts: u64,
        slot_nanos: u64,
        cool_down: Duration,
        probes: u32,
        slot: u64,
    ) -> Option<bool>;
}

/// The fleet's side of every function's alert streak (`alert_after`).
pub(crate) trait StreakTwin: fmt::Debug + Send + Sync + 'static {
    /// A failure like `class` of the function named `function`: the
    /// fleet's streak of it, and whether this instance raises the alert;
    /// `None` when the fleet did not answer.
    fn failure(&self, function: &str, class: &Classification, after: u32) -> Option<(u32, bool)>;

    /// A success of the function named `function`: the fleet's streak ends.
    fn success(&self, function: &str);
}

/// The fleet's alert streaks, once shared: one for the process, since it
/// holds every function's. The fleet installs it; every site asks it.
pub(crate) static STREAK_TWIN: OnceLock<Box<dyn StreakTwin>> = OnceLock::new();
