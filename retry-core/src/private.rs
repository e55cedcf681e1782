//! What the `#[retry]` expansion names, and nothing else may rely on.
//!
//! Not public API: it changes without notice between versions.

use core::fmt;
use core::future::Future;
use core::time::Duration;

pub use crate::attempt::{Call, Step};
pub use crate::backoff::{Exponential, Fibonacci, Fixed, Linear, NoBackoff};
pub use crate::class::Classification;
pub use crate::classify::{Classified, Classify, IntoClassification};
pub use crate::clock::SystemClock;
#[cfg(feature = "tokio")]
pub use crate::clock::TokioClock;
pub use crate::jitter::Jitter;
pub use crate::policy::Policy;

/// The classification of a classifier closure's return value.
#[inline]
pub fn into_class<R: IntoClassification>(value: R) -> Classification {
    value.into_classification()
}

/// Calls a classifier closure, giving it its argument type.
#[inline]
pub fn classify_with<E: ?Sized, R: IntoClassification>(
    error: &E,
    classify: impl FnOnce(&E) -> R,
) -> Classification {
    classify(error).into_classification()
}

/// The error type's own classification, for functions without `on`.
#[inline]
pub fn classify_by_type<E: Classified + ?Sized>(error: &E) -> Classification {
    error.classification()
}

/// Pins an attempt's async block to the function's output type, so that
/// `?` inside it knows what to convert errors into.
#[inline(always)]
pub fn attempt<T, F: Future<Output = T>>(future: F) -> F {
    future
}

/// Gives a closure passed as `backoff = |n| ...` its argument type.
#[inline]
pub fn backoff_fn<F: Fn(u32) -> Duration>(f: F) -> F {
    f
}

/// Gives a closure passed as `sleep = ...` on a sync function its type.
#[inline]
pub fn sync_sleeper<F: Fn(Duration)>(f: F) -> F {
    f
}

/// Gives a closure passed as `sleep = ...` on an async function its type.
#[inline]
pub fn async_sleeper<F: Fn(Duration) -> S, S: Future<Output = ()>>(f: F) -> F {
    f
}

/// The default sleep of sync functions.
#[inline]
pub fn thread_sleep(delay: Duration) {
    std::thread::sleep(delay);
}

/// The default sleep of async functions.
#[cfg(feature = "tokio")]
#[inline]
pub fn tokio_sleep(delay: Duration) -> tokio::time::Sleep {
    tokio::time::sleep(delay)
}

/// Without the `tokio` feature an async function needs `sleep = ...`; this
/// type's name is the error message.
#[cfg(not(feature = "tokio"))]
#[derive(Debug)]
pub struct EnableTheTokioFeatureOrPassSleepToRetry;

/// Without the `tokio` feature an async function needs `sleep = ...`.
#[cfg(not(feature = "tokio"))]
pub fn tokio_sleep(_delay: Duration) -> EnableTheTokioFeatureOrPassSleepToRetry {
    EnableTheTokioFeatureOrPassSleepToRetry
}

/// The clock of async functions: tokio's when there is tokio.
#[cfg(feature = "tokio")]
pub type AsyncClock = TokioClock;

/// The clock of async functions: tokio's when there is tokio.
#[cfg(not(feature = "tokio"))]
pub type AsyncClock = SystemClock;

/// An error borrowed for the logs; [`DescribeDisplay`] and [`DescribeDebug`]
/// pick `Display` when the type has it and `Debug` otherwise.
///
/// The expansion calls `(&Describe(e)).__retry_describe(f)`. Method
/// resolution first looks for a method taking `&Describe<E>` as it is, which
/// the `Display` impl (on `Describe<E>`, by `&self`) provides when `E:
/// Display`; only then does it borrow again and find the `Debug` impl (on
/// `&Describe<E>`).
pub struct Describe<'e, E: ?Sized>(pub &'e E);

/// The `Display` arm of the error description.
pub trait DescribeDisplay {
    /// Writes the error with `Display`.
    fn __retry_describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
}

impl<E: fmt::Display + ?Sized> DescribeDisplay for Describe<'_, E> {
    #[inline]
    fn __retry_describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.0, f)
    }
}

/// The `Debug` arm of the error description.
pub trait DescribeDebug {
    /// Writes the error with `Debug`.
    fn __retry_describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
}

impl<E: fmt::Debug + ?Sized> DescribeDebug for &Describe<'_, E> {
    #[inline]
    fn __retry_describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.0, f)
    }
}

/// The clock of async functions.
#[inline]
pub fn async_clock() -> AsyncClock {
    AsyncClock::default()
}
