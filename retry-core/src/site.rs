//! What one retried function is to the library between its calls: its
//! name, its place in the registry of functions called so far (which
//! [`stats`](crate::stats) reads), its counts, its alert streak, and what
//! it has already warned about.
//!
//! A function's alert streak is counted here, or by the fleet's twin of
//! the streaks once they are shared (`fleet::share_alerts`): the site asks
//! it first, and counts locally when the fleet does not answer.

use core::mem;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use core::time::Duration;
use std::sync::{Mutex, PoisonError};

use crate::class::{Class, Classification, Code};
use crate::clock::saturating_nanos;
use crate::export::{self, Ended};
use crate::give_up::GiveUp;
use crate::twin::STREAK_TWIN;

/// The last site called so far, first of a list linked through the sites
/// themselves, so that registering one allocates nothing.
static REGISTRY: Mutex<Option<&'static Site>> = Mutex::new(None);

/// Every site registered so far, the last first.
pub(crate) fn sites() -> impl Iterator<Item = &'static Site> {
    let head = *REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    from(head)
}

/// `site` and every site registered before it.
fn from(site: Option<&'static Site>) -> impl Iterator<Item = &'static Site> {
    core::iter::successors(site, |site| {
        *site.next.lock().unwrap_or_else(PoisonError::into_inner)
    })
}

/// What one retried function keeps between calls: its statistics, its
/// alert streak, and what it has already warned about. The expansion makes
/// one `static` of it per function, and names it only there.
#[doc(hidden)]
#[derive(Debug)]
pub struct Site {
    pub(crate) name: &'static str,
    /// Whether the name was given (`name = ".."`), so that functions may
    /// share it on purpose; else it is the module's path and the
    /// function's name, which methods of two types in one module share.
    given: bool,
    registered: AtomicBool,
    /// The site registered before this one, if any: set once, as this
    /// one registers. A `Mutex` rather than a `OnceLock`, which has a
    /// destructor: rustc would check each function's `static` site for
    /// one that runs in a constant, in every annotated function's build.
    next: Mutex<Option<&'static Site>>,
    pub(crate) first_try: AtomicU64,
    pub(crate) after_retries: AtomicU64,
    pub(crate) gave_up: [AtomicU64; GiveUp::ALL.len()],
    pub(crate) retries: AtomicU64,
    pub(crate) hedges: AtomicU64,
    pub(crate) hedges_won: AtomicU64,
    pub(crate) nanos: AtomicU64,
    pub(crate) timed: AtomicU64,
    pub(crate) alerts: AtomicU64,
    pub(crate) cancelled: AtomicU64,
    pub(crate) fell_back: AtomicU64,
    /// Whether `streak` counts anything, so a success need not lock it.
    streak_active: AtomicBool,
    streak: Mutex<Streak>,
    pub(crate) nested_warned: AtomicBool,
    /// The kinds of warning said once for the function (`first_time`).
    warned_once: AtomicU32,
    /// The label sets of its exported series (feature `metrics`).
    labels: export::Labels,
}

#[derive(Debug)]
struct Streak {
    class: Class,
    code: Option<Code>,
    count: u32,
    fired: bool,
}

/// An alert: the same failure, `count` times in a row.
///
/// ```
/// use reattempt::{Alert, Class, retry};
/// use std::sync::atomic::{AtomicU32, Ordering};
///
/// static PAGES: AtomicU32 = AtomicU32::new(0);
///
/// fn page(alert: &Alert) {
///     assert_eq!((alert.class, alert.count), (Class::Transient, 3));
///     PAGES.fetch_add(1, Ordering::SeqCst);
/// }
///
/// #[retry(max = 3, backoff = none, alert_after = 3, on_alert = page)]
/// fn sync_orders() -> std::io::Result<()> {
///     Err(std::io::ErrorKind::ConnectionReset.into())
/// }
///
/// sync_orders().unwrap_err();
/// assert_eq!(PAGES.load(Ordering::SeqCst), 1, "one alert for the streak");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Alert {
    /// The function's name.
    pub function: &'static str,
    /// The class of the repeated failure.
    pub class: Class,
    /// Its code, when known.
    pub code: Option<String>,
    /// How many times in a row it happened (`alert_after`).
    pub count: u32,
}

