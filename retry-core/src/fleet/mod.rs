//! A retry budget, a breaker, alert streaks and a policy, shared by every
//! instance of a service, kept in Redis (feature `redis-fleet`).
//! [`FleetAlerts`] and [`share_alerts`] count `alert_after` streaks for the
//! whole fleet, so that one outage raises one alert; [`FleetBreaker`]
//! shares a breaker; [`FleetPolicy`] makes a `PolicyCell` follow one key,
//! so that one `SET` changes every instance's policy. The rest of this
//! page is about the budget.
//!
//! Each instance keeps its [`RetryBudget`](crate::RetryBudget) and
//! [shares](crate::RetryBudget::share) it under a scope its instances have
//! in common (a service and the upstream it calls). From then on:
//!
//! - first attempts are counted locally, as before, and their deposits
//!   reach Redis with the instance's next retry decision: a first attempt
//!   never waits on Redis. Only the window's deposits do: those of an
//!   instance that went longer than the window without a retry expire, as
//!   they do locally, instead of all reaching the fleet with the first
//!   failure;
//! - a retry takes its token from the fleet's balance, atomically (one Lua
//!   script deposits what is pending and withdraws if the balance allows),
//!   so that the fleet's retries stay under `ratio` of the fleet's first
//!   attempts plus one reserve, however many instances there are;
//! - Redis is asked with a timeout of a few milliseconds (5 ms unless set);
//!   when it is slow, down or hangs, the instance decides on its local
//!   budget, logs that once, leaves Redis alone for a second, and rejoins
//!   when it answers again. A call waits on Redis for the timeout at most,
//!   a new connection's set-up included; calls queued behind one that
//!   Redis did not answer go on alone when it times out, instead of each
//!   waiting out a timeout in turn.
//!
//! The fleet's window is kept as ten slots of `window / 10` each, named by
//! wall-clock time so that every instance agrees on them, under keys
//! `reattempt:budget:{scope}:{slot}` that expire after two windows. A slot
//! whose value is not a number is corrupt: it is logged and reset.
//!
//! A retry that waits on Redis is a sync call to it from the retry
//! decision, on the caller's thread (an async function's executor thread
//! included), bounded by the timeout.

mod alerts;
mod breaker;
mod budget;
mod link;
mod pending;
mod policy;

use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

pub use alerts::{FleetAlerts, share_alerts};
pub use breaker::FleetBreaker;
pub use budget::FleetBudget;
pub use policy::FleetPolicy;

/// Installs `twin`, made a trait object by `boxed`, in `cell`, where the
/// core asks for it (a budget's or breaker's `shared`, or the alert
/// streaks'), unless a twin is there already: then gives `twin` back,
/// boxed, as each `share` promises. `OnceLock::set` would give back the
/// trait object instead, whose type the caller could no longer name.
fn install<T, D: ?Sized>(
    cell: &OnceLock<Box<D>>,
    twin: T,
    boxed: impl FnOnce(T) -> Box<D>,
) -> Result<(), Box<T>> {
    let mut given = Some(twin);
    // The closure runs only on an empty cell, and takes the twin then: a
    // twin still given after it was not installed.
    cell.get_or_init(|| {
        let twin = given
            .take()
            .expect("`get_or_init` runs its closure once at most");
        boxed(twin)
    });
    match given {
        None => Ok(()),
        Some(twin) => Err(Box::new(twin)),
    }
}

/// Wall-clock milliseconds, as every instance counts them.
pub(super) fn now_ms() -> u64 {
    let since = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    millis(since)
}

/// `duration` in whole milliseconds, at most `u64::MAX`.
pub(super) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The slot of wall-clock time of `slot_nanos`, as every instance counts it.
pub(super) fn slot_of(slot_nanos: u64) -> u64 {
    let since = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_nanos() / u128::from(slot_nanos.max(1))).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Twin = dyn std::fmt::Debug + Send + Sync;

    #[test]
    fn a_second_twin_is_given_back_and_the_first_one_stays() {
        let cell: OnceLock<Box<Twin>> = OnceLock::new();
        let first = install(&cell, 1_u32, |one| -> Box<Twin> { Box::new(one) });
        assert_eq!(first, Ok(()));
        let second = install(&cell, 2_u32, |two| -> Box<Twin> { Box::new(two) });
        assert_eq!(second, Err(Box::new(2)));
        assert_eq!(
            cell.get().map(|twin| format!("{twin:?}")).as_deref(),
            Some("1")
        );
    }
}
