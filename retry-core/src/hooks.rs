//! What hooks see: `before`, `after`, `on_retry` and `on_give_up` are
//! called with a [`Context`].
//!
//! Hooks run on the caller's thread or task, in order: `before` ahead of
//! each attempt; `after` once the attempt's outcome is judged; then
//! `on_retry` ahead of a wait, or `on_give_up` when the call ends in
//! failure. On an async function a hook may return a future, which is
//! awaited before the call goes on; the future cannot borrow the context,
//! so take what it needs first: `|ctx| { let n = ctx.attempt(); async move
//! { .. } }`.
//!
//! A hook that panics is not caught: the panic unwinds out of the retried
//! call like one from its body, no further attempt runs, and nothing is
//! logged for the attempt in progress.

use core::time::Duration;

use crate::call_id::CallId;
use crate::class::Classification;
use crate::give_up::GiveUp;
use crate::outcome::Outcome;

/// The state of a retried call, as hooks see it.
///
/// ```
/// use reattempt::{retry, hooks::Context};
/// use std::io;
///
/// fn report(ctx: &Context<'_, io::Result<u32>>) {
///     if let Some(error) = ctx.error() {
///         eprintln!("{} attempt {} failed: {error}; next in {:?}", ctx.name(), ctx.attempt(), ctx.delay());
///     }
/// }
///
/// #[retry(max = 2, backoff = none, on_retry = report)]
/// fn read() -> io::Result<u32> {
///     Err(io::ErrorKind::TimedOut.into())
/// }
///
/// read().unwrap_err();
/// ```
#[derive(Debug)]
pub struct Context<'o, R: ?Sized> {
    pub(crate) name: &'static str,
    pub(crate) attempt: u32,
    pub(crate) max: Option<u32>,
    pub(crate) elapsed: Duration,
    pub(crate) outcome: Option<&'o R>,
    pub(crate) class: Option<Classification>,
    pub(crate) delay: Option<Duration>,
    pub(crate) gave_up: Option<GiveUp>,
    pub(crate) call_id: CallId,
    pub(crate) hedge: bool,
}

impl<'o, R: ?Sized> Context<'o, R> {
    /// The function's name, as in the logs.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The call's id, as in its log events and its dead-letter record, and
    /// as `reattempt::attempt()` gives it to the body.
    pub fn call_id(&self) -> CallId {
        self.call_id
    }

    /// The attempt about to run (`before`) or that just ended (the others);
    /// 1 for the first.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// Most attempts, or `None` when unbounded.
    pub fn max(&self) -> Option<u32> {
        self.max
    }

    /// Time since the call started.
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// What the attempt returned; `None` in `before`.
    pub fn outcome(&self) -> Option<&'o R> {
        self.outcome
    }

    /// The class of the attempt's failure: the error's classification, or
    /// transient with code `if_result` for a value `if_result` rejected.
    /// `None` in `before` and after a success.
    pub fn class(&self) -> Option<Classification> {
        self.class
    }

    /// The wait before the next attempt (`on_retry`); `None` elsewhere.
    pub fn delay(&self) -> Option<Duration> {
        self.delay
    }

    /// Why the call gave up (`on_give_up`); `None` elsewhere.
    pub fn gave_up(&self) -> Option<GiveUp> {
        self.gave_up
    }

    /// Whether the attempt started as a hedge, beside a slow one
    /// (`hedge`); `false` in `before`, and in a function without `hedge`.
    pub fn is_hedge(&self) -> bool {
        self.hedge
    }
}

impl<'o, R: Outcome + ?Sized> Context<'o, R> {
    /// The attempt's error, if it failed with one.
    pub fn error(&self) -> Option<&'o R::Error> {
        self.outcome.and_then(|o| o.split().err())
    }

    /// The attempt's value, if it produced one.
    pub fn value(&self) -> Option<&'o R::Value> {
        self.outcome.and_then(|o| o.split().ok())
    }
}
