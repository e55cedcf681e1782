use core::time::Duration;

use super::Backoff;

/// The same delay before every retry: `backoff = fixed(200ms)`.
///
/// ```
/// use reattempt::backoff::{Backoff, Fixed};
/// use std::time::Duration;
///
/// let fixed = Fixed::new(Duration::from_millis(200));
/// assert_eq!(fixed.delay(1), fixed.delay(1_000));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fixed {
    delay: Duration,
}

impl Fixed {
    /// A curve that always waits `delay`.
    pub const fn new(delay: Duration) -> Fixed {
        Fixed { delay }
    }
}

impl Backoff for Fixed {
    fn delay(&self, _retry: u32) -> Duration {
        self.delay
    }

    fn max_delay(&self) -> Duration {
        self.delay
    }
}

/// No wait between attempts: `backoff = none`.
///
/// ```
/// use reattempt::backoff::{Backoff, NoBackoff};
/// use std::time::Duration;
///
/// assert_eq!(NoBackoff.delay(1), Duration::ZERO);
/// assert_eq!(NoBackoff.delay(u32::MAX), Duration::ZERO);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoBackoff;

impl Backoff for NoBackoff {
    fn delay(&self, _retry: u32) -> Duration {
        Duration::ZERO
    }

    fn max_delay(&self) -> Duration {
        Duration::ZERO
    }
}
