//! What an instance counted for the fleet and has not yet brought to Redis.

use std::sync::atomic::{AtomicI64, Ordering};

use crate::window::{SLOTS, SlotIndex};

/// Counts made locally and not yet in Redis, by the local slot of time
/// they were made in: only those of the window reach Redis, as only those
/// count locally, so that an instance that went longer than the window
/// without a retry decision does not bring all it counted since at once.
pub(super) struct Pending<const N: usize> {
    slots: [PendingSlot<N>; SLOTS],
}

struct PendingSlot<const N: usize> {
    /// The local slot index its counts were made in.
    index: SlotIndex,
    counts: [AtomicI64; N],
}

/// What [`Pending::take`] took from each slot, with the slot's index then,
/// to give back should Redis not take it.
pub(super) type Taken<const N: usize> = [(u64, [i64; N]); SLOTS];

impl<const N: usize> Pending<N> {
    pub(super) const fn new() -> Pending<N> {
        Pending {
            slots: [const {
                PendingSlot {
                    index: SlotIndex::new(),
                    counts: [const { AtomicI64::new(0) }; N],
                }
            }; SLOTS],
        }
    }

    /// Adds `amounts` in the local slot `index`.
    pub(super) fn add(&self, index: u64, amounts: [i64; N]) {
        let slot = &self.slots[(index % SLOTS as u64) as usize];
        // What the slot held is a window old, as the local slot's counts;
        // a count later than the slot's is left out, as there.
        let entered = slot.index.enter(index, || {
            for count in &slot.counts {
                count.store(0, Ordering::Relaxed);
            }
        });
        if entered {
            for (count, amount) in slot.counts.iter().zip(amounts) {
                count.fetch_add(amount, Ordering::Relaxed);
            }
        }
    }

    /// Takes the counts of the window that ends at the local slot `index`.
    pub(super) fn take(&self, index: u64) -> Taken<N> {
        self.slots
            .each_ref()
            .map(|slot| match slot.index.in_window(index) {
                Some(at) => (
                    at,
                    slot.counts
                        .each_ref()
                        .map(|count| count.swap(0, Ordering::AcqRel)),
                ),
                None => (index, [0; N]),
            })
    }

    /// The sums of what was taken.
    pub(super) fn sums(taken: &Taken<N>) -> [i64; N] {
        let mut sums = [0; N];
        for (_, counts) in taken {
            for (sum, count) in sums.iter_mut().zip(counts) {
                *sum += count;
            }
        }
        sums
    }

    /// Gives back what Redis did not take, to the slots it came from, to
    /// expire with them: what a slot that moved on meanwhile (Redis took
    /// longer than a slot lasts) held is a window old, and left out.
    pub(super) fn give_back(&self, taken: Taken<N>) {
        for (slot, (at, counts)) in self.slots.iter().zip(taken) {
            let entered = counts != [0; N]
                && slot.index.enter(at, || {
                    for count in &slot.counts {
                        count.store(0, Ordering::Relaxed);
                    }
                });
            if entered {
                for (count, amount) in slot.counts.iter().zip(counts) {
                    count.fetch_add(amount, Ordering::Relaxed);
                }
            }
        }
    }

    /// What is pending now.
    pub(super) fn held(&self) -> [i64; N] {
        let now = self.slots.each_ref().map(|slot| {
            let counts = slot
                .counts
                .each_ref()
                .map(|count| count.load(Ordering::Relaxed));
            (0, counts)
        });
        Pending::sums(&now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_windows_counts_are_taken_and_what_is_given_back_stays_in_its_slot() {
        let pending = Pending::<2>::new();
        pending.add(0, [5, 1]);
        pending.add(3, [2, 2]);
        // At slot 12 the window is slots 3 to 12: slot 0's counts expired.
        let taken = pending.take(12);
        assert_eq!(Pending::sums(&taken), [2, 2]);
        assert_eq!(Pending::sums(&pending.take(12)), [0, 0]);
        pending.give_back(taken);
        assert_eq!(pending.held(), [7, 3], "slot 0's counts are still held");
        // Slot 10 takes slot 0's place, and its expired counts go.
        pending.add(10, [1, 0]);
        assert_eq!(pending.held(), [3, 2]);
        // At slot 13 the window is slots 4 to 13: slot 3's went back to slot
        // 3, and expire with it.
        assert_eq!(Pending::sums(&pending.take(13)), [1, 0]);
    }

    #[test]
    fn what_is_given_back_after_its_slot_moved_on_expires_with_it() {
        // Redis did not answer for as long as a slot lasts: the slot the
        // counts were taken from moved on meanwhile, so they are a window
        // old, and must not count in the newer slot.
        let pending = Pending::<2>::new();
        pending.add(3, [2, 1]);
        let taken = pending.take(12);
        assert_eq!(Pending::sums(&taken), [2, 1]);
        pending.add(13, [1, 0]);
        pending.give_back(taken);
        assert_eq!(pending.held(), [1, 0]);
        assert_eq!(Pending::sums(&pending.take(13)), [1, 0]);
    }
}
