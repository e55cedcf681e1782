//! A retry budget: retries across all callers stay under a ratio of recent
//! first attempts, so that an outage is not multiplied by the retries.
//!
//! Without a budget, every caller of a failing dependency retries `max`
//! times: during an outage the dependency sees `max` times its usual load,
//! just when it can least take it, and the retries of each layer of a call
//! stack multiply. A budget lets retries absorb scattered failures, and stops
//! them when everything fails.
//!
//! [`RetryBudget`] documents the algorithm.

use core::sync::atomic::{AtomicI64, Ordering};
use core::time::Duration;
use std::sync::OnceLock;

use crate::twin::BudgetTwin;
use crate::window::{self, Epoch, SLOTS, SlotIndex};

/// Milli-tokens per token: deposits are fractions of a retry.
const MILLI: i64 = 1000;

/// A retry budget shared by the functions that name it. Build it as a
/// `static`:
///
/// ```
/// use reattempt::{RetryBudget, retry};
/// use std::time::Duration;
///
/// // Retries may add 20% to the first attempts of the last 10 s, plus 1 a second.
/// static BACKEND: RetryBudget = RetryBudget::new(0.2, 1, Duration::from_secs(10));
///
/// #[retry(max = 5, budget = BACKEND)]
/// fn query() -> std::io::Result<u32> {
///     Ok(1)
/// }
/// # query().unwrap();
/// ```
///
/// # The algorithm
///
/// The one of Finagle's `RetryBudget`: every first attempt deposits `ratio`
/// of a token, every retry withdraws a whole one, and a retry is allowed
/// while the balance of the last `window` (deposits minus withdrawals, plus
/// a reserve of `floor_per_sec × window` tokens) holds a token. So over any
/// window, retries ≤ `ratio × first attempts + floor_per_sec × window`; the
/// floor lets a service with little traffic still retry its rare failures.
///
/// The window is kept as ten slots of `window / 10` each, with atomic
/// counters: a first attempt costs a clock read and one atomic add, and
/// takes no lock. A retry's check of the balance and its withdrawal are one
/// step, under a lock that only retries take, so that threads failing at
/// once do not overdraw it.
#[derive(Debug)]
pub struct RetryBudget {
    deposit: i64,
    reserve: i64,
    /// What a retry costs, in milli-tokens: after a transient failure, and
    /// after a rate-limited one.
    costs: [i64; 2],
    slot_nanos: u64,
    epoch: Epoch,
    slots: [Slot; SLOTS],
    /// Held by a local withdrawal from its check of the balance to its
    /// withdrawal.
    withdrawing: std::sync::Mutex<()>,
    /// The fleet's budget, once shared: `share`, which the fleet defines,
    /// installs it, hence the crate's visibility. Without the fleet it
    /// stays empty, and the local budget decides alone.
    pub(crate) shared: OnceLock<Box<dyn BudgetTwin>>,
}

#[derive(Debug)]
struct Slot {
    /// Which slot of time (counted from the epoch) the counters are for.
    index: SlotIndex,
    /// Deposits minus withdrawals, in milli-tokens.
    balance: AtomicI64,
}

impl Slot {
    const fn new() -> Slot {
        Slot {
            index: SlotIndex::new(),
            balance: AtomicI64::new(0),
        }
    }
}

impl RetryBudget {
    /// A budget where retries may add `ratio` (0.2 = 20%) to the first
    /// attempts of the last `window`, plus `floor_per_sec` a second. A
    /// ratio outside `[0, 1000]` is clamped to it; a window under 10 ms is
    /// read as 10 ms.
    pub const fn new(ratio: f64, floor_per_sec: u32, window: Duration) -> RetryBudget {
        let ratio = if ratio >= 0.0 {
            if ratio <= 1000.0 { ratio } else { 1000.0 }
        } else {
            0.0
        };
        let window_nanos = window::nanos_of(window);
        let reserve = floor_per_sec as u128 * window_nanos as u128 / 1_000_000_000;
        let reserve = if reserve > (i64::MAX / MILLI) as u128 {
            i64::MAX / MILLI
        } else {
            reserve as i64
        };
        RetryBudget {
            deposit: (ratio * MILLI as f64) as i64,
            reserve: reserve * MILLI,
            costs: [MILLI, MILLI],
            slot_nanos: window_nanos / SLOTS as u64,
            epoch: Epoch::new(),
            slots: [const { Slot::new() }; SLOTS],
            withdrawing: std::sync::Mutex::new(()),
            shared: OnceLock::new(),
        }
    }

