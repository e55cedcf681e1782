//! The sliding window that the retry budget and the retry breaker count
//! in: ten slots of time, named by their index from a process-wide epoch.

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
