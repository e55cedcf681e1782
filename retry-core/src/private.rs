//! What the `#[retry]` expansion names, and nothing else may rely on.
//!
//! Not public API: it changes without notice between versions.

use core::fmt;
use core::future::Future;
use core::ops::Deref;
use core::time::Duration;

use crate::call::instead::{LastStands, NothingStands, TimeoutStands};
use crate::class::Code;
use crate::timeout::AttemptTimeout;

pub use crate::backoff::custom::CustomBackoff;
pub use crate::backoff::{
    DEFAULT_BASE, DEFAULT_CAP, DEFAULT_FACTOR, Exponential, Fibonacci, Fixed, Linear, NoBackoff,
};
pub use crate::call::instead::NoLast;
pub use crate::call::{Attempts, Round, RoundEvent};
pub use crate::call::{
    Call, Decision, FieldVisitor, Named, NoDeadline, NoFields, THREAD_WAITS, Waits, run_sync,
    throttled_early, throttles,
};
pub use crate::call_policy::dynamic_policy;
pub use crate::class::Classification;
pub use crate::classify::{Classified, ClassifiedValue, Classify, IntoClassification};
pub use crate::clock::SystemClock;
#[cfg(feature = "tokio")]
pub use crate::clock::TokioClock;
pub use crate::clock::thread_sleep;
pub use crate::dynamic::{AnyBackoff, DynamicPolicy};
pub use crate::hedge::{End, Hedge, LatencySketch, Slot};
pub use crate::hooks::Context;
pub use crate::jitter::Jitter;
pub use crate::outcome::{Fallible, FromBreakerOpen, FromTimeout, Outcome};
pub use crate::policy::Policy;
pub use crate::policy::{Idempotent, Nested};
pub use crate::preset::external_api;

/// What answers a call that gave up, under `fallback = ..`.
pub mod fallback {
    pub use crate::fallback::Ended;
    pub use crate::fallback::{Answered, Like, error_of};
}

/// The presets' values, which the expansion names.
pub mod preset {
    pub use crate::preset::{EXTERNAL_API, INTERNAL, NETWORK};
}
pub use crate::read_outcome::{
    ErrorProbe, Fallback, JudgeValue, LastResort, NoFailure, Probe, ValueProbe,
};
pub use crate::site::Site;
pub use tracing;

/// The code a `#[derive(Classified)]` variant names with `code = ".."`,
/// evaluated as a constant, so that one longer than a [`Code`] holds is an
/// error where the crate compiles rather than a cut code in its logs.
pub const fn derived_code(text: &str) -> Code {
    match Code::try_new(text) {
        Ok(code) => code,
        Err(_) => panic!(
            "a `code` of `#[classify(..)]` is longer than the `reattempt::Code::CAPACITY` bytes a code holds"
        ),
    }
}

/// What `#[derive(Classified)]` delegates a variant to: the wrapped
/// error's own classification, with a message that fits the derive when
/// its type has none.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no retry classification for `#[derive(Classified)]` to delegate to",
    label = "the variant wraps a `{Self}`, which does not implement `reattempt::Classified`",
    note = "give the variant a class, such as `#[classify(transient)]` or `#[classify(logical)]`, or a function with `#[classify(with = path::to::fn)]`",
    note = "or implement (or derive) `reattempt::Classified` for `{Self}`"
)]
pub trait Delegate {
    /// The wrapped error's classification.
    fn delegated(&self) -> Classification;
}

impl<T: Classified + ?Sized> Delegate for T {
    #[inline]
    fn delegated(&self) -> Classification {
        self.classification()
    }
}

/// Calls an `if_result` predicate, giving a closure its argument type: a
/// value it returns true for is a transient failure.
#[inline]
pub fn reject_with<T: ?Sized>(
    value: &T,
    predicate: impl FnOnce(&T) -> bool,
) -> Option<Classification> {
    predicate(value).then(|| Classification::transient().with_code(crate::call::REJECTED))
}

/// A closure that judges the values of `outcome`'s type, with the
/// signature the core calls it with: for any borrow of the value. Passed
/// straight to a [`JudgeValue`] bound, a closure would be made for one
/// borrow, and its argument's type would not be known inside it; the
/// outcome names that type where the expansion cannot.
#[inline]
pub fn judge_of<R, F>(_outcome: &R, judge: F) -> F
where
    R: Outcome + ?Sized,
    F: Fn(&R::Value) -> Option<Classification>,
{
    judge
}

