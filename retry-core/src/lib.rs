//! The run-time core of [`reattempt`](https://docs.rs/reattempt): error
//! classification, backoff and jitter math, and the attempt state machine
//! that the `#[retry]` attribute drives.
//!
//! Users depend on the `reattempt` crate, which re-exports everything here.
//!
//! - [`Class`], [`Classification`], [`Classify`], [`Classified`]: which
//!   errors are worth retrying. Built-in tables: [`std::io::Error`] and
//!   [HTTP statuses](http) with `Retry-After`.
//! - [`backoff`] and [`jitter`]: pure, overflow-free delay math.
//! - [`Policy`]: what a function's arguments make.
//! - [`hooks`], [`attempt()`], [`testing`]: what hooks see, what the body
//!   sees, and instant waits for tests.
//!
//! The root shows what the facade shows. The attempt state machine that
//! the expansion drives, its futures and its clocks are named by the
//! expansion only, under a hidden module.

#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]
#![deny(unused_qualifications)]

pub mod backoff;
mod breaker;
mod budget;
mod calendar;
mod call;
mod call_id;
mod call_policy;
mod class;
mod classify;
mod clock;
mod current;
pub mod dead_letter;
#[cfg(feature = "tokio")]
mod default_timer;
pub mod dynamic;
mod export;
mod fallback;
mod fields;
#[cfg(feature = "redis-fleet")]
pub mod fleet;
mod give_up;
mod hedge;
pub mod hooks;
pub mod jitter;
mod limit;
mod limited;
mod log;
mod outcome;
mod policy;
mod preset;
mod read_outcome;
mod rng;
mod scoped;
mod site;
mod spans;
pub mod stats;
pub mod testing;
#[cfg(feature = "tokio")]
mod thread_timer;
mod throttle;
mod timeout;
mod twin;
#[cfg(feature = "tokio")]
mod wait;
mod window;

/// What the `reqwest` feature adds beyond the classification of
/// `reqwest::Error` and `reqwest::Response`.
#[cfg(feature = "reqwest")]
pub mod reqwest {
    pub use crate::classify::clients::reqwest::{ErrorForStatus, IdempotencyKey};
}

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use breaker::{BreakerOpen, RetryBreaker};
pub use budget::RetryBudget;
pub use call_id::CallId;
pub use class::{Applied, Class, Classification, Code, CodeKind, CodeTooLong};
pub use classify::{
    ByType, Classified, ClassifiedValue, Classify, IntoClassification, classify_chain,
};
pub use classify::{grpc, http, mysql, postgres, redis};
pub use current::{Attempt, attempt};
pub use give_up::GiveUp;
pub use limit::ConcurrencyLimit;
pub use outcome::{Fallible, FromBreakerOpen, FromThrottled, FromTimeout, NoError, Outcome};
pub use policy::{
    DEFAULT_ALERT_AFTER, DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_RETRY_AFTER, Idempotent, Nested, Policy,
};
pub use site::Alert;
pub use throttle::{AdaptiveThrottle, InvalidThrottle, ThrottleAt, Throttled};
pub use timeout::AttemptTimeout;
