//! Instant waits for the tests of code that uses `#[retry]`.
//!
//! While the guard of [`instant()`] lives, every retried call on its thread
//! skips its waits: it still makes every attempt its policy allows and
//! follows the rest of it (the deadline too, counted on the waits' virtual
//! time), but returns from each wait at once and records the delay it
//! would have slept.
//!
//! ```
//! use reattempt::retry;
//! use std::time::Duration;
//!
//! #[retry(max = 4, backoff = exp(base = 1s))]
//! fn flaky() -> std::io::Result<()> {
//!     Err(std::io::ErrorKind::TimedOut.into())
//! }
//!
//! let waits = reattempt::testing::instant();
//! flaky().unwrap_err(); // returns at once instead of after 7 s
//! let s = Duration::from_secs;
//! assert_eq!(waits.delays(), [s(1), s(2), s(4)]);
//! assert_eq!(waits.retries(), 3); // 4 attempts, as `max` says
//! ```

use core::cell::RefCell;
use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::sync::atomic::{AtomicUsize, Ordering};
use core::task::{Context, Poll};
use core::time::Duration;
use std::sync::{Arc, Mutex, PoisonError};

/// Guards and covered tasks alive in the process: a retry looks at the
/// thread-local recording only while there is one. Only retries look,
/// never the success path.
static GUARDS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// The recordings of the guards alive on this thread (and of the covered
    /// future being polled), newest last: the newest records. A guard
    /// takes its own out when it drops, whatever their order.
    static RECORDING: RefCell<Vec<Shared>> = const { RefCell::new(Vec::new()) };
    /// On a worker thread of a multi-thread tokio runtime, the recording of
    /// the guard made on that runtime: weak, so that it ends with the guard.
    static WORKER: RefCell<Option<std::sync::Weak<Mutex<Vec<Duration>>>>> = const { RefCell::new(None) };
}

/// Makes `recording` this thread's newest. While the thread's locals are
/// destroyed there is no list to add it to, and calls made then (from
/// another value's destructor) wait for real, where a panic would abort
/// the process.
fn push_recording(recording: &Shared) {
    let _ = RECORDING.try_with(|r| r.borrow_mut().push(Arc::clone(recording)));
}

/// Takes the newest hold of `recording` off this thread's list, wherever
/// it is: the guards made after it may still live.
fn remove_recording(recording: &Shared) {
    let _ = RECORDING.try_with(|r| {
        let mut recordings = r.borrow_mut();
        if let Some(at) = recordings.iter().rposition(|r| Arc::ptr_eq(r, recording)) {
            recordings.remove(at);
        }
    });
}

/// The delays a guard records, shared with the tasks it covers.
type Shared = Arc<Mutex<Vec<Duration>>>;

/// Makes the waits of retried calls on this thread return at once, until
/// the returned guard is dropped.
///
/// With several guards alive on a thread, the newest records the waits;
/// they may be dropped in any order.
///
/// Async calls are covered when their future is polled on this thread, as
/// on `#[tokio::test]`'s default current-thread runtime. Made inside a
/// multi-thread tokio runtime, the guard covers that runtime's worker
/// threads too, so that the tasks a test spawns skip their waits: it
/// visits each worker once, waiting for at most five seconds should one be
/// busy (on a loaded machine the system may leave a worker idle for over
/// a second).
/// A task on another runtime, or on a blocking thread, is covered when its
/// future is wrapped in [`InstantWaits::cover`]. A custom `sleep = ...` is
/// still called, with a zero delay.
/// A call made while its thread's locals are destroyed (from the destructor
/// of another thread-local value) finds no guard, and waits for real.
#[must_use = "waits are instant only while the guard lives: `let _ = instant()` drops it at once"]
pub fn instant() -> InstantWaits {
    let recording = Shared::default();
    push_recording(&recording);
    GUARDS.fetch_add(1, Ordering::SeqCst);
    #[cfg(feature = "tokio")]
    cover_workers(&recording);
    InstantWaits {
        recording,
        _not_send: PhantomData,
    }
}

/// The guard of [`instant()`]: what the calls on its thread, and in the
/// tasks it covers, would have waited.
///
/// ```
/// use reattempt::retry;
/// use std::cell::Cell;
/// use std::time::Duration;
///
/// #[retry(max = 3, backoff = fixed(10s))]
/// fn flaky(calls: &Cell<u32>) -> std::io::Result<u32> {
///     calls.set(calls.get() + 1);
///     if calls.get() < 3 {
///         return Err(std::io::ErrorKind::ConnectionReset.into());
///     }
///     Ok(calls.get())
/// }
///
/// let waits = reattempt::testing::instant();
/// assert_eq!(flaky(&Cell::new(0)).unwrap(), 3);
/// assert_eq!(waits.delays(), [Duration::from_secs(10); 2]);
/// assert_eq!((waits.retries(), waits.total()), (2, Duration::from_secs(20)));
/// ```
#[derive(Debug)]
#[must_use = "waits are instant only while the guard lives"]
pub struct InstantWaits {
    recording: Shared,
    _not_send: PhantomData<*const ()>,
}