impl Site {
    /// A site with nothing counted yet, and no name. Every site starts as
    /// a copy of it: the compiler evaluates a constant once per crate, but
    /// each `static` initialiser on its own, so the expansion's `Site::new`
    /// only copies this and sets the name.
    // Never borrowed, only copied into a new site, which is what a constant
    // with atomics in it is fit for.
    #[allow(clippy::declare_interior_mutable_const)]
    const UNNAMED: Site = Site {
        name: "",
        given: false,
        registered: AtomicBool::new(false),
        next: Mutex::new(None),
        first_try: AtomicU64::new(0),
        after_retries: AtomicU64::new(0),
        gave_up: [const { AtomicU64::new(0) }; GiveUp::ALL.len()],
        retries: AtomicU64::new(0),
        hedges: AtomicU64::new(0),
        hedges_won: AtomicU64::new(0),
        nanos: AtomicU64::new(0),
        timed: AtomicU64::new(0),
        alerts: AtomicU64::new(0),
        cancelled: AtomicU64::new(0),
        fell_back: AtomicU64::new(0),
        streak_active: AtomicBool::new(false),
        streak: Mutex::new(Streak {
            class: Class::Transient,
            code: None,
            count: 0,
            fired: false,
        }),
        nested_warned: AtomicBool::new(false),
        warned_once: AtomicU32::new(0),
        labels: export::Labels::new(""),
    };

    /// The site of a function named `name` by default (its module's path
    /// and its own name): the first call of another function named alike
    /// logs a warning.
    pub const fn new(name: &'static str) -> Site {
        let mut site = Site::UNNAMED;
        site.name = name;
        // The unnamed labels are forgotten, not dropped: with `metrics` they
        // hold a `OnceLock`, whose destructor cannot run in a constant, and
        // they own nothing yet.
        #[allow(clippy::forget_non_drop)]
        mem::forget(mem::replace(&mut site.labels, export::Labels::new(name)));
        site
    }

    /// The site of a function given the name `name` (`name = ".."`), which
    /// other functions may share: their statistics add up.
    pub const fn given(name: &'static str) -> Site {
        let mut site = Site::new(name);
        site.given = true;
        site
    }

    /// The function's name.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// Adds the site to the registry the first time it is used.
    #[inline]
    pub(crate) fn register(&'static self) {
        if !self.registered.load(Ordering::Relaxed) {
            self.register_slow();
        }
    }

    #[cold]
    fn register_slow(&'static self) {
        if self.registered.swap(true, Ordering::AcqRel) {
            return;
        }
        let earlier = {
            let mut head = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
            let earlier = head.replace(self);
            *self.next.lock().unwrap_or_else(PoisonError::into_inner) = earlier;
            earlier
        };
        if self.given {
            return;
        }
        // Of two sites named alike by default, the later to register finds
        // the earlier behind it, and says so once.
        let named_alike_earlier = from(earlier).any(|site| !site.given && site.name == self.name);
        if named_alike_earlier {
            named_alike(self.name);
        }
    }

    /// A first-try success, `elapsed` after the call started when it is
    /// timed (the `timing` feature).
    #[inline]
    pub(crate) fn first_try_success(&'static self, elapsed: Option<Duration>) {
        self.first_try.fetch_add(1, Ordering::Relaxed);
        if let Some(elapsed) = elapsed {
            self.add_time(elapsed);
        }
        export::call_ended(&self.labels, Ended::FirstTry, elapsed);
    }

    /// A call that gave up, answered by its fallback.
    pub(crate) fn fell_back(&'static self) {
        self.fell_back.fetch_add(1, Ordering::Relaxed);
    }

