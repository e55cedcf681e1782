//! A dynamic policy that can be replaced while calls run: a configuration
//! watcher or a feature-flag callback sets it, and the next call of every
//! function named by it (`policy = CELL`) uses the new one.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{PoisonError, RwLock};

use super::{DynamicPolicy, InvalidPolicy};

/// Generations of every cell's policies, drawn from one counter so that no
/// two `set`s of any cells in the process share one: a thread's cache,
/// keyed by generation alone, cannot mistake one cell's policy for
/// another's, even for a cell made where a dropped one was.
static GENERATIONS: AtomicU64 = AtomicU64::new(1);

/// How many cells a thread keeps a copy of; a thread that reads more
/// cells than this in turn reads them under their lock.
const CACHED_CELLS: usize = 8;

thread_local! {
    /// The policy of each cell this thread read last, with its generation.
    static CACHE: [Cell<Option<(u64, DynamicPolicy)>>; CACHED_CELLS] =
        const { [const { Cell::new(None) }; CACHED_CELLS] };
}

/// A [`DynamicPolicy`] that can be replaced from any thread while calls
/// run, named by functions with `policy = CELL`.
///
/// Each call reads the cell once, as it starts, and keeps that whole policy
/// to its end: a call never mixes an old policy with a new one. A read
/// takes no lock and allocates nothing while the policy is unchanged: each
/// thread keeps a copy of the policy it read last, checked against the
/// cell's generation, an atomic that only [`set`](PolicyCell::set) writes.
/// After a `set`, each thread's next read takes the cell's read lock once.
///
/// ```
/// use reattempt::dynamic::{BackoffSpec, DynamicPolicy, PolicyCell};
/// use reattempt::retry;
///
/// static POLICY: PolicyCell = PolicyCell::new(DynamicPolicy::new().max_attempts(4));
///
/// #[retry(max = 2, backoff = none, policy = POLICY)]
/// fn call(calls: &mut u32) -> std::io::Result<()> {
///     *calls += 1;
///     Err(std::io::ErrorKind::TimedOut.into())
/// }
///
/// let mut calls = 0;
/// call(&mut calls).unwrap_err();
/// assert_eq!(calls, 4);
///
/// // From a configuration watcher, on any thread: the next call uses it.
/// POLICY.set(DynamicPolicy::new().max_attempts(3).backoff(BackoffSpec::None));
/// let mut calls = 0;
/// call(&mut calls).unwrap_err();
/// assert_eq!(calls, 3);
///
/// // A policy that fails its check is refused, and the cell keeps its own.
/// assert!(POLICY.try_set(DynamicPolicy::new().max_attempts(0)).is_err());
/// assert_eq!(POLICY.get().max_attempts, Some(3));
/// ```
#[derive(Debug)]
pub struct PolicyCell {
    /// The policy until the first `set`, read without the lock.
    initial: DynamicPolicy,
    /// 0 until the first `set`; then the generation of the policy in
    /// `current`, written under its write lock.
    generation: AtomicU64,
    current: RwLock<DynamicPolicy>,
}

impl PolicyCell {
    /// A cell holding `policy`, fit for a `static`.
    pub const fn new(policy: DynamicPolicy) -> PolicyCell {
        PolicyCell {
            initial: policy,
            generation: AtomicU64::new(0),
            current: RwLock::new(policy),
        }
    }

    /// The policy the next call will use.
    pub fn get(&self) -> DynamicPolicy {
        let generation = self.generation.load(Ordering::Acquire);
        if generation == 0 {
            return self.initial;
        }
        let slot = self.slot();
        CACHE
            .try_with(|cache| match cache[slot].get() {
                Some((cached, policy)) if cached == generation => policy,
                _ => {
                    let (generation, policy) = self.locked();
                    cache[slot].set(Some((generation, policy)));
                    policy
                }
            })
            // A thread being torn down has no cache left.
            .unwrap_or_else(|_| self.locked().1)
    }

