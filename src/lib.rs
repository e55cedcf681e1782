//! A `#[retry(...)]` attribute for sync and async functions.
//!
//! The body is retried when it fails with a *transient* error (a dropped
//! connection, a timeout, a 503), waiting between attempts with exponential
//! backoff and optional jitter; any other error, or success, is returned at
//! once. The function keeps its exact signature, and the caller gets the
//! last attempt's result with its own error type.
//!
//! ```
//! use retry::retry;
//! use std::io;
//!
//! #[retry(max = 3, backoff = fixed(10ms))]
//! fn read_config(path: &str) -> io::Result<String> {
//!     std::fs::read_to_string(path)
//! }
//!
//! // NotFound is not transient: one attempt, the error comes back as is.
//! let error = read_config("/no/such/file").unwrap_err();
//! assert_eq!(error.kind(), io::ErrorKind::NotFound);
//! ```
//!
//! # Arguments
//!
//! All are optional; each may appear once.
//!
//! | argument | meaning | default |
//! |---|---|---|
//! | `on = EXPR` | classifier: a closure or function `Fn(&E) -> bool` (true = transient), `Fn(&E) -> Class` or `-> Classification`, or a value implementing [`Classify<E>`] | the error type's [`Classified`] impl |
//! | `on = matches(PAT)` | errors matching the pattern are transient, the rest logical | |
//! | `on = transient` | the error type's own classification, spelled out | |
//! | `max = N` | most times the body runs, the first call included; `max = 1` means no retry | 5 |
//! | `max = unbounded` | no count limit; only with `deadline` | |
//! | `backoff = exp` / `exp(base = 1s, factor = 2, max = 30s)` | exponential delays, each part optional | `exp` |
//! | `backoff = fixed(DUR)` | the same delay every time | |
//! | `backoff = linear(base = DUR, step = DUR, max = DUR)` | growing by `step` (default: `base`) | |
//! | `backoff = fibonacci(base = DUR, max = DUR)` | growing as the Fibonacci numbers | |
//! | `backoff = none` | no wait | |
//! | `backoff = EXPR` | a [`Backoff`](backoff::Backoff) value or a closure `Fn(u32) -> Duration` | |
//! | `jitter` | adds a uniform random `0..=delay/4` | no jitter |
//! | `jitter = none / proportional(R) / full / equal / decorrelated` | see [`Jitter`](jitter::Jitter) | |
//! | `deadline = DUR` | total budget, waits included: no attempt starts and no wait begins that would end at or past it | none |
//! | `clone(arg, ...)` | by-value arguments the body consumes: each attempt gets a clone | |
//! | `name = "..."` | label in logs | `module_path!()::fn_name` |
//! | `sleep = EXPR` | custom sleep: `Fn(Duration)` on a sync function, `Fn(Duration) -> impl Future<Output = ()>` on an async one | `std::thread::sleep` / `tokio::time::sleep` |
//! | `crate = PATH` | path of this crate when it is renamed | `::retry` |
//!
//! Durations are `250ms`, `2s`, `1.5s`, `1m`, `1h` (also `us`, `ns`), or a
//! parenthesised `Duration` expression, evaluated on every call.
//!
//! # How the body runs
//!
//! Each attempt runs the body as an immediately-called closure (sync) or an
//! immediately-awaited `async` block, so `return` and `?` end the attempt,
//! not the call, and the error they produce is classified like any other.
//! Arguments are borrowed by each attempt; `&mut` arguments are reborrowed.
//! A by-value argument that the body consumes cannot be handed to a second
//! attempt: the compiler reports "value moved here, in previous iteration
//! of loop", and `clone(arg)` (or taking it by reference) is the fix.
//!
//! A function returning a borrow from a `&mut` argument
//! (`fn get(&mut self) -> Result<&T, E>`) cannot be retried: the borrow of
//! one attempt would outlive it.
//!
//! # Logs
//!
//! Every failure is a `tracing` event with target `retry`: WARN for an
//! attempt that will be retried, ERROR when the call gives up (with the
//! reason), INFO when a call succeeds after retries. The fields are listed
//! in the crate README; the function's arguments never appear.
//!
//! # Features
//!
//! - `tokio` (default): async functions sleep with `tokio::time::sleep` and
//!   read tokio's clock. Without it, async functions need `sleep = ...`.
//! - `http`: [`Classified`] for `http::StatusCode` and
//!   [`http::classify_response`] reading `Retry-After` from a `HeaderMap`.
//!
//! # Misuse is a compile error
//!
//! ```compile_fail
//! # use retry::retry;
//! #[retry(max = 0)] // `max` counts attempts, the first call included, so it is at least 1
//! fn f() -> std::io::Result<()> { Ok(()) }
//! ```
//!
//! ```compile_fail
//! # use retry::retry;
//! #[retry] // `retry` cannot go on a `const fn`
//! const fn f() -> Result<(), ()> { Ok(()) }
//! ```

#![deny(missing_docs)]
#![deny(unused_qualifications)]

/// Retries the function's body on transient errors; see the
/// [crate documentation](crate) for the arguments.
///
/// ```
/// use retry::retry;
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
pub use retry_macros::retry;

pub use retry_core::{
    Attempt, AttemptTimeout, ByType, Call, CallId, Class, Classification, Classified, Classify,
    Clock, Code, DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_RETRY_AFTER, Decision, Fallible, FromTimeout,
    GiveUp, IntoClassification, NoError, Outcome, Policy, Scoped, SystemClock, attempt, backoff,
    hooks, http, jitter, testing,
};

#[cfg(feature = "tokio")]
pub use retry_core::TokioClock;

#[doc(hidden)]
pub mod __private {
    pub use retry_core::__private::*;
}