    /// 20% of the first attempts of the last 10 s, plus 10 a second: the
    /// defaults of Finagle's budget.
    pub const fn standard() -> RetryBudget {
        RetryBudget::new(0.2, 10, Duration::from_secs(10))
    }

    /// Counts a first attempt.
    pub fn deposit(&self) {
        let now = self.now();
        self.add(now, self.deposit);
        if let Some(fleet) = self.shared.get() {
            fleet.deposit(self.deposit, now);
        }
    }

    /// Takes back the deposit of a call that made no first attempt after
    /// all: a `classic(..)` breaker refused it, or the deadline came while
    /// it waited for its permit of a concurrency limit.
    pub(crate) fn take_back_deposit(&self) {
        let now = self.now();
        self.add(now, -self.deposit);
        if let Some(fleet) = self.shared.get() {
            fleet.deposit(-self.deposit, now);
        }
    }

    /// The same budget, where a retry after a transient failure costs
    /// `transient` tokens and one after a rate-limited failure costs
    /// `rate_limited` (both 1 by default; a cost below 0.001 is read as
    /// 0.001).
    ///
    /// Every retry costs one token by default, as in Finagle's budget. AWS's
    /// SDKs charge more for some failures (10 for a timeout, 5 for the
    /// others, of a quota of 500): a budget that should let a server that
    /// asks for time (429, 503 with `Retry-After`) be retried longer than
    /// one that breaks can make rate-limited retries cheaper.
    ///
    /// ```
    /// use reattempt::RetryBudget;
    /// use std::time::Duration;
    ///
    /// static BACKEND: RetryBudget =
    ///     RetryBudget::new(0.2, 0, Duration::from_secs(10)).with_costs(2.0, 0.5);
    /// ```
    pub const fn with_costs(mut self, transient: f64, rate_limited: f64) -> RetryBudget {
        const fn milli(tokens: f64) -> i64 {
            let milli = tokens * MILLI as f64;
            if milli >= 1.0 {
                if milli < 1e15 {
                    milli as i64
                } else {
                    1_000_000_000_000_000
                }
            } else {
                1
            }
        }
        self.costs = [milli(transient), milli(rate_limited)];
        self
    }

    /// Takes a token for a retry, or says there is none left: from the
    /// fleet when the budget is shared and Redis answers, else locally.
    pub fn try_withdraw(&self) -> bool {
        self.withdraw(self.costs[0])
    }

    /// [`try_withdraw`](Self::try_withdraw), at the cost of a retry after a
    /// failure of `class`.
    pub fn try_withdraw_for(&self, class: crate::Class) -> bool {
        self.withdraw(self.cost_of(class))
    }

    fn withdraw(&self, cost: i64) -> bool {
        if let Some(fleet) = self.shared.get() {
            match fleet.withdraw(cost, self.reserve, self.slot_nanos, self.now()) {
                // The fleet's balance gave the retry its token.
                Some(true) => {
                    // Kept locally too, so that a fallback starts from what
                    // this instance spent.
                    self.add(self.now(), -cost);
                    return true;
                }
                // The fleet's budget is spent.
                Some(false) => return false,
                // The fleet did not answer in time: the local budget decides.
                None => {}
            }
        }
        // Threads that all saw the last token would all take it: the check
        // and the withdrawal are one step. Deposits and refunds, which only
        // add, do not wait for it.
        let _one_at_a_time = self
            .withdrawing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = self.now();
        if self.balance_at(now) < cost {
            return false;
        }
        self.add(now, -cost);
        true
    }

    /// Gives back the token of a retry that never ran: its call was
    /// cancelled during the wait or while queued for a permit.
    pub fn refund(&self) {
        self.give_back(self.costs[0]);
    }

    /// [`refund`](Self::refund) of a retry taken after a failure of
    /// `class`.
    pub fn refund_for(&self, class: crate::Class) {
        self.give_back(self.cost_of(class));
    }

    fn cost_of(&self, class: crate::Class) -> i64 {
        match class {
            crate::Class::RateLimited => self.costs[1],
            _ => self.costs[0],
        }
    }

    fn give_back(&self, cost: i64) {
        let now = self.now();
        self.add(now, cost);
        if let Some(fleet) = self.shared.get() {
            fleet.deposit(cost, now);
        }
    }

    /// The retries the budget would allow now.
    pub fn available(&self) -> f64 {
        self.balance_at(self.now()) as f64 / MILLI as f64
    }

    /// The index of the current slot of time.
    fn now(&self) -> u64 {
        self.epoch.slot(self.slot_nanos)
    }

