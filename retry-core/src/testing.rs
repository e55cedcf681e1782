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
use core::marker::PhantomData;
use core::sync::atomic::{AtomicUsize, Ordering};
use core::time::Duration;

/// Guards alive in the process: a retry looks at the thread-local recording
/// only while there is one. Only retries look, never the success path.
static GUARDS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static RECORDING: RefCell<Option<Recording>> = const { RefCell::new(None) };
}

#[derive(Debug, Default)]
struct Recording {
    delays: Vec<Duration>,
}

/// Makes the waits of retried calls on this thread return at once, until
/// the returned guard is dropped.
///
/// Async calls are covered when their future is polled on this thread, as
/// on `#[tokio::test]`'s default current-thread runtime. A custom `sleep =
/// ...` is still called, with a zero delay.
pub fn instant() -> InstantWaits {
    let previous = RECORDING.with(|r| r.replace(Some(Recording::default())));
    GUARDS.fetch_add(1, Ordering::SeqCst);
    InstantWaits {
        previous,
        _not_send: PhantomData,
    }
}

/// The guard of [`instant()`]: what the calls on its thread would have
/// waited.
#[derive(Debug)]
pub struct InstantWaits {
    previous: Option<Recording>,
    _not_send: PhantomData<*const ()>,
}

impl InstantWaits {
    /// The delays skipped so far, in order.
    pub fn delays(&self) -> Vec<Duration> {
        RECORDING.with(|r| {
            r.borrow()
                .as_ref()
                .map(|r| r.delays.clone())
                .unwrap_or_default()
        })
    }

    /// The sum of the delays skipped so far.
    pub fn total(&self) -> Duration {
        self.delays()
            .iter()
            .fold(Duration::ZERO, |sum, d| sum.saturating_add(*d))
    }

    /// The retries made so far by calls on this thread: one per skipped
    /// wait. Calls still make every attempt their policy allows.
    pub fn retries(&self) -> usize {
        RECORDING.with(|r| r.borrow().as_ref().map_or(0, |r| r.delays.len()))
    }
}

impl Drop for InstantWaits {
    fn drop(&mut self) {
        RECORDING.with(|r| *r.borrow_mut() = self.previous.take());
        GUARDS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The wait to perform for `delay`: zero, recorded, when a recording is
/// active on this thread.
pub(crate) fn wait(delay: Duration) -> Duration {
    if GUARDS.load(Ordering::Relaxed) == 0 {
        return delay;
    }
    let mut skipped = false;
    record(|r| {
        r.delays.push(delay);
        skipped = true;
    });
    if skipped { Duration::ZERO } else { delay }
}

#[cold]
fn record(f: impl FnOnce(&mut Recording)) {
    RECORDING.with(|r| {
        if let Some(recording) = r.borrow_mut().as_mut() {
            f(recording);
        }
    });
}
