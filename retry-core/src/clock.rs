//! Where a call reads the time: the system's monotonic clock, or tokio's,
//! which tests can pause and advance.

use std::time::Instant;

/// A monotonic clock.
pub trait Clock {
    /// The current instant.
    fn now(&self) -> Instant;
}

/// `std::time::Instant::now()`: the clock of sync functions.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// `tokio::time::Instant::now()`: the clock of async functions, so that a
/// paused test clock governs deadlines too.
#[cfg(feature = "tokio")]
#[derive(Clone, Copy, Debug, Default)]
pub struct TokioClock;

#[cfg(feature = "tokio")]
impl Clock for TokioClock {
    fn now(&self) -> Instant {
        tokio::time::Instant::now().into_std()
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now(&self) -> Instant {
        (**self).now()
    }
}
