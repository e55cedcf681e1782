//! The same function, called directly, through `#[retry]` and through each
//! peer crate with an equivalent five-attempt exponential policy (jittered
//! where the crate jitters); and a function that fails its first attempt,
//! retried once with no delay.
//!
//! Every variant, ours and the peers', runs the same body: [`body`], out of
//! line and fallible (it fails when its argument is [`FAIL`], which the
//! optimiser cannot rule out), so no variant's retry path can be deleted as
//! dead code. A body that could not fail would measure a retry loop the
//! compiler had removed.

#![allow(dead_code)]

use std::cell::Cell;
use std::hint::black_box;
use std::io;
use std::time::Duration;

use backon::{BlockingRetryable, ExponentialBuilder, Retryable};
use reattempt::retry;

// ---- the success path ----

/// The argument for which [`body`] fails.
pub const FAIL: u64 = u64::MAX;

/// The body of every variant: it succeeds unless `x` is [`FAIL`].
#[inline(never)]
pub fn body(x: u64) -> io::Result<u64> {
    if black_box(x) == FAIL {
        Err(io::ErrorKind::ConnectionReset.into())
    } else {
        Ok(x)
    }
}

#[inline(never)]
pub fn direct(x: u64) -> io::Result<u64> {
    body(x)
}

/// The throttle of the `overload` build's variants, which their successes
/// keep calm.
#[cfg(feature = "overload")]
pub static BACKEND: reattempt::AdaptiveThrottle =
    reattempt::AdaptiveThrottle::new(2.0, Duration::from_secs(120));

/// What the `overload` build's variants answer when they give up.
#[cfg(feature = "overload")]
pub fn cached(_: io::Error) -> io::Result<u64> {
    Ok(0)
}

#[inline(never)]
#[cfg_attr(not(feature = "overload"), retry(max = 5, backoff = exp, jitter))]
#[cfg_attr(
    feature = "overload",
    retry(max = 5, backoff = exp, jitter, throttle = BACKEND, fallback = cached)
)]
pub fn retried(x: u64) -> io::Result<u64> {
    body(x)
}

fn backon_policy() -> ExponentialBuilder {
    ExponentialBuilder::default()
        .with_max_times(4)
        .with_jitter()
}

#[inline(never)]
pub fn backon_sync(x: u64) -> io::Result<u64> {
    (|| body(x)).retry(backon_policy()).call()
}

#[inline(never)]
pub fn backoff_sync(x: u64) -> Result<u64, backoff::Error<io::Error>> {
    backoff::retry(backoff::ExponentialBackoff::default(), || {
        body(x).map_err(backoff::Error::transient)
    })
}

/// The `retry` crate's policy is an iterator of delays: four retries,
/// each jittered by a factor drawn from 0 to 1 as the iterator yields it.
#[inline(never)]
pub fn retry_sync(x: u64) -> Result<u64, retry::Error<io::Error>> {
    use retry::delay::{Exponential, jitter};
    retry::retry(Exponential::from_millis(1000).map(jitter).take(4), || {
        body(x)
    })
}

#[inline(never)]
pub async fn direct_async(x: u64) -> io::Result<u64> {
    body(x)
}

#[inline(never)]
#[cfg_attr(not(feature = "overload"), retry(max = 5, backoff = exp, jitter))]
#[cfg_attr(
    feature = "overload",
    retry(max = 5, backoff = exp, jitter, throttle = BACKEND, fallback = cached)
)]
pub async fn retried_async(x: u64) -> io::Result<u64> {
    body(x)
}

pub fn backon_async(x: u64) -> impl Future<Output = io::Result<u64>> {
    (move || async move { body(x) }).retry(backon_policy())
}

pub fn tokio_retry2(x: u64) -> impl Future<Output = io::Result<u64>> {
    use tokio_retry2::strategy::{ExponentialFactorBackoff, jitter};
    let strategy = ExponentialFactorBackoff::from_millis(1000, 2.0)
        .max_delay(Duration::from_secs(30))
        .map(jitter)
        .take(4);
    tokio_retry2::Retry::spawn(strategy, move || async move {
        body(x).map_err(tokio_retry2::RetryError::transient)
    })
}

pub fn backoff_async(x: u64) -> impl Future<Output = io::Result<u64>> {
    backoff::future::retry(backoff::ExponentialBackoff::default(), move || async move {
        body(x).map_err(backoff::Error::transient)
    })
}

pub fn tryhard(x: u64) -> impl Future<Output = io::Result<u64>> {
    tryhard::retry_fn(move || async move { body(x) })
        .retries(4)
        .exponential_backoff(Duration::from_secs(1))
        .max_delay(Duration::from_secs(30))
}

// ---- one retry, no delay ----

/// Fails every other call: the first attempt of each retried call, through
/// the same [`body`].
#[inline(never)]
pub fn flaky(failed: &Cell<bool>) -> io::Result<u64> {
    let fail = !failed.replace(!failed.get());
    body(if fail { FAIL } else { 7 })
}

#[inline(never)]
#[retry(max = 5, backoff = none)]
pub fn retried_once(failed: &Cell<bool>) -> io::Result<u64> {
    flaky(failed)
}

fn backon_now() -> ExponentialBuilder {
    ExponentialBuilder::default()
        .with_max_times(4)
        .with_min_delay(Duration::ZERO)
        .with_max_delay(Duration::ZERO)
}

#[inline(never)]
pub fn backon_once(failed: &Cell<bool>) -> io::Result<u64> {
    (|| flaky(failed)).retry(backon_now()).call()
}

fn backoff_now() -> backoff::ExponentialBackoff {
    backoff::ExponentialBackoffBuilder::new()
        .with_initial_interval(Duration::ZERO)
        .with_randomization_factor(0.0)
        .build()
}

#[inline(never)]
pub fn backoff_once(failed: &Cell<bool>) -> Result<u64, backoff::Error<io::Error>> {
    backoff::retry(backoff_now(), || {
        flaky(failed).map_err(backoff::Error::transient)
    })
}

#[inline(never)]
pub fn retry_once(failed: &Cell<bool>) -> Result<u64, retry::Error<io::Error>> {
    retry::retry(retry::delay::NoDelay.take(4), || flaky(failed))
}

#[inline(never)]
#[retry(max = 5, backoff = none)]
pub async fn retried_once_async(failed: &Cell<bool>) -> io::Result<u64> {
    flaky(failed)
}

pub fn backon_once_async(failed: &Cell<bool>) -> impl Future<Output = io::Result<u64>> + '_ {
    (move || async move { flaky(failed) }).retry(backon_now())
}

pub fn tokio_retry2_once(failed: &Cell<bool>) -> impl Future<Output = io::Result<u64>> + '_ {
    let strategy = tokio_retry2::strategy::FixedInterval::from_millis(0).take(4);
    tokio_retry2::Retry::spawn(strategy, move || async move {
        flaky(failed).map_err(tokio_retry2::RetryError::transient)
    })
}

pub fn backoff_once_async(failed: &Cell<bool>) -> impl Future<Output = io::Result<u64>> + '_ {
    backoff::future::retry(backoff_now(), move || async move {
        flaky(failed).map_err(backoff::Error::transient)
    })
}

pub fn tryhard_once(failed: &Cell<bool>) -> impl Future<Output = io::Result<u64>> + '_ {
    tryhard::retry_fn(move || async move { flaky(failed) }).retries(4)
}
