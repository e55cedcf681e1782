//! Where a call reads the time: the system's monotonic clock, or tokio's,
//! which tests can pause and advance.

use core::fmt;
use core::time::Duration;
use std::time::Instant;

/// A monotonic clock.
pub trait Clock {
    /// A reading of this clock, from which [`Clock::since`] measures.
    type Reading: Copy + fmt::Debug;

    /// The current reading.
    fn now(&self) -> Self::Reading;

    /// The time from `earlier`, a reading of this clock, to now: zero if
    /// `earlier` is later.
    fn since(&self, earlier: Self::Reading) -> Duration;

    /// [`since`](Clock::since) in whole nanoseconds, at most `u64::MAX`
    /// (584 years): what the statistics add up. A clock that counts
    /// nanoseconds gives it without making a `Duration`, whose division
    /// into seconds the statistics would only undo.
    #[inline]
    fn nanos_since(&self, earlier: Self::Reading) -> u64 {
        saturating_nanos(self.since(earlier))
    }
}

/// `duration` in whole nanoseconds, at most `u64::MAX`.
#[inline]
pub(crate) fn saturating_nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

/// The system's monotonic clock, `Instant`: the clock of sync
/// functions.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

/// A reading of [`SystemClock`]: later readings compare greater.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SystemReading(Instant);

impl Clock for SystemClock {
    type Reading = SystemReading;

    #[inline]
    fn now(&self) -> SystemReading {
        SystemReading(Instant::now())
    }

    #[inline]
    fn since(&self, earlier: SystemReading) -> Duration {
        Instant::now().saturating_duration_since(earlier.0)
    }
}

/// `tokio::time::Instant::now()`: the clock of async functions, so that a
/// paused test clock governs deadlines too.
#[cfg(feature = "tokio")]
#[derive(Clone, Copy, Debug, Default)]
pub struct TokioClock;

#[cfg(feature = "tokio")]
impl Clock for TokioClock {
    type Reading = Instant;

    #[inline]
    fn now(&self) -> Instant {
        tokio::time::Instant::now().into_std()
    }

    #[inline]
    fn since(&self, earlier: Instant) -> Duration {
        self.now().saturating_duration_since(earlier)
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    type Reading = C::Reading;

    #[inline]
    fn now(&self) -> C::Reading {
        (**self).now()
    }

    #[inline]
    fn since(&self, earlier: C::Reading) -> Duration {
        (**self).since(earlier)
    }

    #[inline]
    fn nanos_since(&self, earlier: C::Reading) -> u64 {
        (**self).nanos_since(earlier)
    }
}

/// The default sleep of sync functions.
#[inline]
pub fn thread_sleep(delay: Duration) {
    if !delay.is_zero() {
        std::thread::sleep(delay);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_system_clock_measures_what_instant_measures() {
        for pause in [0, 1, 3] {
            // Read in this order, from the one clock, the inner span is at
            // most what was measured, and that at most the outer span.
            let outer = Instant::now();
            let start = SystemClock.now();
            let inner = Instant::now();
            std::thread::sleep(Duration::from_millis(pause));
            let inner = inner.elapsed();
            let measured = SystemClock.since(start);
            let outer = outer.elapsed();
            assert!(inner >= Duration::from_millis(pause));
            assert!(inner <= measured, "{inner:?} > {measured:?}");
            assert!(measured <= outer, "{measured:?} > {outer:?}");
        }
    }

    #[test]
    fn nanoseconds_since_a_reading_are_what_since_measures() {
        for pause in [0, 2] {
            let start = SystemClock.now();
            std::thread::sleep(Duration::from_millis(pause));
            let before = SystemClock.since(start);
            let nanos = SystemClock.nanos_since(start);
            let after = SystemClock.since(start);
            assert!(saturating_nanos(before) <= nanos, "{before:?} > {nanos} ns");
            assert!(nanos <= saturating_nanos(after), "{nanos} ns > {after:?}");
            assert!(nanos >= pause * 1_000_000);
        }
        assert_eq!(saturating_nanos(Duration::MAX), u64::MAX);
    }

    #[test]
    fn time_since_a_later_reading_is_zero() {
        let later = SystemReading(Instant::now() + Duration::from_secs(60));
        assert_eq!(SystemClock.nanos_since(later), 0);
        assert_eq!(SystemClock.since(later), Duration::ZERO);
    }
}