    /// Adds `milli` to the balance of slot `index`, emptied first if it
    /// held an older slot's; left out if it holds a newer one's, which only
    /// a thread held up for a window between reading the time and counting
    /// sees.
    fn add(&self, index: u64, milli: i64) {
        let slot = &self.slots[(index % SLOTS as u64) as usize];
        if slot
            .index
            .enter(index, || slot.balance.store(0, Ordering::Relaxed))
        {
            slot.balance.fetch_add(milli, Ordering::Relaxed);
        }
    }

    fn balance_at(&self, index: u64) -> i64 {
        let recent: i64 = self
            .slots
            .iter()
            .filter(|slot| slot.index.holds(index))
            .map(|slot| slot.balance.load(Ordering::Relaxed))
            .sum();
        self.reserve.saturating_add(recent)
    }
}

impl Default for RetryBudget {
    fn default() -> RetryBudget {
        RetryBudget::standard()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_stay_within_the_ratio_of_first_attempts_plus_the_reserve() {
        let budget = RetryBudget::new(0.2, 1, Duration::from_secs(60));
        let mut retries = 0;
        for _ in 0..1_000 {
            budget.deposit();
            while budget.try_withdraw() {
                retries += 1;
            }
        }
        // 20% of 1,000 plus 60 s × 1 a second.
        assert_eq!(retries, 200 + 60);
    }

    /// Threads that fail at once all ask for the last tokens together: the
    /// budget gives out what it holds, no more, however they interleave.
    #[test]
    fn threads_withdrawing_at_once_never_overdraw_the_budget() {
        const THREADS: usize = 8;
        let mut wrong = 0;
        for _ in 0..300 {
            // A reserve of 2 tokens (1 a second over 2 s), and no deposits.
            let budget = RetryBudget::new(0.0, 1, Duration::from_secs(2));
            let start = std::sync::Barrier::new(THREADS);
            let taken: usize = std::thread::scope(|scope| {
                let each: Vec<_> = (0..THREADS)
                    .map(|_| {
                        scope.spawn(|| {
                            start.wait();
                            (0..3).filter(|_| budget.try_withdraw()).count()
                        })
                    })
                    .collect();
                each.into_iter().map(|t| t.join().unwrap()).sum()
            });
            if taken != 2 {
                wrong += 1;
            }
        }
        assert_eq!(wrong, 0, "rounds in which other than 2 tokens went out");
    }

    #[test]
    fn a_budget_without_traffic_allows_its_reserve() {
        let budget = RetryBudget::new(0.2, 2, Duration::from_secs(5));
        let allowed = (0..100).filter(|_| budget.try_withdraw()).count();
        assert_eq!(allowed, 10);
        assert!(budget.available() < 1.0);
    }

    #[test]
    fn threads_never_withdraw_more_than_was_deposited_as_the_window_moves_on() {
        // A window of 10 ms moves on a slot each millisecond: the threads
        // cross thousands of slot boundaries together. Each withdrawal
        // needs a token deposited in the window, so no more can succeed
        // than were deposited.
        let budget = RetryBudget::new(1.0, 0, Duration::from_millis(10));
        let withdrawn = std::sync::atomic::AtomicU64::new(0);
        let calls = 50_000u64;
        let threads = 4u64;
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| {
                    for call in 0..calls {
                        budget.deposit();
                        // Two tries a deposit: half of them find none.
                        for _ in 0..2 {
                            if budget.try_withdraw() {
                                withdrawn.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        if call % 1000 == 0 {
                            std::thread::yield_now();
                        }
                    }
                });
            }
        });
        let withdrawn = withdrawn.into_inner();
        assert!(withdrawn <= calls * threads, "{withdrawn} withdrawn");
        assert!(withdrawn >= calls * threads / 2, "{withdrawn} withdrawn");
    }

    #[test]
    fn deposits_expire_with_the_window() {
        let budget = RetryBudget::new(1.0, 0, Duration::from_millis(10));
        for _ in 0..50 {
            budget.deposit();
        }
        assert!(budget.available() >= 49.0);
        std::thread::sleep(Duration::from_millis(25));
        assert_eq!(budget.available(), 0.0);
        assert!(!budget.try_withdraw());
    }

    #[test]
    fn odd_settings_are_clamped() {
        let budget = RetryBudget::new(f64::NAN, 0, Duration::ZERO);
        budget.deposit();
        assert!(!budget.try_withdraw());
        let budget = RetryBudget::new(-1.0, u32::MAX, Duration::MAX);
        assert!(budget.try_withdraw());
    }
}