    /// Replaces the policy: every call that starts after this returns uses
    /// the new one. A policy that fails [`DynamicPolicy::check`] is kept
    /// all the same, and each call that uses it falls back to its
    /// function's arguments with a WARN; [`try_set`](PolicyCell::try_set)
    /// refuses it instead.
    pub fn set(&self, policy: DynamicPolicy) {
        let mut current = self.current.write().unwrap_or_else(PoisonError::into_inner);
        *current = policy;
        let generation = GENERATIONS.fetch_add(1, Ordering::Relaxed);
        // Under the write lock, so that a reader that sees this generation
        // and then takes the read lock reads this policy, or a later one
        // with its own generation.
        self.generation.store(generation, Ordering::Release);
    }

    /// Replaces the policy if it passes [`DynamicPolicy::check`]; otherwise
    /// the cell keeps its policy and the problem is returned.
    pub fn try_set(&self, policy: DynamicPolicy) -> Result<(), InvalidPolicy> {
        policy.check()?;
        self.set(policy);
        Ok(())
    }

    /// The generation and policy in the cell, read together under its lock.
    fn locked(&self) -> (u64, DynamicPolicy) {
        let current = self.current.read().unwrap_or_else(PoisonError::into_inner);
        (self.generation.load(Ordering::Acquire), *current)
    }

    /// The slot of this thread's cache that holds this cell's policy.
    fn slot(&self) -> usize {
        let address = std::ptr::from_ref(self).addr();
        (address / align_of::<PolicyCell>()) % CACHED_CELLS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_sees_each_set_at_its_next_read() {
        let cell = PolicyCell::new(DynamicPolicy::new().max_attempts(2));
        assert_eq!(cell.get().max_attempts, Some(2));
        for attempts in 3..20 {
            cell.set(DynamicPolicy::new().max_attempts(attempts));
            assert_eq!(cell.get().max_attempts, Some(attempts));
            assert_eq!(cell.get().max_attempts, Some(attempts), "from the cache");
        }
    }

    /// While the policy is unchanged, a thread that read it reads it again
    /// without the lock: here a writer holds the lock, and the read ends.
    #[test]
    fn an_unchanged_policy_is_read_without_the_lock() {
        static CELL: PolicyCell = PolicyCell::new(DynamicPolicy::new());
        CELL.set(DynamicPolicy::new().max_attempts(7));
        let (ask, asked) = std::sync::mpsc::channel::<()>();
        let (answer, answers) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            while asked.recv().is_ok() {
                answer.send(CELL.get().max_attempts).unwrap();
            }
        });
        let wait = std::time::Duration::from_secs(30);
        ask.send(()).unwrap();
        assert_eq!(
            answers.recv_timeout(wait).unwrap(),
            Some(7),
            "read under the lock"
        );
        let held = CELL.current.write().unwrap();
        ask.send(()).unwrap();
        assert_eq!(
            answers.recv_timeout(wait).unwrap(),
            Some(7),
            "read while a writer holds the lock"
        );
        drop(held);
        drop(ask);
        reader.join().unwrap();
    }

    #[test]
    fn cells_sharing_a_cache_slot_keep_their_own_policies() {
        let cells: Vec<PolicyCell> = (0..3 * CACHED_CELLS as u32)
            .map(|n| PolicyCell::new(DynamicPolicy::new().max_attempts(n + 1)))
            .collect();
        for (n, cell) in cells.iter().enumerate() {
            cell.set(DynamicPolicy::new().max_attempts(100 + n as u32));
        }
        for _ in 0..2 {
            for (n, cell) in cells.iter().enumerate() {
                assert_eq!(cell.get().max_attempts, Some(100 + n as u32));
            }
        }
    }

    #[test]
    fn a_cell_made_where_a_dropped_one_was_is_not_read_from_its_cache() {
        for n in 0..50 {
            let cell = Box::new(PolicyCell::new(DynamicPolicy::new()));
            cell.set(DynamicPolicy::new().max_attempts(n + 1));
            assert_eq!(cell.get().max_attempts, Some(n + 1));
        }
    }
}