    /// A call dropped before it ended.
    pub(crate) fn cancelled(&'static self) {
        self.cancelled.fetch_add(1, Ordering::Relaxed);
        export::call_ended(&self.labels, Ended::Cancelled, None);
    }

    /// A success after retries, `nanos` after the call started when it
    /// read its clock then.
    pub(crate) fn success_after_retries(&'static self, nanos: Option<u64>) {
        self.after_retries.fetch_add(1, Ordering::Relaxed);
        if let Some(nanos) = nanos {
            self.nanos.fetch_add(nanos, Ordering::Relaxed);
            self.timed.fetch_add(1, Ordering::Relaxed);
        }
        export::call_ended(
            &self.labels,
            Ended::AfterRetries,
            nanos.map(Duration::from_nanos),
        );
    }

    /// A give-up, `elapsed` after the call started when it read its clock
    /// then; `retried`: whether it made more than one attempt. Without the
    /// `timing` feature only a call that retried adds its time, as a
    /// first-try success does not.
    pub(crate) fn gave_up(&'static self, reason: GiveUp, elapsed: Option<Duration>, retried: bool) {
        self.gave_up[reason.index()].fetch_add(1, Ordering::Relaxed);
        if let Some(elapsed) = elapsed
            && (retried || export::TIMES_EVERY_CALL)
        {
            self.add_time(elapsed);
        }
        export::call_ended(&self.labels, Ended::GaveUp(reason), elapsed);
    }

    pub(crate) fn retry(&'static self) {
        self.retries.fetch_add(1, Ordering::Relaxed);
        export::retry_started(&self.labels);
    }

    /// A hedge started: an attempt beside a slow one.
    pub(crate) fn hedge_started(&'static self) {
        self.hedges.fetch_add(1, Ordering::Relaxed);
        export::hedge_started(&self.labels);
    }

    /// A hedge gave its call the outcome.
    pub(crate) fn hedge_won(&'static self) {
        self.hedges_won.fetch_add(1, Ordering::Relaxed);
        export::hedge_won(&self.labels);
    }

    fn add_time(&self, elapsed: Duration) {
        self.nanos
            .fetch_add(saturating_nanos(elapsed), Ordering::Relaxed);
        self.timed.fetch_add(1, Ordering::Relaxed);
    }

    /// A failure towards the streak of `alert_after`: the alert to raise,
    /// when this failure makes `after` in a row of the same kind.
    pub(crate) fn failure_streak(
        &'static self,
        class: &Classification,
        after: u32,
    ) -> Option<Alert> {
        let alert = self.count_failure(class, after);
        // Marked once the failure is counted, as a success unmarks before it
        // resets: a failure counted after a success's reset is always
        // marked, so the next success resets it too. Marked first, it could
        // be unmarked by a success that reset the streak before the failure
        // was counted, and the next success would leave that count standing.
        self.streak_active.store(true, Ordering::Release);
        alert
    }

    fn count_failure(&'static self, class: &Classification, after: u32) -> Option<Alert> {
        // Shared with the fleet, the streak is the fleet's, unless it did
        // not answer: then it is counted here, as it is before sharing.
        if let Some(fleet) = STREAK_TWIN.get()
            && let Some((count, fire)) = fleet.failure(self.name, class, after)
        {
            return fire.then(|| self.fire(*class, count));
        }
        let code = class.code().map(Code::new);
        let mut streak = self.streak.lock().unwrap_or_else(PoisonError::into_inner);
        if streak.count > 0 && streak.class == class.class() && streak.code == code {
            streak.count = streak.count.saturating_add(1);
        } else {
            *streak = Streak {
                class: class.class(),
                code,
                count: 1,
                fired: false,
            };
        }
        if streak.count >= after && !streak.fired {
            streak.fired = true;
            let count = streak.count;
            drop(streak);
            return Some(self.fire(*class, count));
        }
        None
    }

