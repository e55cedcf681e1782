//! The sliding window that the retry budget and the retry breaker count
//! in: ten slots of time, named by their index from a process-wide epoch.

use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;
use std::sync::{Mutex, OnceLock, PoisonError};
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

    /// An epoch that began at `at`, for tests that need time to have
    /// passed since.
    #[cfg(test)]
    pub(crate) fn began(at: Instant) -> Epoch {
        let epoch = Epoch::new();
        let _ = epoch.0.set(at);
        epoch
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

/// Which slot of time a slot's counts are for.
///
/// A slot moves on to a newer index under a lock, and its new index is
/// published only once its old counts are emptied: a thread that sees the
/// new index counts in the new slot, never in counts about to be emptied,
/// and a thread that sees an older one waits for the move. A thread that
/// read the time, then was held up for a window, comes back with an older
/// index than the slot's: its count is late, and left out, instead of
/// emptying the newer slot's.
#[derive(Debug)]
pub(crate) struct SlotIndex {
    index: AtomicU64,
    moving: Mutex<()>,
}

/// The index of a slot not yet used, or forgotten.
const UNUSED: u64 = u64::MAX;

impl SlotIndex {
    pub(crate) const fn new() -> SlotIndex {
        SlotIndex {
            index: AtomicU64::new(UNUSED),
            moving: Mutex::new(()),
        }
    }

    /// Makes the slot hold the counts of `index`, emptied by `empty` first
    /// if they were an older slot's: true when the caller may count in it,
    /// false when it holds a newer slot's counts.
    #[inline]
    pub(crate) fn enter(&self, index: u64, empty: impl FnOnce()) -> bool {
        self.index.load(Ordering::Acquire) == index || self.move_on(index, empty)
    }

    #[cold]
    fn move_on(&self, index: u64, empty: impl FnOnce()) -> bool {
        // Nothing in the lock can panic; a poisoned lock guards nothing.
        let _moving = self.moving.lock().unwrap_or_else(PoisonError::into_inner);
        let seen = self.index.load(Ordering::Acquire);
        if seen == index {
            return true;
        }
        if seen != UNUSED && seen > index {
            return false;
        }
        empty();
        self.index.store(index, Ordering::Release);
        true
    }

    /// Whether the slot's counts are in the window that ends at `index`.
    pub(crate) fn holds(&self, index: u64) -> bool {
        self.in_window(index).is_some()
    }

    /// The slot's index, when its counts are in the window that ends at
    /// `index`.
    pub(crate) fn in_window(&self, index: u64) -> Option<u64> {
        let at = self.index.load(Ordering::Acquire);
        (at != UNUSED && at >= index.saturating_sub(SLOTS as u64 - 1) && at <= index).then_some(at)
    }

    /// Marks the slot unused: its counts no longer count, and are emptied
    /// when it is entered again.
    pub(crate) fn forget(&self) {
        let _moving = self.moving.lock().unwrap_or_else(PoisonError::into_inner);
        self.index.store(UNUSED, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicI64;
    use std::sync::mpsc;
    use std::thread;

    #[test]
    fn a_count_made_while_its_slot_moves_on_is_kept() {
        // One thread moves the slot on and is held up (preempted, say)
        // while it empties the old counts; another counts in the new slot
        // meanwhile. Its count must not be emptied with the old ones.
        let slot = SlotIndex::new();
        let count = AtomicI64::new(5);
        slot.enter(0, || {});
        let (inside, moving) = mpsc::channel();
        let (counted, heard) = mpsc::channel();
        let (slot, count) = (&slot, &count);
        thread::scope(|scope| {
            scope.spawn(move || {
                slot.enter(10, || {
                    inside.send(()).unwrap();
                    // Waits for the other thread's count, which is either
                    // made now (and must survive) or, if that thread waits
                    // for this move, never: then this goes on alone.
                    let _ = heard.recv_timeout(Duration::from_millis(300));
                    count.store(0, Ordering::Relaxed);
                });
            });
            moving.recv().unwrap();
            scope.spawn(move || {
                slot.enter(10, || count.store(0, Ordering::Relaxed));
                count.fetch_add(1, Ordering::Relaxed);
                let _ = counted.send(());
            });
        });
        assert!(slot.holds(10));
        assert_eq!(count.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_late_count_does_not_empty_a_newer_slot() {
        // A thread that read the time, then was held up for a window, comes
        // back with an index older than the slot's.
        let slot = SlotIndex::new();
        let count = AtomicI64::new(0);
        assert!(slot.enter(15, || count.store(0, Ordering::Relaxed)));
        count.fetch_add(7, Ordering::Relaxed);
        assert!(!slot.enter(5, || count.store(0, Ordering::Relaxed)));
        assert_eq!(count.load(Ordering::Relaxed), 7);
        assert!(slot.holds(15));
        assert!(slot.holds(24));
        assert!(!slot.holds(25));
        assert!(!slot.holds(5));
    }

    #[test]
    fn a_forgotten_slot_holds_nothing_until_entered_again() {
        let slot = SlotIndex::new();
        assert!(!slot.holds(0));
        let count = AtomicI64::new(3);
        assert!(slot.enter(4, || count.store(0, Ordering::Relaxed)));
        assert_eq!(count.load(Ordering::Relaxed), 0);
        slot.forget();
        assert!(!slot.holds(4));
        assert!(slot.enter(4, || count.store(0, Ordering::Relaxed)));
        assert!(slot.holds(4));
    }
}
