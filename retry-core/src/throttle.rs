//! Client-side adaptive throttling, as Google's SRE book describes it
//! ("Handling Overload"): while a backend rejects many of a client's
//! requests because it is overloaded, the client rejects some of its new
//! requests itself, so that the backend spends its capacity on work, not
//! on refusals.
//!
//! The functions that name one `static` throttle count, over its window,
//! the requests they made (each first attempt, retry and hedge that ran,
//! and each request the throttle rejected) and the ones the backend
//! accepted (every attempt that did not fail with an overload signal:
//! [`Classification::is_overload`]). A new request is rejected locally
//! with probability `max(0, (requests − K·accepts) / (requests + 1))`,
//! never more than the throttle's maximum, and never while the window
//! holds fewer requests than its minimum.
//!
//! Until a request fails with an overload signal, the throttle only counts
//! accepted requests, without reading a clock: a success then costs one
//! atomic addition and a load. An overload starts its window, which takes
//! the requests accepted while calm as having come at the rate they came
//! since the throttle calmed down; once no overload was seen for a window,
//! it calms down again. Before its first overload it has never calmed
//! down, and does not know when those accepts came: it judges from what
//! it counts from the overload on (never from fewer than its minimum).

use core::cell::RefCell;
use core::fmt;
use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;

use crate::class::Classification;
use crate::rng::Rng;
use crate::window::{self, Epoch, SLOTS};

/// What `watching_until` holds while no overload was seen for a window.
const CALM: u64 = 0;
/// What `calm_since` holds until the throttle first calms down: the
/// accepts counted before any overload are of an age it does not know.
const UNKNOWN: u64 = u64::MAX;
/// A slot's count takes the low bits of its word, the index of its slot of
/// time the rest: the two change together, without a lock.
const COUNT_BITS: u32 = 32;
const COUNT_MAX: u64 = (1 << COUNT_BITS) - 1;
const INDEX_MASK: u64 = u64::MAX >> COUNT_BITS;

/// An adaptive throttle shared by the functions that call one backend
/// (`throttle = STATIC`).
///
/// ```
/// use reattempt::{AdaptiveThrottle, retry};
/// use std::time::Duration;
///
/// // K = 2 over the last two minutes: the SRE book's defaults.
/// static PRICES: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(120));
///
/// #[retry(max = 3, throttle = PRICES)]
/// fn price(item: u32) -> std::io::Result<u32> {
///     Ok(item * 100)
/// }
///
/// assert_eq!(price(3).unwrap(), 300);
/// assert_eq!(PRICES.rejection_ratio(), 0.0);
/// ```
///
/// Literals that make no throttle are refused where the `static` is
/// compiled:
///
/// ```compile_fail
/// use reattempt::AdaptiveThrottle;
/// use std::time::Duration;
///
/// // K below 1 would reject requests the backend accepts.
/// static BAD: AdaptiveThrottle = AdaptiveThrottle::new(0.5, Duration::from_secs(120));
/// ```
pub struct AdaptiveThrottle {
    /// K, as the bits of an `f64`: a dynamic policy may change it.
    k: AtomicU64,
    max_rejection: f64,
    min_requests: u64,
    /// The window's length, which a dynamic policy may change: its slots
    /// are a tenth of it.
    window_nanos: AtomicU64,
    epoch: Epoch,
    /// When the window of the last overload ends, in nanoseconds from
    /// `epoch`; [`CALM`] when no overload was seen since it last ended.
    watching_until: AtomicU64,
    /// Requests accepted while calm, counted without their time.
    calm_accepts: AtomicU64,
    /// When the throttle last calmed down, in nanoseconds from `epoch`;
    /// [`UNKNOWN`] before it first did.
    calm_since: AtomicU64,
    requests: [AtomicU64; SLOTS],
    accepts: [AtomicU64; SLOTS],
}

/// Why an [`AdaptiveThrottle`] could not be made from these values.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum InvalidThrottle {
    /// K below 1, infinite or not a number.
    K(f64),
    /// A window of zero.
    Window,
    /// A maximum rejection ratio outside `0 ≤ ratio < 1`.
    MaxRejection(f64),
}

