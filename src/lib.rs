#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![deny(unused_qualifications)]

/// Retries the function's body on transient errors; see the
/// [crate documentation](crate) for the arguments.
///
/// ```
/// use reattempt::retry;
///
/// #[derive(Debug)]
/// enum Error {
///     Busy,
///     Invalid,
/// }
///
/// #[retry(on = matches(Error::Busy), max = 4, backoff = none)]
/// fn reserve(calls: &mut u32) -> Result<u32, Error> {
///     *calls += 1;
///     if *calls < 3 { Err(Error::Busy) } else { Ok(*calls) }
/// }
///
/// let mut calls = 0;
/// assert_eq!(reserve(&mut calls).unwrap(), 3);
/// ```
///
/// Misuse is a compile error on the argument at fault:
///
/// ```compile_fail
/// # use reattempt::retry;
/// #[retry(max = 0)] // `max` counts attempts, the first call included, so it is at least 1
/// fn f() -> std::io::Result<()> { Ok(()) }
/// ```
///
/// ```compile_fail
/// # use reattempt::retry;
/// #[retry] // `#[retry]` cannot go on a `const fn`: retrying loops and waits at run time
/// const fn f() -> Result<(), ()> { Ok(()) }
/// ```
///
/// ```compile_fail
/// # use reattempt::retry;
/// #[retry(attempt_timeout = 1s)] // works on async functions only
/// fn f() -> std::io::Result<()> { Ok(()) }
/// ```
pub use reattempt_macros::retry;

/// Classifies an error type by its variants, for `#[retry]` to use with no
/// `on = ..`: a variant that wraps an error with a classification of its
/// own (a client's error, `std::io::Error`, another derived type, a boxed
/// error) delegates to it, and any other takes a class. The guide's
/// [classification](crate::_guide::classification#your-own-error-type)
/// chapter has every attribute.
///
/// ```
/// use reattempt::{Class, Classified, retry};
///
/// #[derive(Debug, Classified)]
/// enum AppError {
///     Io(std::io::Error),
///     #[classify(validation, code = "parse")]
///     Parse(String),
///     #[classify(transient, not_applied)]
///     Busy,
/// }
///
/// let refused = AppError::Io(std::io::ErrorKind::ConnectionRefused.into());
/// assert_eq!(refused.classification().class(), Class::Transient);
/// let bad = AppError::Parse("x".into()).classification();
/// assert_eq!((bad.class(), bad.code()), (Class::Validation, Some("parse")));
///
/// #[retry(max = 3, backoff = none)]
/// fn parse(text: &str) -> Result<u64, AppError> {
///     text.parse().map_err(|_| AppError::Parse(text.to_owned()))
/// }
/// assert!(matches!(parse("x"), Err(AppError::Parse(_))));
/// ```
pub use reattempt_macros::Classified;

// What users write and read. The attempt state machine, its futures and
// its clocks are named only by the expansion, under `__private`.
pub use reattempt_core::{
    AdaptiveThrottle, Alert, Applied, Attempt, AttemptTimeout, BreakerOpen, ByType, CallId, Class,
    Classification, Classified, ClassifiedValue, Classify, Code, CodeKind, CodeTooLong,
    ConcurrencyLimit, DEFAULT_ALERT_AFTER, DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_RETRY_AFTER, Fallible,
    FromBreakerOpen, FromThrottled, FromTimeout, GiveUp, Idempotent, IntoClassification,
    InvalidThrottle, Nested, NoError, Outcome, Policy, RetryBreaker, RetryBudget, ThrottleAt,
    Throttled, attempt, backoff, classify_chain, dead_letter, dynamic, grpc, hooks, http, jitter,
    mysql, postgres, redis, stats, testing,
};

#[cfg(feature = "reqwest")]
pub use reattempt_core::reqwest;

#[cfg(feature = "redis-fleet")]
pub use reattempt_core::fleet;

pub mod _guide;

#[doc(hidden)]
pub mod __private {
    pub use reattempt_core::__private::*;
}
