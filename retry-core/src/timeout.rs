//! The error of an attempt that ran past `attempt_timeout`.

use core::fmt;
use core::time::Duration;

/// An attempt was still running when its time ran out, and was dropped; or
/// it was still waiting for its permit of a concurrency limit at the
/// deadline, and never ran.
///
/// `attempt_timeout` needs the function's error type to implement
/// `From<AttemptTimeout>`; `std::io::Error` does (kind `TimedOut`).
///
/// ```
/// use reattempt::AttemptTimeout;
/// use std::time::Duration;
///
/// let timeout = AttemptTimeout::new(Duration::from_millis(250));
/// assert_eq!(timeout.to_string(), "attempt timed out after 250ms");
/// let io: std::io::Error = timeout.into();
/// assert_eq!(io.kind(), std::io::ErrorKind::TimedOut);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttemptTimeout {
    limit: Duration,
}

impl AttemptTimeout {
    /// The timeout of an attempt that was given `limit`.
    pub const fn new(limit: Duration) -> AttemptTimeout {
        AttemptTimeout { limit }
    }

    /// How long the attempt was given: `attempt_timeout`, or less when the
    /// deadline was nearer; for an attempt that was still waiting for its
    /// permit of a concurrency limit at the deadline, the time that was left
    /// before the deadline when it began to wait.
    pub const fn limit(&self) -> Duration {
        self.limit
    }
}

impl fmt::Display for AttemptTimeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "attempt timed out after {:?}", self.limit)
    }
}

impl std::error::Error for AttemptTimeout {}

impl From<AttemptTimeout> for std::io::Error {
    fn from(timeout: AttemptTimeout) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::TimedOut, timeout)
    }
}