    /// An alert for `count` failures like `class` in a row.
    fn fire(&'static self, class: Classification, count: u32) -> Alert {
        self.alerts.fetch_add(1, Ordering::Relaxed);
        export::alert(&self.labels);
        Alert {
            function: self.name,
            class: class.class(),
            code: class.code().map(str::to_owned),
            count,
        }
    }

    /// A success ends the streak and re-arms the alert.
    #[inline]
    pub(crate) fn success_streak(&self) {
        if self.streak_active.load(Ordering::Relaxed) {
            self.end_streak();
        }
    }

    #[cold]
    fn end_streak(&self) {
        // Unmarked before the reset (see `failure_streak`).
        self.streak_active.store(false, Ordering::Release);
        if let Some(fleet) = STREAK_TWIN.get() {
            fleet.success(self.name);
        }
        let mut streak = self.streak.lock().unwrap_or_else(PoisonError::into_inner);
        streak.count = 0;
        streak.fired = false;
    }

    /// Whether a problem of this kind (a bit of its own, below 32) is new
    /// for this site; each kind is logged once. One bit a kind, not the
    /// problem's text, so that a policy whose bad value changes on every
    /// call costs neither memory nor a search.
    pub(crate) fn first_time(&self, kind: u32) -> bool {
        let bit = 1u32 << (kind % 32);
        self.warned_once.fetch_or(bit, Ordering::Relaxed) & bit == 0
    }
}

/// The warning for a function whose default name another function has.
#[cold]
fn named_alike(function: &'static str) {
    tracing::warn!(
        target: "reattempt",
        function,
        "two retried functions have this name (a function is named by its module and its own \
         name, not its type's): their logs and statistics mix; give each `name = \"...\"`",
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_alert_fires_once_per_streak_and_rearms_after_a_success() {
        static SITE: Site = Site::new("stats::alerts");
        let busy = Classification::transient().with_code("503");
        let other = Classification::transient().with_code("502");
        assert!(SITE.failure_streak(&busy, 3).is_none());
        assert!(SITE.failure_streak(&busy, 3).is_none());
        let alert = SITE.failure_streak(&busy, 3).expect("the third in a row");
        assert_eq!((alert.count, alert.code.as_deref()), (3, Some("503")));
        assert!(SITE.failure_streak(&busy, 3).is_none(), "once per streak");
        assert!(
            SITE.failure_streak(&other, 3).is_none(),
            "a different failure starts over"
        );
        SITE.success_streak();
        for _ in 0..2 {
            assert!(SITE.failure_streak(&busy, 3).is_none());
        }
        assert!(
            SITE.failure_streak(&busy, 3).is_some(),
            "re-armed by the success"
        );
        assert_eq!(crate::stats::Stats::of(&SITE).alerts, 2);
    }

    #[test]
    fn a_success_rearms_the_alert_whatever_failure_ran_beside_it() {
        // A failure and a success at once, in either order; then, alone, a
        // success and one failure: one in a row, never an alert of two.
        static SITE: Site = Site::new("stats::alerts_beside");
        let busy = Classification::transient().with_code("503");
        let rounds = 20_000;
        let start = std::sync::Barrier::new(2);
        let done = std::sync::Barrier::new(2);
        // Counted, not asserted, in the loop: a panic there would leave the
        // other thread waiting at its barrier for ever.
        let mut false_alerts = 0;
        std::thread::scope(|scope| {
            scope.spawn(|| {
                for _ in 0..rounds {
                    start.wait();
                    SITE.success_streak();
                    done.wait();
                }
            });
            for _ in 0..rounds {
                start.wait();
                let _ = SITE.failure_streak(&busy, 2);
                done.wait();
                SITE.success_streak();
                if SITE.failure_streak(&busy, 2).is_some() {
                    false_alerts += 1;
                }
                SITE.success_streak();
            }
        });
        assert_eq!(false_alerts, 0, "alerts for one failure after a success");
    }
}