/// [`judge_of`] for the outcomes `body` returns, before it has run.
#[inline]
pub fn judge_of_body<R, F>(_body: &impl FnMut() -> R, judge: F) -> F
where
    R: Outcome,
    F: Fn(&R::Value) -> Option<Classification>,
{
    judge
}

/// [`judge_of`] for the outcomes of the attempts `make` makes, before any
/// has run: for a hedged function.
#[inline]
pub fn judge_of_attempts<M, A, R, F>(_make: &M, judge: F) -> F
where
    M: Fn() -> A,
    A: Future<Output = R>,
    R: Outcome,
    F: Fn(&R::Value) -> Option<Classification>,
{
    judge
}

/// What the body moves of a by-value argument (the argument, or a field of
/// it), for the expansion's check that each attempt may move it again:
/// `(&&Moved(&place)).__retry_moved()` gives what the check requires to be
/// `Copy`. That is the place itself ([`MovedAway`]), unless it is a `&mut`,
/// which a call reborrows instead of moving ([`MovedReborrow`]).
pub struct Moved<'v, T: ?Sized>(pub &'v T);

/// A `&mut` place: passed on, it is reborrowed, so each attempt may pass it.
pub trait MovedReborrow {
    /// `&()`, which is `Copy`.
    fn __retry_moved(&self) -> &'static ();
}

impl<T: ?Sized> MovedReborrow for &Moved<'_, &mut T> {
    fn __retry_moved(&self) -> &'static () {
        &()
    }
}

/// Any other place: each attempt may move it again only if it is `Copy`.
pub trait MovedAway<'v, T: ?Sized> {
    /// The place.
    fn __retry_moved(&self) -> &'v T;
}

impl<'v, T: ?Sized> MovedAway<'v, T> for Moved<'v, T> {
    fn __retry_moved(&self) -> &'v T {
        self.0
    }
}

/// Without `if_result` the function must return a `Result`; spanned at the
/// return type so a function that does not is reported there.
#[inline(always)]
pub fn assert_fallible<R: Fallible + ?Sized>(_: &R) {}

/// Calls a hook, giving a closure its argument type.
#[inline]
pub fn call_hook<C: ?Sized, T>(context: &C, hook: impl FnOnce(&C) -> T) -> T {
    hook(context)
}

/// Calls a hook of a sync function, which returns nothing. The expansion
/// calls it at the hook's span, so that a hook of the wrong type (an async
/// one, whose future would never run) is reported there.
#[inline]
pub fn call_sync_hook<C: ?Sized>(context: &C, hook: impl FnOnce(&C)) {
    hook(context);
}

/// A hook's return value on an async function: a future to await, or `()`.
///
/// The expansion calls `HookReturn::new(value).__retry_hook()`: method
/// resolution takes the inherent method of `HookReturn<F>` by value first,
/// which applies when `F` is a future; only then does it deref to
/// [`UnitHook`] and find its method for `()`.
pub struct HookReturn<T>(UnitHook<T>);

/// What a [`HookReturn`] derefs to: a hook that returned `()`.
pub struct UnitHook<T>(T);

impl<T> HookReturn<T> {
    /// A hook's return value, to be probed.
    #[inline]
    pub const fn new(value: T) -> HookReturn<T> {
        HookReturn(UnitHook(value))
    }
}

impl<T> Deref for HookReturn<T> {
    type Target = UnitHook<T>;

    #[inline]
    fn deref(&self) -> &UnitHook<T> {
        &self.0
    }
}

impl<F: Future<Output = ()>> HookReturn<F> {
    /// A hook that returned a future: the future, to await.
    #[inline]
    pub fn __retry_hook(self) -> F {
        self.0.0
    }
}

impl UnitHook<()> {
    /// A hook that returned `()`: nothing to wait for, a future that is
    /// ready at once.
    #[inline]
    pub fn __retry_hook(&self) -> core::future::Ready<()> {
        core::future::ready(())
    }
}

/// The classification of a classifier closure's return value.
#[inline]
pub fn into_class<R: IntoClassification>(value: R) -> Classification {
    value.into_classification()
}

/// Calls a classifier closure (of `on = ..`, or of a `#[classify(with = ..)]`
/// variant with its field), giving it its argument type.
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

/// [`attempt`] for a function without `if_result`, whose output must be a
/// `Result`: spanned at the return type, so that one that is not is
/// reported there, and no call of [`assert_fallible`] is left for rustc to
/// check in each function.
#[inline(always)]
pub fn fallible_attempt<T: Fallible, F: Future<Output = T>>(future: F) -> F {
    future
}