impl fmt::Display for InvalidThrottle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InvalidThrottle::K(k) => write!(
                f,
                "an adaptive throttle's K is at least 1 (2 is the SRE book's), not {k}"
            ),
            InvalidThrottle::Window => f.write_str(
                "an adaptive throttle's window is longer than zero (two minutes is the SRE book's)",
            ),
            InvalidThrottle::MaxRejection(ratio) => write!(
                f,
                "an adaptive throttle's maximum rejection ratio is at least 0 and below 1, not {ratio}"
            ),
        }
    }
}

impl std::error::Error for InvalidThrottle {}

/// Checks the values a throttle is made of, in a `const fn` as at run time.
const fn check(k: f64, window: Duration, max_rejection: f64) -> Result<(), InvalidThrottle> {
    if k.is_nan() || k < 1.0 || k.is_infinite() {
        return Err(InvalidThrottle::K(k));
    }
    if window.is_zero() {
        return Err(InvalidThrottle::Window);
    }
    if !valid_ratio(max_rejection) {
        return Err(InvalidThrottle::MaxRejection(max_rejection));
    }
    Ok(())
}

/// Checks what a dynamic policy sets of a throttle (`throttle_k`,
/// `throttle_window`).
pub(crate) fn check_tuning(
    k: Option<f64>,
    window: Option<Duration>,
) -> Result<(), InvalidThrottle> {
    check(
        k.unwrap_or(1.0),
        window.unwrap_or(Duration::MAX),
        AdaptiveThrottle::DEFAULT_MAX_REJECTION,
    )
}

/// Whether a maximum rejection ratio is at least 0 and below 1 (NaN is
/// not).
const fn valid_ratio(ratio: f64) -> bool {
    ratio >= 0.0 && ratio < 1.0
}

impl AdaptiveThrottle {
    /// The maximum rejection ratio of a new throttle: at least one request
    /// in ten still goes out, to learn that the backend is back.
    pub const DEFAULT_MAX_REJECTION: f64 = 0.9;
    /// The fewest requests in the window a new throttle judges from.
    pub const DEFAULT_MIN_REQUESTS: u64 = 10;

    /// A throttle that rejects requests while the backend accepts fewer
    /// than one in `k` of those of the last `window` (a window under
    /// 10 ms is read as 10 ms).
    ///
    /// # Panics
    ///
    /// When `k` is below 1 or not a number, or `window` is zero: in a
    /// `static`, that is a compile error. Values read at run time go
    /// through [`AdaptiveThrottle::try_new`].
    pub const fn new(k: f64, window: Duration) -> AdaptiveThrottle {
        match check(k, window, AdaptiveThrottle::DEFAULT_MAX_REJECTION) {
            Ok(()) => AdaptiveThrottle::made(k, window),
            Err(InvalidThrottle::K(_)) => {
                panic!("an adaptive throttle's K is at least 1 (2 is the SRE book's)")
            }
            Err(_) => panic!("an adaptive throttle's window is longer than zero"),
        }
    }

    /// A throttle as [`AdaptiveThrottle::new`] makes it, or why these
    /// values make none.
    ///
    /// ```
    /// use reattempt::{AdaptiveThrottle, InvalidThrottle};
    /// use std::time::Duration;
    ///
    /// assert!(AdaptiveThrottle::try_new(2.0, Duration::from_secs(60)).is_ok());
    /// let refused = AdaptiveThrottle::try_new(0.5, Duration::from_secs(60)).unwrap_err();
    /// assert_eq!(refused, InvalidThrottle::K(0.5));
    /// assert!(refused.to_string().contains("at least 1"));
    /// ```
    pub const fn try_new(k: f64, window: Duration) -> Result<AdaptiveThrottle, InvalidThrottle> {
        match check(k, window, AdaptiveThrottle::DEFAULT_MAX_REJECTION) {
            Ok(()) => Ok(AdaptiveThrottle::made(k, window)),
            Err(invalid) => Err(invalid),
        }
    }

