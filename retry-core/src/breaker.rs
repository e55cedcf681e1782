//! A retry breaker: while most attempts of the functions that share it
//! fail, their retries stop, and their first attempts still go out.
//!
//! Retries multiply the load of a backend that is already failing; a budget
//! caps them at a ratio, the breaker stops them: when the failure ratio of
//! the attempts of the last `window` reaches `threshold` (over at least
//! `min_attempts` of them), it opens, and every retry it would allow gives
//! up with reason `breaker`. After `cool_down` it lets `probes` retries
//! through; when one succeeds (or a first attempt does) it closes, and when
//! a probe fails it opens again.
//! First attempts are not stopped: they are what tells the breaker that
//! the backend is back (Marc Brooker, "Fixing retries with token buckets
//! and circuit breakers", 2022). A function that names the breaker as
//! `breaker = classic(STATIC)` opts in to a classic circuit breaker: while
//! it is open, its calls fail fast with [`BreakerOpen`] before their first
//! attempt, and after the cool-down its first attempts take the probes too.
//! Counted per process, or for the fleet once [shared](RetryBreaker::share)
//! through Redis (feature `redis-fleet`).

use core::fmt;
use core::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};
use core::time::Duration;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use crate::twin::BreakerTwin;
use crate::window::{self, Epoch, SLOTS, SlotIndex};

const CLOSED: u8 = 0;
const OPEN: u8 = 1;
const PROBING: u8 = 2;

/// A retry breaker shared by the functions that name it (`breaker =
/// STATIC`).
///
/// ```
/// use reattempt::{RetryBreaker, retry};
/// use std::time::Duration;
///
/// // Retries stop while half the attempts of the last 10 s fail (of 20 at
/// // least); after 5 s, 3 probes decide whether they resume.
/// static PAYMENTS: RetryBreaker =
///     RetryBreaker::new(0.5, 20, Duration::from_secs(10), Duration::from_secs(5), 3);
///
/// #[retry(max = 4, breaker = PAYMENTS)]
/// fn charge() -> std::io::Result<()> {
///     Ok(())
/// }
/// # charge().unwrap();
/// assert!(!PAYMENTS.is_open());
/// ```
#[derive(Debug)]
pub struct RetryBreaker {
    threshold: f64,
    min_attempts: u64,
    slot_nanos: u64,
    cool_down: Duration,
    probes: u32,
    epoch: Epoch,
    slots: [Slot; SLOTS],
    state: AtomicU8,
    /// When it last opened, in nanoseconds from `epoch`.
    opened_at: AtomicU64,
    probes_left: AtomicU32,
    /// Held while it opens or begins a round of probes: each sets when it
    /// opened, the probes left and the state, and a round begun between an
    /// opening's steps undid its cool-down.
    turning: Mutex<()>,
    /// The fleet's breaker, once shared: `share`, which the fleet defines,
    /// installs it, hence the crate's visibility. Without the fleet it
    /// stays empty, and this instance's state decides alone.
    pub(crate) shared: OnceLock<Box<dyn BreakerTwin>>,
}

#[derive(Debug)]
struct Slot {
    index: SlotIndex,
    attempts: AtomicU64,
    failures: AtomicU64,
}

impl RetryBreaker {
    /// A breaker that opens when at least `threshold` (0.5 = half) of the
    /// attempts of the last `window`, `min_attempts` of them at least,
    /// failed; and lets `probes` retries through `cool_down` after it
    /// opened, and `probes` more after each further `cool_down` in which
    /// none reported (their calls were dropped). A threshold outside
    /// `(0, 1]` is clamped to it, a window under 10 ms read as 10 ms, and
    /// `probes` of 0 as 1.
    pub const fn new(
        threshold: f64,
        min_attempts: u64,
        window: Duration,
        cool_down: Duration,
        probes: u32,
    ) -> RetryBreaker {
        let threshold = if threshold > 1.0 {
            1.0
        } else if threshold > 0.0 {
            threshold
        } else {
            f64::MIN_POSITIVE
        };
        let window_nanos = window::nanos_of(window);
        RetryBreaker {
            threshold,
            min_attempts,
            slot_nanos: window_nanos / SLOTS as u64,
            cool_down,
            probes: if probes == 0 { 1 } else { probes },
            epoch: Epoch::new(),
            slots: [const {
                Slot {
                    index: SlotIndex::new(),
                    attempts: AtomicU64::new(0),
                    failures: AtomicU64::new(0),
                }
            }; SLOTS],
            state: AtomicU8::new(CLOSED),
            opened_at: AtomicU64::new(0),
            probes_left: AtomicU32::new(0),
            turning: Mutex::new(()),
            shared: OnceLock::new(),
        }
    }

