//! What a retried function returns, seen as a value or an error.

use core::fmt;

use crate::breaker::BreakerOpen;
use crate::class::Classification;
use crate::classify::Classified;
use crate::throttle::Throttled;
use crate::timeout::AttemptTimeout;

/// A return type `#[retry]` can look into: the value a call produced, or
/// its error.
///
/// `Result<T, E>` splits into `T` and `E`. With `if_result`, functions may
/// also return a plain value, which is all value and never an error:
/// `Option<T>`, `bool`, `Vec<T>`, `String` and the integer types are
/// outcomes, and any other type can be made one:
///
/// ```
/// use reattempt::{NoError, Outcome};
///
/// enum Job {
///     Ready(u32),
///     Pending,
/// }
///
/// impl Outcome for Job {
///     type Value = Job;
///     type Error = NoError;
///
///     fn split(&self) -> Result<&Job, &NoError> {
///         Ok(self)
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`#[retry]` cannot look into `{Self}`",
    label = "neither a `Result` nor a value type `#[retry]` knows",
    note = "implement `reattempt::Outcome` for `{Self}`, with `NoError` as its error type"
)]
pub trait Outcome {
    /// What a successful attempt produced.
    type Value: ?Sized;
    /// What a failed attempt produced.
    type Error;

    /// The value or the error.
    fn split(&self) -> Result<&Self::Value, &Self::Error>;
}

impl<T, E> Outcome for Result<T, E> {
    type Value = T;
    type Error = E;

    // Always: a function of its own would be optimised again for each
    // outcome type that the rest of a sync call reads.
    #[inline(always)]
    fn split(&self) -> Result<&T, &E> {
        self.as_ref()
    }
}

/// The error of outcomes that cannot fail, such as `Option<T>`: a
/// function returning one is retried on its values (`if_result`).
///
/// ```
/// use reattempt::{NoError, Outcome, retry};
///
/// // The whole value is the outcome; there is never an error.
/// let split: Result<&Option<u32>, &NoError> = Some(3).split();
/// assert_eq!(split, Ok(&Some(3)));
///
/// #[retry(max = 3, backoff = none, if_result = |job: &Option<u32>| job.is_none())]
/// fn next_job(queue: &mut Vec<u32>) -> Option<u32> {
///     queue.pop()
/// }
///
/// assert_eq!(next_job(&mut vec![7]), Some(7));
/// assert_eq!(next_job(&mut Vec::new()), None, "three tries, then the last value");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NoError {}

impl fmt::Display for NoError {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {}
    }
}

impl std::error::Error for NoError {}

#[diagnostic::do_not_recommend]
impl Classified for NoError {
    fn classification(&self) -> Classification {
        match *self {}
    }
}

macro_rules! plain_outcomes {
    ($(<$($param:ident),*> $ty:ty),* $(,)?) => {$(
        impl<$($param),*> Outcome for $ty {
            type Value = $ty;
            type Error = NoError;

            // Always, as `Result`'s.
            #[inline(always)]
            fn split(&self) -> Result<&$ty, &NoError> {
                Ok(self)
            }
        }
    )*};
}

plain_outcomes!(
    <T> Option<T>,
    <T> Vec<T>,
    <> bool,
    <> String,
    <> u8, <> u16, <> u32, <> u64, <> u128, <> usize,
    <> i8, <> i16, <> i32, <> i64, <> i128, <> isize,
);

/// A return type that carries errors: what `#[retry]` needs when there is
/// no `if_result` to judge values.
///
/// ```compile_fail
/// use reattempt::retry;
///
/// #[retry(max = 3)] // `#[retry]` needs a function that returns `Result<T, E>`, not `u32`
/// fn count() -> u32 {
///     3
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`#[retry]` needs a function that returns `Result<T, E>`, not `{Self}`",
    label = "this return type has no error to classify",
    note = "to retry on a returned value instead, add `if_result = |value| ...`: the body is retried while it returns true"
)]
pub trait Fallible: Outcome {}

impl<T, E> Fallible for Result<T, E> {}