    /// A throttle of values [`check`] passed.
    const fn made(k: f64, window: Duration) -> AdaptiveThrottle {
        let window_nanos = window::nanos_of(window);
        AdaptiveThrottle {
            k: AtomicU64::new(k.to_bits()),
            max_rejection: AdaptiveThrottle::DEFAULT_MAX_REJECTION,
            min_requests: AdaptiveThrottle::DEFAULT_MIN_REQUESTS,
            window_nanos: AtomicU64::new(window_nanos),
            epoch: Epoch::new(),
            watching_until: AtomicU64::new(CALM),
            calm_accepts: AtomicU64::new(0),
            calm_since: AtomicU64::new(UNKNOWN),
            requests: [const { AtomicU64::new(0) }; SLOTS],
            accepts: [const { AtomicU64::new(0) }; SLOTS],
        }
    }

    /// The throttle, rejecting at most `ratio` of the requests
    /// (0.9 unless set).
    ///
    /// # Panics
    ///
    /// When `ratio` is not at least 0 and below 1: in a `static`, that is
    /// a compile error. [`AdaptiveThrottle::try_max_rejection`] says why
    /// instead.
    pub const fn max_rejection(mut self, ratio: f64) -> AdaptiveThrottle {
        if !valid_ratio(ratio) {
            panic!("an adaptive throttle's maximum rejection ratio is at least 0 and below 1");
        }
        self.max_rejection = ratio;
        self
    }

    /// The throttle, rejecting at most `ratio` of the requests, or why
    /// that ratio is refused.
    pub const fn try_max_rejection(
        mut self,
        ratio: f64,
    ) -> Result<AdaptiveThrottle, InvalidThrottle> {
        if !valid_ratio(ratio) {
            // The throttle is made of atomics: dropping it runs nothing,
            // but a `const fn` may not drop a value it cannot see through.
            core::mem::forget(self);
            return Err(InvalidThrottle::MaxRejection(ratio));
        }
        self.max_rejection = ratio;
        Ok(self)
    }

    /// The throttle, judging only from a window of at least `requests`
    /// (10 unless set).
    pub const fn min_requests(mut self, requests: u64) -> AdaptiveThrottle {
        self.min_requests = requests;
        self
    }

    /// The requests counted in the window: the attempts that ran and the
    /// requests the throttle rejected. While the throttle is calm, the
    /// requests accepted since it calmed down.
    pub fn requests(&self) -> u64 {
        self.counted(&self.requests, self.epoch.nanos())
    }

    /// The requests of [`requests`](AdaptiveThrottle::requests) that the
    /// backend accepted.
    pub fn accepts(&self) -> u64 {
        self.counted(&self.accepts, self.epoch.nanos())
    }

    /// The share of new requests the throttle rejects now: 0 while calm.
    pub fn rejection_ratio(&self) -> f64 {
        self.rejection_ratio_at(self.epoch.nanos())
    }

    /// What `cells` count in the window at `now`; while calm, the
    /// requests accepted since (which are all the requests there are).
    fn counted(&self, cells: &[AtomicU64; SLOTS], now: u64) -> u64 {
        if self.is_calm() {
            return self.calm_accepts.load(Ordering::Relaxed);
        }
        self.sum(cells, now)
    }

    fn rejection_ratio_at(&self, now: u64) -> f64 {
        if self.is_calm() {
            return 0.0;
        }
        self.ratio_at(now)
    }

    /// K and the window as a dynamic policy sets them (`throttle_k`,
    /// `throttle_window`), for every function that names this throttle;
    /// values [`check_tuning`] passed. A new window starts counting
    /// afresh: counts of slots of another length say nothing of it.
    pub(crate) fn tune(&self, k: Option<f64>, window: Option<Duration>) {
        // Read before written: every call of a function with a dynamic
        // policy tunes, and a store would take the cache line from the
        // other threads counting in it.
        if let Some(k) = k
            && self.k.load(Ordering::Relaxed) != k.to_bits()
        {
            self.k.store(k.to_bits(), Ordering::Relaxed);
        }
        if let Some(window) = window {
            let nanos = window::nanos_of(window);
            if self.window_nanos() != nanos
                && self.window_nanos.swap(nanos, Ordering::Relaxed) != nanos
            {
                for cell in self.requests.iter().chain(&self.accepts) {
                    cell.store(0, Ordering::Relaxed);
                }
            }
        }
    }