    /// Whether retries are stopped now (open, or waiting for its probes).
    pub fn is_open(&self) -> bool {
        self.state.load(Ordering::Relaxed) != CLOSED
    }

    /// The failure ratio of the attempts of the window, and their number.
    pub fn failure_ratio(&self) -> (f64, u64) {
        let (attempts, failures) = self.window(self.now_slot());
        let ratio = if attempts == 0 {
            0.0
        } else {
            failures as f64 / attempts as f64
        };
        (ratio, attempts)
    }

    /// An attempt ended: a success, or a failure.
    pub fn record(&self, failed: bool) {
        let now = self.now_slot();
        if let Some(fleet) = self.shared.get() {
            fleet.record(failed, self.slot_nanos, self.cool_down, now);
        }
        self.count(now, failed);
        match self.state.load(Ordering::Relaxed) {
            CLOSED if failed => {
                let (ratio, attempts) = self.failure_ratio();
                if attempts >= self.min_attempts && ratio >= self.threshold {
                    self.open();
                }
            }
            PROBING if failed => self.open(),
            // A success while probing, or a first attempt's success once
            // the cool-down is over: the backend answers again.
            PROBING => self.close(),
            OPEN if !failed && self.cooled_down() => self.close(),
            _ => {}
        }
    }

    /// Whether a retry may go now; while probing, it takes a probe. When
    /// the breaker is shared and Redis answers, the fleet decides, and an
    /// open fleet breaker opens this instance's too, so that its
    /// `classic(..)` functions fail fast without asking Redis.
    pub fn allow_retry(&self) -> bool {
        if let Some(fleet) = self.shared.get()
            && let Some(allowed) = fleet.allow_retry(
                self.threshold,
                self.min_attempts,
                self.slot_nanos,
                self.cool_down,
                self.probes,
                self.now_slot(),
            )
        {
            if !allowed && self.state.load(Ordering::Relaxed) == CLOSED {
                self.open();
            }
            return allowed;
        }
        // Without the fleet, the instance's own state decides, as for a
        // first attempt.
        self.allow_call()
    }

    /// Whether the first attempt of a `breaker = classic(..)` call may go
    /// now: always while closed, never while open and cooling down, and
    /// as one of the probes after that. It reads this instance's state
    /// only, so a first attempt never waits on Redis.
    ///
    /// ```
    /// use reattempt::RetryBreaker;
    /// use std::time::Duration;
    ///
    /// static BACKEND: RetryBreaker =
    ///     RetryBreaker::new(0.5, 2, Duration::from_secs(10), Duration::from_secs(60), 1);
    /// assert!(BACKEND.allow_call());
    /// BACKEND.record(true);
    /// BACKEND.record(true);
    /// assert!(BACKEND.is_open());
    /// assert!(!BACKEND.allow_call(), "open and cooling down: fail fast");
    /// ```
    pub fn allow_call(&self) -> bool {
        match self.state.load(Ordering::Relaxed) {
            CLOSED => true,
            _ => self.take_probe() || self.new_round(),
        }
    }

    fn cooled_down(&self) -> bool {
        let since = self
            .nanos()
            .saturating_sub(self.opened_at.load(Ordering::Relaxed));
        u128::from(since) >= self.cool_down.as_nanos()
    }

    /// Once a cool-down has passed since it opened, or since the last round
    /// of probes began with none heard from (their calls were dropped, say):
    /// a round of `probes`, taking one. Without the second, probes that never
    /// report would keep a `classic(..)` breaker open for ever, since it lets
    /// no other call through to report.
    fn new_round(&self) -> bool {
        if !self.cooled_down() {
            return false;
        }
        // One thread begins the round; the others take its probes. Checked
        // again under the lock: another began it, or the breaker opened
        // again, since.
        {
            let _turning = lock(&self.turning);
            if self.cooled_down() {
                self.opened_at.store(self.nanos(), Ordering::Relaxed);
                self.probes_left.store(self.probes, Ordering::Relaxed);
                // Open, or probing already; a breaker closed meanwhile stays
                // so.
                let _ =
                    self.state
                        .compare_exchange(OPEN, PROBING, Ordering::AcqRel, Ordering::Relaxed);
            }
        }
        self.take_probe()
    }

