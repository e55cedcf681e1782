//! Why a call gave up: the reason every log event, statistic, hook and
//! dead-letter record of a failed call names.

use core::fmt;

/// Why a call stopped retrying and returned its last error.
///
/// ```
/// use reattempt::{GiveUp, retry};
///
/// #[retry(
///     max = 2,
///     backoff = none,
///     on_give_up = |ctx| assert_eq!(ctx.gave_up(), Some(GiveUp::Exhausted)),
/// )]
/// fn poll_queue() -> std::io::Result<()> {
///     Err(std::io::ErrorKind::TimedOut.into())
/// }
///
/// poll_queue().unwrap_err();
/// assert_eq!(GiveUp::Exhausted.as_str(), "exhausted");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GiveUp {
    /// Every attempt `max` allowed has been made.
    Exhausted,
    /// The next wait would end past the deadline.
    Deadline,
    /// The error is logical: it will not pass by retrying.
    Permanent,
    /// The error says the caller's input is wrong.
    Validation,
    /// The server asked for a delay longer than `max_retry_after`.
    RetryAfterTooLong,
    /// The retry budget had no token left.
    Budget,
    /// Inside another retried call, under `nested = single`.
    Nested,
    /// The attempt may have taken effect, and the operation must not
    /// happen twice (`idempotent = false`): a person should check.
    MaybeApplied,
    /// The retry breaker is open: most attempts fail. Under `breaker =
    /// classic(..)` the call may end so before its first attempt.
    Breaker,
    /// The adaptive throttle rejected the attempt locally: the backend is
    /// overloaded. A first attempt rejected so never ran.
    Throttled,
}

impl GiveUp {
    /// The reason as it appears in logs.
    pub const fn as_str(self) -> &'static str {
        match self {
            GiveUp::Exhausted => "exhausted",
            GiveUp::Deadline => "deadline",
            GiveUp::Permanent => "permanent",
            GiveUp::Validation => "validation",
            GiveUp::RetryAfterTooLong => "retry_after_too_long",
            GiveUp::Budget => "budget",
            GiveUp::Nested => "nested",
            GiveUp::MaybeApplied => "maybe_applied",
            GiveUp::Breaker => "breaker",
            GiveUp::Throttled => "throttled",
        }
    }

    /// Every reason.
    pub const ALL: [GiveUp; 10] = [
        GiveUp::Exhausted,
        GiveUp::Deadline,
        GiveUp::Permanent,
        GiveUp::Validation,
        GiveUp::RetryAfterTooLong,
        GiveUp::Budget,
        GiveUp::Nested,
        GiveUp::MaybeApplied,
        GiveUp::Breaker,
        GiveUp::Throttled,
    ];

    /// The reason's place in [`GiveUp::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for GiveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