/// A return type that can report an attempt that ran out of time: what
/// `attempt_timeout` needs. `Result<T, E>` is one where `E` has
/// `From<AttemptTimeout>`, as `std::io::Error` does.
///
/// ```
/// use reattempt::{AttemptTimeout, FromTimeout};
///
/// let timeout = AttemptTimeout::new(std::time::Duration::from_secs(2));
/// let timed_out = <std::io::Result<()> as FromTimeout>::from_timeout(timeout);
/// assert_eq!(timed_out.unwrap_err().kind(), std::io::ErrorKind::TimedOut);
/// ```
#[diagnostic::on_unimplemented(
    message = "`attempt_timeout` needs to return a timeout as `{Self}`",
    label = "no error of this type can stand for a timed-out attempt",
    note = "for an error type of your own crate, implement `From<reattempt::AttemptTimeout>` for it (`std::io::Error` has it)",
    note = "an error type of another crate (`reqwest::Error`, `sqlx::Error`, `redis::RedisError`) cannot be given that impl: drop `attempt_timeout` and bound the attempt with the client's own timeout (reqwest's `RequestBuilder::timeout`, PostgreSQL's `statement_timeout`, redis's response timeout)"
)]
pub trait FromTimeout: Outcome {
    /// The outcome of an attempt that timed out.
    fn from_timeout(timeout: AttemptTimeout) -> Self;
}

#[diagnostic::do_not_recommend]
impl<T, E: From<AttemptTimeout>> FromTimeout for Result<T, E> {
    fn from_timeout(timeout: AttemptTimeout) -> Self {
        Err(E::from(timeout))
    }
}

/// A return type that can report a call its breaker refused: what
/// `breaker = classic(..)` needs. `Result<T, E>` is one where `E` has
/// `From<BreakerOpen>`, as `std::io::Error` does.
///
/// ```
/// use reattempt::{BreakerOpen, FromBreakerOpen};
///
/// let refused = <std::io::Result<()> as FromBreakerOpen>::from_breaker_open(BreakerOpen::new());
/// assert!(refused.unwrap_err().to_string().contains("breaker"));
/// ```
#[diagnostic::on_unimplemented(
    message = "`breaker = classic(..)` needs to return a refused call as `{Self}`",
    label = "no error of this type can stand for a call the breaker refused",
    note = "for an error type of your own crate, implement `From<reattempt::BreakerOpen>` for it (`std::io::Error` has it)",
    note = "or write `breaker = STATIC`: first attempts then always go out, and only retries stop while it is open"
)]
pub trait FromBreakerOpen: Outcome {
    /// The outcome of a call the breaker refused.
    fn from_breaker_open(open: BreakerOpen) -> Self;
}

#[diagnostic::do_not_recommend]
impl<T, E: From<BreakerOpen>> FromBreakerOpen for Result<T, E> {
    fn from_breaker_open(open: BreakerOpen) -> Self {
        Err(E::from(open))
    }
}

/// A return type that can report a call its adaptive throttle rejected:
/// what `throttle = ..` needs. `Result<T, E>` is one where `E` has
/// `From<Throttled>`, as `std::io::Error` does.
///
/// ```
/// use reattempt::{FromThrottled, Throttled};
///
/// let rejected = <std::io::Result<()> as FromThrottled>::from_throttled(Throttled::new());
/// assert!(rejected.unwrap_err().to_string().contains("throttled"));
/// ```
#[diagnostic::on_unimplemented(
    message = "`throttle = ..` needs to return a rejected call as `{Self}`",
    label = "no error of this type can stand for a call the throttle rejected",
    note = "for an error type of your own crate, implement `From<reattempt::Throttled>` for it (`std::io::Error` has it)"
)]
pub trait FromThrottled: Outcome {
    /// The outcome of a call the throttle rejected.
    fn from_throttled(throttled: Throttled) -> Self;
}

#[diagnostic::do_not_recommend]
impl<T, E: From<Throttled>> FromThrottled for Result<T, E> {
    fn from_throttled(throttled: Throttled) -> Self {
        Err(E::from(throttled))
    }
}