impl InstantWaits {
    /// The delays skipped so far, in order.
    pub fn delays(&self) -> Vec<Duration> {
        self.recording
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The sum of the delays skipped so far.
    pub fn total(&self) -> Duration {
        self.delays()
            .iter()
            .fold(Duration::ZERO, |sum, d| sum.saturating_add(*d))
    }

    /// The retries made so far by the calls it covers: one per skipped
    /// wait. Calls still make every attempt their policy allows.
    pub fn retries(&self) -> usize {
        self.recording
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// `future` with instant waits wherever it is polled, recorded with
    /// this guard's: for a task spawned onto another thread.
    ///
    /// ```
    /// use reattempt::retry;
    /// use std::time::Duration;
    ///
    /// #[retry(max = 3, backoff = fixed(10s))]
    /// async fn flaky() -> std::io::Result<()> {
    ///     Err(std::io::ErrorKind::TimedOut.into())
    /// }
    ///
    /// # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
    /// let waits = reattempt::testing::instant();
    /// let task = tokio::spawn(waits.cover(flaky()));
    /// task.await.unwrap().unwrap_err(); // at once, not after 20 s
    /// assert_eq!(waits.delays(), [Duration::from_secs(10); 2]);
    /// # });
    /// ```
    pub fn cover<F: Future>(&self, future: F) -> Covered<F> {
        GUARDS.fetch_add(1, Ordering::SeqCst);
        Covered {
            recording: Arc::clone(&self.recording),
            future: Box::pin(future),
        }
    }
}

impl Drop for InstantWaits {
    fn drop(&mut self) {
        remove_recording(&self.recording);
        GUARDS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A future whose retried calls skip their waits, recording them with the
/// guard that made it ([`InstantWaits::cover`]).
///
/// ```
/// use reattempt::retry;
/// use reattempt::testing::Covered;
///
/// #[retry(max = 2, backoff = fixed(1h))]
/// async fn flaky() -> std::io::Result<()> {
///     Err(std::io::ErrorKind::TimedOut.into())
/// }
///
/// let waits = reattempt::testing::instant();
/// let covered: Covered<_> = waits.cover(flaky());
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// covered.await.unwrap_err(); // at once, not after an hour
/// # });
/// assert_eq!(waits.retries(), 1);
/// ```
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct Covered<F> {
    recording: Shared,
    future: Pin<Box<F>>,
}

impl<F: Future> Future for Covered<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        struct Restore<'a>(&'a Shared);

        impl Drop for Restore<'_> {
            fn drop(&mut self) {
                remove_recording(self.0);
            }
        }

        let this = &mut *self;
        push_recording(&this.recording);
        let _restore = Restore(&this.recording);
        this.future.as_mut().poll(cx)
    }
}

impl<F> Drop for Covered<F> {
    fn drop(&mut self) {
        GUARDS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The wait to perform for `delay`: zero, recorded, when a recording is
/// active on this thread.
#[inline]
pub(crate) fn wait(delay: Duration) -> Duration {
    if GUARDS.load(Ordering::Relaxed) == 0 {
        return delay;
    }
    record(delay)
}

#[cold]
fn record(delay: Duration) -> Duration {
    // While the thread's locals are destroyed (a destructor's retried
    // call), there is no recording, and the call waits for real.
    let recording = RECORDING
        .try_with(|r| r.borrow().last().cloned())
        .ok()
        .flatten()
        .or_else(|| {
            WORKER
                .try_with(|w| w.borrow().as_ref().and_then(std::sync::Weak::upgrade))
                .ok()
                .flatten()
        });
    match recording {
        Some(recording) => {
            recording
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(delay);
            Duration::ZERO
        }
        None => delay,
    }
}

/// How long a guard waits for the workers of its runtime: a worker busy
/// longer is not covered, and the system may leave a runnable worker idle
/// for over a second on a loaded machine.
#[cfg(feature = "tokio")]
const VISIT_WORKERS_FOR: Duration = Duration::from_secs(5);

/// Gives each worker of the current multi-thread runtime a weak hold of
/// `recording`. One task per worker, each holding its worker until all have
/// arrived, so that no two land on the same one; bounded by five seconds.
/// A worker the bound leaves out is not covered: the task meant for it
/// runs on another, once that other's visit ends.
#[cfg(feature = "tokio")]
fn cover_workers(recording: &Shared) {
    use std::sync::Condvar;
    use std::time::Instant;

    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return;
    };
    if handle.runtime_flavor() != tokio::runtime::RuntimeFlavor::MultiThread {
        return;
    }
    let workers = handle.metrics().num_workers();
    let arrived = Arc::new((Mutex::new(0usize), Condvar::new()));
    let deadline = Instant::now() + VISIT_WORKERS_FOR;
    for _ in 0..workers {
        let weak = Arc::downgrade(recording);
        let arrived = Arc::clone(&arrived);
        handle.spawn(async move {
            let _ = WORKER.try_with(|w| *w.borrow_mut() = Some(weak));
            all_arrive(&arrived, workers, deadline, 1);
        });
    }
    all_arrive(&arrived, workers, deadline, 0);
}

/// Adds `arriving` to the count of `arrived`, then waits until it reaches
/// `workers`, or `deadline` passes.
#[cfg(feature = "tokio")]
fn all_arrive(
    arrived: &(Mutex<usize>, std::sync::Condvar),
    workers: usize,
    deadline: std::time::Instant,
    arriving: usize,
) {
    let (count, all) = arrived;
    let mut count = count.lock().unwrap_or_else(PoisonError::into_inner);
    *count += arriving;
    all.notify_all();
    while *count < workers {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            break;
        }
        count = all
            .wait_timeout(count, left)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
}