    fn k(&self) -> f64 {
        f64::from_bits(self.k.load(Ordering::Relaxed))
    }

    fn window_nanos(&self) -> u64 {
        self.window_nanos.load(Ordering::Relaxed)
    }

    #[inline]
    fn is_calm(&self) -> bool {
        self.watching_until.load(Ordering::Relaxed) == CALM
    }

    /// Whether a request may go out now; one rejected is counted as a
    /// request the backend did not accept, as the SRE book counts it.
    #[inline]
    pub(crate) fn allows(&self) -> bool {
        self.is_calm() || self.draw_allows()
    }

    #[cold]
    #[inline(never)]
    fn draw_allows(&self) -> bool {
        thread_local! {
            static DRAWS: RefCell<Option<Rng>> = const { RefCell::new(None) };
        }
        let draw = DRAWS.with(|draws| {
            draws
                .borrow_mut()
                .get_or_insert_with(Rng::from_entropy)
                .next_f64()
        });
        self.allows_with(self.epoch.nanos(), draw)
    }

    /// Whether a request may go out at `now`, given a uniform draw from
    /// `[0, 1)`.
    fn allows_with(&self, now: u64, draw: f64) -> bool {
        if draw >= self.ratio_at(now) {
            return true;
        }
        add(&self.requests, self.slot(now), 1);
        false
    }

    /// Counts an attempt that succeeded: while calm, one addition.
    #[inline]
    pub(crate) fn succeeded(&self) {
        self.succeeded_then(|| self.epoch.nanos());
    }

    /// Counts an attempt that ran and failed with `class`: accepted unless
    /// it is an overload signal.
    pub(crate) fn failed(&self, class: &Classification) {
        self.failed_then(class, || self.epoch.nanos());
    }

    /// [`succeeded`](Self::succeeded), reading the time with `now` only
    /// where it counts in the window.
    #[inline]
    fn succeeded_then(&self, now: impl FnOnce() -> u64) {
        if self.is_calm() {
            self.calm_accepts.fetch_add(1, Ordering::Relaxed);
        } else {
            self.record_watching(true, now());
        }
    }

    fn failed_then(&self, class: &Classification, now: impl FnOnce() -> u64) {
        if class.is_overload() {
            self.record_watching(false, now());
        } else {
            self.succeeded_then(now);
        }
    }

    /// Counts an attempt that ran and ended with `class` (`None`: it
    /// succeeded).
    #[cfg(test)]
    fn record(&self, class: Option<&Classification>) {
        match class {
            Some(class) => self.failed(class),
            None => self.succeeded(),
        }
    }

