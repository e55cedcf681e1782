//! Why a dynamic policy is refused, in the words its WARN and
//! [`DynamicPolicy::check`](super::DynamicPolicy::check) use, and why
//! text was not read as one.

use core::fmt;
use core::time::Duration;

use crate::throttle::InvalidThrottle;

/// The most attempts a dynamic policy may allow without a deadline. Values
/// read at run time come from configuration, where a stray digit is easy:
/// past this, a call that keeps failing would run for hours (days, with no
/// backoff), so such a policy needs a deadline to bound it.
pub const MAX_ATTEMPTS_WITHOUT_DEADLINE: u32 = 1_000;

/// Why a dynamic policy was not used.
///
/// ```
/// use reattempt::dynamic::{DynamicPolicy, InvalidPolicy};
///
/// let zero = DynamicPolicy::new().max_attempts(0).check();
/// assert_eq!(zero.unwrap_err(), InvalidPolicy::ZeroAttempts);
/// assert_eq!(zero.unwrap_err().to_string(), "max_attempts is 0; it counts attempts, the first included");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum InvalidPolicy {
    /// `max_attempts` is 0.
    ZeroAttempts,
    /// An exponential factor below 1, infinite or not a number.
    Factor(f64),
    /// A cap below the first delay.
    CapBelowBase {
        /// The first delay.
        base: Duration,
        /// The cap.
        max: Duration,
    },
    /// A proportional jitter ratio outside `0..=1`.
    JitterRatio(f64),
    /// A zero `deadline`, `attempt_timeout` or `max_retry_after`.
    Zero(&'static str),
    /// More than [`MAX_ATTEMPTS_WITHOUT_DEADLINE`] attempts and no deadline.
    TooManyAttemptsWithoutDeadline(u32),
    /// A `hedge` percentile outside 50 to 99.
    Percentile(u8),
    /// A `throttle_k` below 1 or a zero `throttle_window`.
    Throttle(InvalidThrottle),
}

impl fmt::Display for InvalidPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InvalidPolicy::ZeroAttempts => {
                f.write_str("max_attempts is 0; it counts attempts, the first included")
            }
            InvalidPolicy::Factor(factor) => {
                write!(
                    f,
                    "the exponential factor {factor} is not a number of at least 1"
                )
            }
            InvalidPolicy::CapBelowBase { base, max } => {
                write!(
                    f,
                    "the backoff cap {max:?} is below its first delay {base:?}"
                )
            }
            InvalidPolicy::JitterRatio(ratio) => {
                write!(f, "the proportional jitter ratio {ratio} is outside 0..=1")
            }
            InvalidPolicy::Zero(what) => write!(f, "{what} is zero"),
            InvalidPolicy::TooManyAttemptsWithoutDeadline(attempts) => write!(
                f,
                "max_attempts {attempts} without a deadline: more than {MAX_ATTEMPTS_WITHOUT_DEADLINE} attempts need one"
            ),
            InvalidPolicy::Percentile(percentile) => write!(
                f,
                "the hedge percentile p{percentile} is outside p50 to p99"
            ),
            InvalidPolicy::Throttle(invalid) => invalid.fmt(f),
        }
    }
}

impl std::error::Error for InvalidPolicy {}

impl InvalidPolicy {
    /// A number per variant, so that each kind of problem is logged once.
    pub(crate) fn kind(&self) -> u32 {
        match self {
            InvalidPolicy::ZeroAttempts => 0,
            InvalidPolicy::Factor(_) => 1,
            InvalidPolicy::CapBelowBase { .. } => 2,
            InvalidPolicy::JitterRatio(_) => 3,
            InvalidPolicy::Zero(_) => 4,
            InvalidPolicy::TooManyAttemptsWithoutDeadline(_) => 6,
            InvalidPolicy::Percentile(_) => 5,
            // After the kinds of `call_policy` and the log.
            InvalidPolicy::Throttle(_) => 10,
        }
    }
}

/// Why a policy written as text was not read: text that does not parse,
/// or a policy that parses and fails [`DynamicPolicy::check`](super::DynamicPolicy::check).
///
/// ```
/// use reattempt::dynamic::{DynamicPolicy, ParsePolicyError};
///
/// let typo = "max = 3, backof = exp".parse::<DynamicPolicy>().unwrap_err();
/// assert!(typo.to_string().starts_with("unknown setting `backof`"));
/// let zero = "max = 0".parse::<DynamicPolicy>().unwrap_err();
/// assert!(matches!(zero, ParsePolicyError::Invalid(_)));
/// assert_eq!(zero.to_string(), "max_attempts is 0; it counts attempts, the first included");
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ParsePolicyError {
    /// The text does not parse; the message says where and what is allowed.
    Syntax(String),
    /// The policy parses, and is refused for this reason.
    Invalid(InvalidPolicy),
}

impl fmt::Display for ParsePolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParsePolicyError::Syntax(message) => f.write_str(message),
            ParsePolicyError::Invalid(problem) => problem.fmt(f),
        }
    }
}

impl std::error::Error for ParsePolicyError {}

impl From<InvalidPolicy> for ParsePolicyError {
    fn from(problem: InvalidPolicy) -> ParsePolicyError {
        ParsePolicyError::Invalid(problem)
    }
}

/// A message of text that does not parse.
pub(super) fn syntax(message: impl Into<String>) -> ParsePolicyError {
    ParsePolicyError::Syntax(message.into())
}