    fn take_probe(&self) -> bool {
        self.probes_left
            .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |left| {
                left.checked_sub(1)
            })
            .is_ok()
    }

    fn open(&self) {
        let was = {
            let _turning = lock(&self.turning);
            // Probes left over from the last probing may not go out after
            // the next cool-down on top of its own.
            self.probes_left.store(0, Ordering::Relaxed);
            self.opened_at.store(self.nanos(), Ordering::Relaxed);
            self.state.swap(OPEN, Ordering::AcqRel)
        };
        // Threads that failed at once may all open it: one says so.
        if was != OPEN {
            tracing::warn!(
                target: "reattempt",
                "retry breaker open: most attempts fail, so retries stop until probes succeed",
            );
        }
    }

    fn close(&self) {
        // The failures that opened it are history now.
        for slot in &self.slots {
            slot.index.forget();
        }
        if self.state.swap(CLOSED, Ordering::AcqRel) != CLOSED {
            tracing::info!(target: "reattempt", "retry breaker closed: retries resume");
        }
    }

    fn nanos(&self) -> u64 {
        self.epoch.nanos()
    }

    fn now_slot(&self) -> u64 {
        self.epoch.slot(self.slot_nanos)
    }

    /// Counts an attempt in slot `index`, emptied first if it held an older
    /// slot's counts; left out if it holds a newer one's, which only a
    /// thread held up for a window between reading the time and counting
    /// sees.
    fn count(&self, index: u64, failed: bool) {
        let slot = &self.slots[(index % SLOTS as u64) as usize];
        let entered = slot.index.enter(index, || {
            slot.attempts.store(0, Ordering::Relaxed);
            slot.failures.store(0, Ordering::Relaxed);
        });
        if entered {
            slot.attempts.fetch_add(1, Ordering::Relaxed);
            if failed {
                slot.failures.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    fn window(&self, index: u64) -> (u64, u64) {
        self.slots
            .iter()
            .filter(|slot| slot.index.holds(index))
            .fold((0, 0), |(a, f), slot| {
                (
                    a + slot.attempts.load(Ordering::Relaxed),
                    f + slot.failures.load(Ordering::Relaxed),
                )
            })
    }
}

/// A call of a `breaker = classic(..)` function that the breaker refused
/// before its first attempt, because it is open.
///
/// Such a function's error type implements `From<BreakerOpen>`;
/// `std::io::Error` does, with kind `Other`, so that an outer retry loop
/// classifies it as logical and does not hammer the breaker in turn.
///
/// ```
/// use reattempt::BreakerOpen;
///
/// let io: std::io::Error = BreakerOpen::new().into();
/// assert_eq!(io.kind(), std::io::ErrorKind::Other);
/// assert_eq!(io.to_string(), BreakerOpen::new().to_string());
/// assert!(io.get_ref().unwrap().is::<BreakerOpen>());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BreakerOpen;

impl BreakerOpen {
    /// The refusal of a call.
    pub const fn new() -> BreakerOpen {
        BreakerOpen
    }
}

impl fmt::Display for BreakerOpen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("retry breaker open: the call was not attempted")
    }
}

impl std::error::Error for BreakerOpen {}

impl From<BreakerOpen> for std::io::Error {
    fn from(open: BreakerOpen) -> std::io::Error {
        std::io::Error::other(open)
    }
}

/// Nothing under the lock can panic; a poisoned lock guards nothing.
fn lock(mutex: &Mutex<()>) -> MutexGuard<'_, ()> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Barrier;

    #[test]
    fn a_probe_that_fails_as_a_new_round_begins_leaves_the_breaker_cooling_down() {
        // A round of probes went out and none has reported for a cool-down:
        // one thread's probe fails (and opens the breaker again) just as
        // another begins a new round. Whichever goes first, the breaker
        // ends open and cooling down: no call may go until the cool-down
        // after that failure is over.
        let mut breaker =
            RetryBreaker::new(0.5, 1, Duration::from_secs(10), Duration::from_secs(60), 2);
        // A cool-down must be able to have passed since its clock began; a
        // long one, so that a loaded machine never sees it pass in a round.
        let long_ago = std::time::Instant::now().checked_sub(Duration::from_secs(120));
        breaker.epoch = Epoch::began(long_ago.expect("the machine has been up for two minutes"));
        let rounds = 50_000;
        let start = Barrier::new(2);
        let done = Barrier::new(2);
        // Counted, not asserted, in the loop: a panic there would leave the
        // other thread waiting at its barrier for ever.
        let mut let_through = 0;
        std::thread::scope(|scope| {
            scope.spawn(|| {
                for _ in 0..rounds {
                    start.wait();
                    let _ = breaker.allow_call();
                    done.wait();
                }
            });
            for _ in 0..rounds {
                // Probing, no probe left, and a cool-down long past.
                breaker.state.store(PROBING, Ordering::SeqCst);
                breaker.probes_left.store(0, Ordering::SeqCst);
                breaker.opened_at.store(0, Ordering::SeqCst);
                start.wait();
                breaker.record(true);
                done.wait();
                if breaker.allow_call() {
                    let_through += 1;
                }
            }
        });
        assert_eq!(
            let_through, 0,
            "calls let through right after a failed probe"
        );
    }
}
