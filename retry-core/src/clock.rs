//! Where a call reads the time: the system's monotonic clock, or tokio's,
//! which tests can pause and advance.

use core::fmt;
use core::time::Duration;

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

/// The system's monotonic clock: the clock of sync functions.
///
/// It measures what `std::time::Instant` measures. On Linux and Android it
/// reads `CLOCK_MONOTONIC`, the clock behind `Instant` there, itself, as a
/// count of nanoseconds: a retried call reads the clock twice, for the
/// time `reattempt::stats` reports, and two counts are read and subtracted
/// in fewer instructions than two `Instant`s (BENCHMARKS.md: the sync
/// one-retry row). Elsewhere a reading is an `Instant`.
///
/// ```
/// use reattempt_core::{Clock, SystemClock};
/// use std::time::{Duration, Instant};
///
/// let before = Instant::now();
/// let start = SystemClock.now();
/// std::thread::sleep(Duration::from_millis(5));
/// let measured = SystemClock.since(start);
/// assert!(measured >= Duration::from_millis(5));
/// assert!(measured <= before.elapsed());
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

/// A reading of [`SystemClock`]: later readings compare greater.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SystemReading(Monotonic);

#[cfg(any(target_os = "linux", target_os = "android"))]
type Monotonic = u64;

#[cfg(not(any(target_os = "linux", target_os = "android")))]
type Monotonic = std::time::Instant;

impl Clock for SystemClock {
    type Reading = SystemReading;

    #[inline]
    fn now(&self) -> SystemReading {
        SystemReading(monotonic())
    }

    #[inline]
    fn since(&self, earlier: SystemReading) -> Duration {
        elapsed(earlier.0, monotonic())
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[inline]
    fn nanos_since(&self, earlier: SystemReading) -> u64 {
        monotonic().saturating_sub(earlier.0)
    }
}

/// Nanoseconds of `CLOCK_MONOTONIC`, which cannot fail for a valid clock
/// and pointer; were it to, the reading would be zero: a duration measured
/// from or to it would be wrong, but nothing panics or reads memory that
/// was never written.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[inline]
fn monotonic() -> u64 {
    // SAFETY: a `timespec` is two integers, for which zero is valid.
    let mut now: libc::timespec = unsafe { core::mem::zeroed() };
    // SAFETY: `now` is a valid, writable `timespec`.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    nanos(&now)
}

/// The monotonic clock counts from boot: neither field is negative, and
/// the count overflows after 584 years.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[inline]
fn nanos(time: &libc::timespec) -> u64 {
    (time.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(time.tv_nsec as u64)
}

#[cfg(any(target_os = "linux", target_os = "android"))]
#[inline]
fn elapsed(earlier: u64, now: u64) -> Duration {
    Duration::from_nanos(now.saturating_sub(earlier))
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
#[inline]
fn monotonic() -> std::time::Instant {
    std::time::Instant::now()
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
#[inline]
fn elapsed(earlier: std::time::Instant, now: std::time::Instant) -> Duration {
    now.saturating_duration_since(earlier)
}

/// `tokio::time::Instant::now()`: the clock of async functions, so that a
/// paused test clock governs deadlines too.
#[cfg(feature = "tokio")]
#[derive(Clone, Copy, Debug, Default)]
pub struct TokioClock;

#[cfg(feature = "tokio")]
impl Clock for TokioClock {
    type Reading = std::time::Instant;

    #[inline]
    fn now(&self) -> std::time::Instant {
        tokio::time::Instant::now().into_std()
    }

    #[inline]
    fn since(&self, earlier: std::time::Instant) -> Duration {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

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

    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn nanoseconds_since_a_later_reading_are_zero() {
        let later = SystemReading(SystemClock.now().0 + 60_000_000_000);
        assert_eq!(SystemClock.nanos_since(later), 0);
        assert_eq!(SystemClock.since(later), Duration::ZERO);
    }

    #[test]
    fn a_reading_measured_from_a_later_one_is_zero() {
        let earlier = SystemClock.now();
        std::thread::sleep(Duration::from_millis(1));
        let later = SystemClock.now();
        assert!(later > earlier);
        assert_eq!(elapsed(later.0, earlier.0), Duration::ZERO);
        assert!(elapsed(earlier.0, later.0) >= Duration::from_millis(1));
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn a_reading_counts_the_seconds_and_nanoseconds_of_the_clock() {
        // SAFETY: a `timespec` is two integers, for which zero is valid.
        let mut time: libc::timespec = unsafe { core::mem::zeroed() };
        time.tv_sec = 7;
        time.tv_nsec = 999_999_999;
        assert_eq!(nanos(&time), 7_999_999_999);
        time.tv_sec = 8;
        time.tv_nsec = 0;
        assert_eq!(
            elapsed(7_999_999_999, nanos(&time)),
            Duration::from_nanos(1)
        );
    }
}