    /// The throttle at `elapsed` after its first use, by a clock of the
    /// caller's: for a simulation, or a test, that keeps its own time.
    /// Its calls read no clock; a throttle driven so should not also count
    /// calls of functions that name it, which read the real one.
    ///
    /// ```
    /// use reattempt::{AdaptiveThrottle, Classification};
    /// use std::time::Duration;
    ///
    /// let throttle = AdaptiveThrottle::new(2.0, Duration::from_secs(60));
    /// let overloaded = Classification::rate_limited();
    /// for _ in 0..20 {
    ///     throttle.at(Duration::from_secs(1)).failed(&overloaded);
    /// }
    /// assert!(throttle.at(Duration::from_secs(2)).rejection_ratio() > 0.8);
    /// // A window later, what it counted has aged out.
    /// assert_eq!(throttle.at(Duration::from_secs(70)).rejection_ratio(), 0.0);
    /// ```
    pub fn at(&self, elapsed: Duration) -> ThrottleAt<'_> {
        ThrottleAt {
            throttle: self,
            now: u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX),
        }
    }

    #[cold]
    #[inline(never)]
    fn record_watching(&self, accepted: bool, now: u64) {
        if accepted {
            let until = self.watching_until.load(Ordering::Acquire);
            let calm = until == CALM
                || now >= until
                    && match self.watching_until.compare_exchange(
                        until,
                        CALM,
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    ) {
                        // No overload for a window: calm again, since now.
                        Ok(_) => {
                            self.calm_since.store(now, Ordering::Relaxed);
                            true
                        }
                        // Another thread calmed it, or an overload watches
                        // on: this accept counts where the state now says.
                        Err(seen) => seen == CALM,
                    };
            if calm {
                self.calm_accepts.fetch_add(1, Ordering::Relaxed);
                return;
            }
        } else {
            let ends = now.saturating_add(self.window_nanos()).max(1);
            if self.watching_until.fetch_max(ends, Ordering::AcqRel) == CALM {
                self.carry_calm_accepts(now);
            }
        }
        let slot = self.slot(now);
        add(&self.requests, slot, 1);
        if accepted {
            add(&self.accepts, slot, 1);
        }
    }

    /// Carries the requests accepted while calm into the window that an
    /// overload starts: as many as came in the part of the window it was
    /// calm for, at the rate they came, spread over that part's slots so
    /// that they age out as they would have. Accepts counted before the
    /// first overload are of an age the throttle does not know (it reads
    /// no clock while calm): they are not carried, and it judges from what
    /// it counts from then on.
    fn carry_calm_accepts(&self, now: u64) {
        let accepted = self.calm_accepts.swap(0, Ordering::Relaxed);
        let since = self.calm_since.load(Ordering::Relaxed);
        if since == UNKNOWN || accepted == 0 {
            return;
        }
        let calm_for = now.saturating_sub(since);
        let window = self.window_nanos();
        let (span, in_window) = if calm_for <= window {
            (calm_for, accepted)
        } else {
            let share = u128::from(accepted) * u128::from(window) / u128::from(calm_for);
            (window, u64::try_from(share).unwrap_or(u64::MAX))
        };
        let slot_nanos = (window / SLOTS as u64).max(1);
        let slots = (span / slot_nanos + 1).min(SLOTS as u64);
        let current = self.slot(now);
        let (each, rest) = (in_window / slots, in_window % slots);
        for back in 0..slots.min(current + 1) {
            let n = if back == 0 { each + rest } else { each };
            add(&self.requests, current - back, n);
            add(&self.accepts, current - back, n);
        }
    }

    /// The share of requests to reject at `now`, by the SRE book's formula.
    fn ratio_at(&self, now: u64) -> f64 {
        let requests = self.sum(&self.requests, now);
        if requests < self.min_requests.max(1) {
            return 0.0;
        }
        let accepts = self.sum(&self.accepts, now) as f64;
        let requests = requests as f64;
        let ratio = (requests - self.k() * accepts) / (requests + 1.0);
        ratio.clamp(0.0, self.max_rejection)
    }

    fn slot(&self, now: u64) -> u64 {
        now / (self.window_nanos() / SLOTS as u64).max(1)
    }

    /// The counts of `cells` in the window that ends in the slot of `now`.
    fn sum(&self, cells: &[AtomicU64; SLOTS], now: u64) -> u64 {
        let current = self.slot(now) & INDEX_MASK;
        cells
            .iter()
            .map(|cell| cell.load(Ordering::Relaxed))
            .filter(|word| {
                let at = word >> COUNT_BITS;
                // A count of a later slot than `now`'s was made by a thread
                // that read the clock after this one: it is in the window.
                (current.wrapping_sub(at) & INDEX_MASK) < SLOTS as u64
                    || (at.wrapping_sub(current) & INDEX_MASK) < SLOTS as u64
            })
            .map(|word| word & COUNT_MAX)
            .sum()
    }
}