/// Gives a closure passed as `backoff = |n| ...` its argument type. The
/// expansion calls it at the closure's span; what it gives, as
/// [`backoff_of`]'s, needs nothing of the closure.
#[inline]
pub fn backoff_fn<F: Fn(u32) -> Duration>(f: F) -> CustomBackoff<F> {
    CustomBackoff::new(f)
}

/// Checks that the value passed as `backoff = ...` is a backoff. The
/// expansion calls it at the value's span, so that one that is not is
/// reported there, once: the type it gives is a backoff whatever the
/// value is, so the loop's uses of it add no error.
#[inline]
pub fn backoff_of<B: crate::backoff::Backoff>(backoff: B) -> CustomBackoff<B> {
    CustomBackoff::new(backoff)
}

/// Gives a closure passed as `sleep = ...` on a sync function its type.
#[inline]
pub fn sync_sleeper<F: Fn(Duration)>(f: F) -> F {
    f
}

/// Gives a closure passed as `sleep = ...` on an async function its type,
/// and checks that it returns a future. The expansion calls it at the
/// sleeper's span, and awaits the waits between attempts there too, so
/// that a sleeper that returns no future is reported there, once, with
/// what it must be. (With `deadline` or `attempt_timeout`, the future of
/// each attempt holds it as its timer, and reports it again.)
#[inline]
pub fn async_sleeper<F: Fn(Duration) -> S, S: SleepFuture>(f: F) -> F {
    f
}

/// What the sleeper of an async function returns: a future that ends
/// after the delay.
#[diagnostic::on_unimplemented(
    message = "`sleep` on an async function must return a future, not `{Self}`",
    label = "a sleeper that returns no future",
    note = "a blocking sleep (`std::thread::sleep`) would stop the executor's thread while it waits: pass the runtime's own, such as `tokio::time::sleep`, or a closure `|d| ...` that returns its future"
)]
pub trait SleepFuture: Future<Output = ()> {}

impl<S: Future<Output = ()>> SleepFuture for S {}

/// The default sleep of async functions: tokio's timer, kept by the call.
#[cfg(feature = "tokio")]
#[inline]
pub fn wait<'c, B, C>(call: &'c mut Call<'_, B, C>, delay: Duration) -> crate::wait::Wait<'c>
where
    B: crate::backoff::Backoff,
    C: crate::clock::Clock,
{
    call.wait(delay)
}

/// The default timer of `attempt_timeout` and of the deadline on async
/// functions: tokio's, or outside any tokio runtime one that a thread of
/// this crate's own ends (`DefaultTimer`).
#[cfg(feature = "tokio")]
#[inline]
pub fn timer(limit: Duration) -> crate::default_timer::DefaultTimer {
    crate::default_timer::DefaultTimer::after(limit)
}

/// Without the `tokio` feature there is no default timer. No function
/// that names this compiles: each also waits by [`wait`] or
/// `Call::next`, whose bound says what is missing; a timer that were a
/// second error would only repeat it.
#[cfg(not(feature = "tokio"))]
pub fn timer(_limit: Duration) -> core::future::Pending<()> {
    core::future::pending()
}

// How an outcome type `R` is made from a timeout, when it can be: what
// lets a deadline cut a running async attempt when the function's error
// type can stand for a timeout, and leaves the attempt to run otherwise.
// The expansion calls `Probe::<R>::new().__retry_from_timeout()`: method
// resolution first finds the probe's method, which applies when
// `R: FromTimeout`, and only then derefs to the fallback's.

impl<R: FromTimeout> Probe<R> {
    /// `R` can be made from a timeout: `R::from_timeout`.
    #[inline]
    pub fn __retry_from_timeout(&self) -> Option<fn(AttemptTimeout) -> R> {
        Some(R::from_timeout)
    }
}

/// How a hedged function whose attempts have a timeout makes the outcome
/// of one cut short: `R` must be made from a timeout, as for any function
/// with `attempt_timeout`.
#[inline]
pub fn times_out<R: FromTimeout>() -> Option<fn(AttemptTimeout) -> R> {
    Some(R::from_timeout)
}

impl<R> Fallback<R> {
    /// `R` cannot be made from a timeout: `None`.
    #[inline]
    pub fn __retry_from_timeout(&self) -> Option<fn(AttemptTimeout) -> R> {
        None
    }
}

// Where a function with a deadline keeps its last failed attempt's
// outcome, to stand for a retry that the deadline finds waiting for its
// permit or after a wait that ran late (`attempt::instead`): by the same
// resolution, nowhere when `R: FromTimeout`, in an `Option` when `R: Send`
// (any `R` for a sync function), else nowhere.

