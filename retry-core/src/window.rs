//! The sliding window that the retry budget and the retry breaker count
//! in: ten slots of time, named by their index from a process-wide epoch.

use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;
use std::sync::OnceLock;
use std::time::Instant;

/// Slots a window is kept as.
pub(crate) const SLOTS: usize = 10;

/// A window's length in nanoseconds: at least 10 ms (one millisecond a
/// slot), at most what a `u64` holds.
pub(crate) const fn nanos_of(window: Duration) -> u64 {
    let nanos = window.as_nanos();
    if nanos < 10_000_000 {
        10_000_000
    } else if nanos > u64::MAX as u128 {
        u64::MAX
    } else {
        nanos as u64
    }
}

/// When counting started, set by the first use.
#[derive(Debug)]
pub(crate) struct Epoch(OnceLock<Instant>);

impl Epoch {
    pub(crate) const fn new() -> Epoch {
        Epoch(OnceLock::new())
    }

    /// Nanoseconds since the epoch.
    pub(crate) fn nanos(&self) -> u64 {
        let epoch = *self.0.get_or_init(Instant::now);
        u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// The index of the current slot of `slot_nanos`; never `u64::MAX`,
    /// which marks a slot not yet used.
    pub(crate) fn slot(&self, slot_nanos: u64) -> u64 {
        (self.nanos() / slot_nanos.max(1)).min(u64::MAX - 1)
    }
}

/// Moves a slot whose index is `slot` on to `index`: true for the one
/// caller that does, which then empties the slot's counts.
pub(crate) fn claim(slot: &AtomicU64, index: u64) -> bool {
    let seen = slot.load(Ordering::Acquire);
    seen != index
        && slot
            .compare_exchange(seen, index, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
}

/// Whether a slot of index `slot` is in the window that ends at `index`.
pub(crate) fn holds(slot: &AtomicU64, index: u64) -> bool {
    let at = slot.load(Ordering::Acquire);
    at != u64::MAX && at >= index.saturating_sub(SLOTS as u64 - 1) && at <= index
}