/// Adds `n` to the count of slot `slot` in `cells`: the cell of an older
/// slot is emptied first; a cell that holds the count of a slot up to two
/// windows newer leaves this late count out. One further ahead was counted
/// with another window's slots (a dynamic policy changed it): emptied too.
fn add(cells: &[AtomicU64; SLOTS], slot: u64, n: u64) {
    let at = slot & INDEX_MASK;
    let cell = &cells[(slot % SLOTS as u64) as usize];
    let _ = cell.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |word| {
        let held = word >> COUNT_BITS;
        let ahead = held.wrapping_sub(at) & INDEX_MASK;
        if held == at {
            Some((at << COUNT_BITS) | (word & COUNT_MAX).saturating_add(n).min(COUNT_MAX))
        } else if ahead <= 2 * SLOTS as u64 {
            None
        } else {
            Some((at << COUNT_BITS) | n.min(COUNT_MAX))
        }
    });
}

impl fmt::Debug for AdaptiveThrottle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AdaptiveThrottle")
            .field("k", &self.k())
            .field("window", &Duration::from_nanos(self.window_nanos()))
            .field("max_rejection", &self.max_rejection)
            .field("min_requests", &self.min_requests)
            .field("rejection_ratio", &self.rejection_ratio())
            .finish_non_exhaustive()
    }
}

/// An [`AdaptiveThrottle`] at a time of the caller's clock
/// ([`AdaptiveThrottle::at`]).
#[derive(Clone, Copy, Debug)]
pub struct ThrottleAt<'a> {
    throttle: &'a AdaptiveThrottle,
    /// Nanoseconds after the throttle's first use.
    now: u64,
}

impl ThrottleAt<'_> {
    /// Whether a request may go out, given a uniform draw from `[0, 1)`;
    /// one rejected is counted as a request the backend did not accept.
    pub fn allows(&self, draw: f64) -> bool {
        self.throttle.is_calm() || self.throttle.allows_with(self.now, draw)
    }

    /// Counts a request that succeeded.
    pub fn succeeded(&self) {
        self.throttle.succeeded_then(|| self.now);
    }

    /// Counts a request that failed with `class`: accepted unless it is an
    /// overload signal ([`Classification::is_overload`]).
    pub fn failed(&self, class: &Classification) {
        self.throttle.failed_then(class, || self.now);
    }

    /// The share of new requests the throttle rejects.
    pub fn rejection_ratio(&self) -> f64 {
        self.throttle.rejection_ratio_at(self.now)
    }

    /// The requests counted in the window.
    pub fn requests(&self) -> u64 {
        self.throttle.counted(&self.throttle.requests, self.now)
    }

    /// The requests of the window the backend accepted.
    pub fn accepts(&self) -> u64 {
        self.throttle.counted(&self.throttle.accepts, self.now)
    }
}

/// A call that its [`AdaptiveThrottle`] rejected before its first
/// attempt, because the backend is overloaded.
///
/// A function with `throttle = ..` has an error type that implements
/// `From<Throttled>`; `std::io::Error` does, with kind `Other`, so that an
/// outer retry loop classifies it as logical and does not retry what the
/// throttle refused.
///
/// ```
/// use reattempt::Throttled;
///
/// let io: std::io::Error = Throttled::new().into();
/// assert_eq!(io.kind(), std::io::ErrorKind::Other);
/// assert!(io.get_ref().unwrap().is::<Throttled>());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Throttled;

impl Throttled {
    /// The rejection of a call.
    pub const fn new() -> Throttled {
        Throttled
    }
}

impl fmt::Display for Throttled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("throttled: the backend is overloaded, and the call was not attempted")
    }
}

impl std::error::Error for Throttled {}