impl<R: FromTimeout> Probe<R> {
    /// A timeout stands for an attempt that never ran.
    #[inline]
    pub fn __retry_last(&self) -> TimeoutStands<R> {
        TimeoutStands::new()
    }

    /// A timeout stands for a sync attempt that never ran.
    #[inline]
    pub fn __retry_last_sync(&self) -> TimeoutStands<R> {
        TimeoutStands::new()
    }
}

impl<R: Send> Fallback<R> {
    /// The last attempt's outcome stands for one that never ran.
    #[inline]
    pub fn __retry_last(&self) -> LastStands<R> {
        LastStands::new()
    }
}

impl<R> Fallback<R> {
    /// The last attempt's outcome stands for a sync attempt that never
    /// ran: no future holds it.
    #[inline]
    pub fn __retry_last_sync(&self) -> LastStands<R> {
        LastStands::new()
    }
}

impl<R> LastResort<R> {
    /// Nothing stands for an attempt.
    #[inline]
    pub fn __retry_last(&self) -> NothingStands<R> {
        NothingStands::new()
    }
}

/// What an async function without `sleep = ...` needs when `reattempt`
/// is built without its `tokio` feature: no type has it, so that such a
/// function is a compile error that says what to do.
#[cfg(not(feature = "tokio"))]
#[diagnostic::on_unimplemented(
    message = "an async function needs a sleeper: `sleep = ..`, or `reattempt`'s `tokio` feature",
    label = "no sleeper for this async function's waits",
    note = "`reattempt` is built without its `tokio` feature (on by default), which gives async functions tokio's timer",
    note = "pass `sleep = ..` a function from `Duration` to a future that completes after it, on the executor that runs the function, or enable the feature"
)]
pub trait NeedsASleeper {}

/// Without the `tokio` feature an async function needs `sleep = ...`: the
/// delay fails [`NeedsASleeper`] (the bound is on the delay, whose type
/// reads shorter in the error than the call's).
#[cfg(not(feature = "tokio"))]
pub fn wait<T, D: NeedsASleeper>(_call: T, _delay: D) -> core::future::Pending<()> {
    core::future::pending()
}

/// The clock of async functions: tokio's when there is tokio.
#[cfg(feature = "tokio")]
pub type AsyncClock = TokioClock;

/// The clock of async functions: tokio's when there is tokio.
#[cfg(not(feature = "tokio"))]
pub type AsyncClock = SystemClock;

/// An argument named in `fields(..)`, as logs and records write it: text
/// as it is, anything else by `Debug`, so that a URL is `http://..` and not
/// `"http://.."`.
///
/// The expansion calls `FieldOf::new(&arg).__retry_field()`: method
/// resolution finds the inherent method of `FieldOf<T>` when
/// `T: AsRef<str>`, and only then derefs to [`FieldByDebug`] and finds its
/// method.
pub struct FieldOf<'a, T: ?Sized>(FieldByDebug<'a, T>);

/// What a [`FieldOf`] derefs to: an argument written by `Debug`.
pub struct FieldByDebug<'a, T: ?Sized>(&'a T);

impl<'a, T: ?Sized> FieldOf<'a, T> {
    /// The argument, to be probed.
    #[inline]
    pub const fn new(value: &'a T) -> FieldOf<'a, T> {
        FieldOf(FieldByDebug(value))
    }
}

impl<'a, T: ?Sized> Deref for FieldOf<'a, T> {
    type Target = FieldByDebug<'a, T>;

    #[inline]
    fn deref(&self) -> &FieldByDebug<'a, T> {
        &self.0
    }
}

/// A field's value, ready to be written.
pub enum FieldValue<'a> {
    /// Text, written as it is.
    Text(&'a str),
    /// Anything else, written by `Debug`.
    Debug(&'a dyn fmt::Debug),
}

impl fmt::Debug for FieldValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldValue::Text(text) => f.write_str(text),
            FieldValue::Debug(value) => value.fmt(f),
        }
    }
}

impl<'a, T: AsRef<str> + ?Sized> FieldOf<'a, T> {
    /// Text: the value as it is.
    #[inline]
    pub fn __retry_field(&self) -> FieldValue<'a> {
        FieldValue::Text(self.0.0.as_ref())
    }
}

impl<'a, T: fmt::Debug> FieldByDebug<'a, T> {
    /// Anything else: the value by `Debug`.
    #[inline]
    pub fn __retry_field(&self) -> FieldValue<'a> {
        FieldValue::Debug(self.0)
    }
}

/// The clock of async functions.
#[inline]
pub fn async_clock() -> AsyncClock {
    AsyncClock::default()
}