impl From<Throttled> for std::io::Error {
    fn from(throttled: Throttled) -> std::io::Error {
        std::io::Error::other(throttled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::class::Classification;
    use crate::window::Epoch;
    use std::thread;
    use std::time::Instant;

    const OVERLOAD: Classification = Classification::rate_limited();

    fn throttle(k: f64) -> AdaptiveThrottle {
        AdaptiveThrottle::new(k, Duration::from_secs(3600))
    }

    #[test]
    fn calm_it_counts_accepts_and_rejects_nothing() {
        let t = throttle(2.0);
        for _ in 0..100 {
            t.record(None);
            t.record(Some(&Classification::logical()));
        }
        assert_eq!((t.requests(), t.accepts()), (200, 200));
        assert!(t.allows_with(t.epoch.nanos(), 0.0));
        assert_eq!(t.rejection_ratio(), 0.0);
    }

    #[test]
    fn the_first_overload_judges_from_what_it_counts_from_then_on() {
        let t = throttle(2.0);
        for _ in 0..30 {
            t.record(None);
        }
        t.record(Some(&OVERLOAD));
        assert_eq!((t.requests(), t.accepts()), (1, 0));
        assert_eq!(t.rejection_ratio(), 0.0, "below the minimum");
    }

    #[test]
    fn it_rejects_by_the_sre_formula_within_its_maximum() {
        let t = throttle(2.0);
        for _ in 0..89 {
            t.record(Some(&OVERLOAD));
        }
        for _ in 0..10 {
            t.record(None);
        }
        // (99 − 2·10) / 100
        assert!((t.rejection_ratio() - 0.79).abs() < 1e-9);
        assert!(!t.allows_with(t.epoch.nanos(), 0.5));
        assert!(t.allows_with(t.epoch.nanos(), 0.8));
        // The rejection counts as a request the backend did not accept.
        assert_eq!((t.requests(), t.accepts()), (100, 10));
        for _ in 0..1000 {
            t.record(Some(&OVERLOAD));
        }
        assert_eq!(t.rejection_ratio(), AdaptiveThrottle::DEFAULT_MAX_REJECTION);
        assert!(t.allows_with(t.epoch.nanos(), 0.95));
    }

    #[test]
    fn it_never_judges_from_fewer_requests_than_its_minimum() {
        let t = throttle(1.0).min_requests(5);
        for _ in 0..4 {
            t.record(Some(&OVERLOAD));
        }
        assert_eq!(t.rejection_ratio(), 0.0);
        t.record(Some(&OVERLOAD));
        assert!(t.rejection_ratio() > 0.8);
    }

    #[test]
    fn only_an_overload_signal_is_not_accepted() {
        let t = throttle(2.0);
        t.record(Some(&OVERLOAD));
        let not_overload = [
            Classification::transient(),
            Classification::logical(),
            crate::http::status(500),
            crate::grpc::status(4),
        ];
        for class in &not_overload {
            t.record(Some(class));
        }
        let overload = [
            crate::http::status(503),
            crate::grpc::status(8),
            crate::grpc::status(14),
            Classification::transient().with_retry_after(Duration::from_secs(1)),
        ];
        for class in &overload {
            t.record(Some(class));
        }
        assert_eq!((t.requests(), t.accepts()), (9, 4));
    }

    #[test]
    fn counts_from_eight_threads_are_exact() {
        let t = throttle(2.0).max_rejection(0.0);
        t.record(Some(&OVERLOAD));
        thread::scope(|scope| {
            for n in 0..8 {
                let t = &t;
                scope.spawn(move || {
                    for i in 0..5_000 {
                        if (i + n) % 4 == 0 {
                            t.record(Some(&OVERLOAD));
                        } else {
                            t.record(None);
                        }
                        assert!(t.allows(), "a maximum of 0 rejects nothing");
                    }
                });
            }
        });
        assert_eq!(t.requests(), 1 + 8 * 5_000);
        assert_eq!(t.accepts(), 8 * 5_000 / 4 * 3);
    }

    #[test]
    fn the_window_forgets_old_counts_and_calms_down() {
        let t = AdaptiveThrottle {
            epoch: Epoch::began(Instant::now() - Duration::from_secs(10)),
            ..AdaptiveThrottle::new(2.0, Duration::from_millis(50))
        };
        for _ in 0..50 {
            t.record(Some(&OVERLOAD));
        }
        assert!(t.rejection_ratio() > 0.8);
        thread::sleep(Duration::from_millis(120));
        assert_eq!(t.rejection_ratio(), 0.0, "the overloads left the window");
        t.record(None);
        assert!(t.is_calm());
        assert_eq!((t.requests(), t.accepts()), (1, 1));
    }

    #[test]
    fn a_policy_may_change_k_and_a_new_window_counts_afresh() {
        let t = throttle(2.0);
        for _ in 0..20 {
            t.record(Some(&OVERLOAD));
        }
        for _ in 0..10 {
            t.record(None);
        }
        // (30 − 2·10) / 31
        assert!((t.rejection_ratio() - 10.0 / 31.0).abs() < 1e-9);
        t.tune(Some(1.0), None);
        assert!((t.rejection_ratio() - 20.0 / 31.0).abs() < 1e-9);
        t.tune(None, Some(Duration::from_secs(3600)));
        assert_eq!(t.requests(), 30, "the same window keeps its counts");
        t.tune(None, Some(Duration::from_secs(60)));
        assert_eq!((t.requests(), t.accepts()), (0, 0));
    }

    #[test]
    fn a_late_count_does_not_empty_a_newer_slot() {
        let cells = [const { AtomicU64::new(0) }; SLOTS];
        add(&cells, 25, 3);
        add(&cells, 15, 1);
        assert_eq!(cells[5].load(Ordering::Relaxed) & COUNT_MAX, 3);
        add(&cells, 35, 2);
        assert_eq!(cells[5].load(Ordering::Relaxed) & COUNT_MAX, 2);
        // Counted with a shorter window's slots: far ahead, emptied.
        add(&cells, 100_005, 4);
        add(&cells, 45, 1);
        assert_eq!(cells[5].load(Ordering::Relaxed), (45 << COUNT_BITS) | 1);
    }

    #[test]
    fn accepts_of_an_unknown_age_are_not_carried_and_known_ones_are_spread() {
        let t = throttle(2.0);
        let minute = Duration::from_secs(60);
        for _ in 0..1_000 {
            t.at(minute).succeeded();
        }
        // The first overload: what came before is of no known age.
        t.at(minute).failed(&OVERLOAD);
        assert_eq!((t.at(minute).requests(), t.at(minute).accepts()), (1, 0));
        // Calm again a window after, for half a window.
        let calm_at = minute + Duration::from_secs(3600);
        t.at(calm_at).succeeded();
        for _ in 0..1_799 {
            t.at(calm_at + Duration::from_secs(900)).succeeded();
        }
        let overload_at = calm_at + Duration::from_secs(1800);
        t.at(overload_at).failed(&OVERLOAD);
        let now = t.at(overload_at);
        assert_eq!((now.requests(), now.accepts()), (1_801, 1_800));
        // Spread over the half window it was calm for: three quarters of
        // a window later, half of them have aged out.
        let later = t.at(overload_at + Duration::from_secs(2700));
        assert!(
            (800..=1_000).contains(&later.accepts()),
            "{:?}",
            later.accepts()
        );
    }

    #[test]
    fn an_accept_while_an_overload_watches_is_counted_in_the_window() {
        let t = throttle(2.0);
        let at = |secs| t.at(Duration::from_secs(secs));
        at(10).failed(&OVERLOAD);
        // Still watching: the accept counts in the window, not as calm.
        at(20).succeeded();
        assert_eq!((at(20).requests(), at(20).accepts()), (2, 1));
        // A window after the overload: calm again.
        at(3_700).succeeded();
        assert!(t.is_calm());
    }

    #[test]
    fn values_that_make_no_throttle_are_refused_with_what_is_allowed() {
        let minute = Duration::from_secs(60);
        for k in [0.0, 0.99, -1.0, f64::NAN, f64::INFINITY] {
            let refused = AdaptiveThrottle::try_new(k, minute).unwrap_err();
            assert!(matches!(refused, InvalidThrottle::K(_)), "{k}");
            assert!(refused.to_string().contains("at least 1"), "{refused}");
        }
        let refused = AdaptiveThrottle::try_new(2.0, Duration::ZERO).unwrap_err();
        assert_eq!(refused, InvalidThrottle::Window);
        for ratio in [1.0, -0.1, f64::NAN] {
            let refused = throttle(2.0).try_max_rejection(ratio).unwrap_err();
            assert!(refused.to_string().contains("below 1"), "{refused}");
        }
        assert!(throttle(2.0).try_max_rejection(0.0).is_ok());
    }
}
