//! The timer of an async function without `sleep = ..`: tokio's, or, when
//! it is polled outside any tokio runtime, where making tokio's timer
//! panics, one that a thread of this crate's own ends (`thread_timer.rs`).
//! A function that succeeds at once makes none, so such a function would
//! otherwise work until its first retry, and then panic.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::thread_timer::ThreadTimer;

pin_project_lite::pin_project! {
    /// tokio's timer, or the fallback of one polled outside a runtime, made
    /// at its first poll.
    #[derive(Debug)]
    #[must_use = "a timer does nothing unless polled"]
    #[project = Made]
    pub enum DefaultTimer {
        /// Not polled yet: which timer it is depends on where it is
        /// polled. An attempt that ends at its first poll never polls the
        /// timer that cuts it, so it costs a reading of the clock, and no
        /// timer is made.
        At { deadline: tokio::time::Instant },
        /// Polled inside a tokio runtime.
        Tokio { #[pin] sleep: tokio::time::Sleep },
        /// Polled outside any.
        Thread { timer: ThreadTimer },
    }
}

impl DefaultTimer {
    /// A timer that ends `limit` from now, as `tokio::time::sleep` does,
    /// made at its first poll.
    pub(crate) fn after(limit: Duration) -> DefaultTimer {
        DefaultTimer::At {
            deadline: deadline_after(limit),
        }
    }

    /// The timer for `deadline`, made now, to be polled where this thread
    /// is now: for a wait, polled as soon as it is set.
    pub(crate) fn made(deadline: tokio::time::Instant) -> DefaultTimer {
        if tokio::runtime::Handle::try_current().is_ok() {
            DefaultTimer::Tokio {
                sleep: tokio::time::sleep_until(deadline),
            }
        } else {
            outside_a_runtime();
            DefaultTimer::Thread {
                timer: ThreadTimer::until(deadline.into_std()),
            }
        }
    }

    /// Makes a timer not yet made, in place. Out of line, so that the
    /// polls of a made timer, which a wait makes at once, do not pay for
    /// the code that makes one.
    #[cold]
    #[inline(never)]
    fn make(mut self: Pin<&mut Self>) {
        if let DefaultTimer::At { deadline } = *self {
            self.set(DefaultTimer::made(deadline));
        }
    }

    /// Ends the timer at `deadline` instead.
    pub(crate) fn reset(self: Pin<&mut Self>, deadline: tokio::time::Instant) {
        match self.project() {
            Made::At { deadline: at } => *at = deadline,
            Made::Tokio { sleep } => sleep.reset(deadline),
            Made::Thread { timer } => timer.reset(deadline.into_std()),
        }
    }
}

impl Future for DefaultTimer {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            match self.as_mut().project() {
                Made::At { .. } => self.as_mut().make(),
                Made::Tokio { sleep } => return sleep.poll(cx),
                Made::Thread { timer } => return timer.poll(cx),
            }
        }
    }
}

/// `delay` from now on tokio's clock. A delay past what an `Instant` can
/// hold (a `Duration::MAX` backoff or server delay) is a wait for ever:
/// thirty years, as tokio's own timeouts saturate.
pub(crate) fn deadline_after(delay: Duration) -> tokio::time::Instant {
    let now = tokio::time::Instant::now();
    now.checked_add(delay)
        .unwrap_or_else(|| now + Duration::from_secs(30 * 365 * 86_400))
}

/// Says once in the process that timers run on a thread of this crate's
/// own, and what to do about it.
#[cold]
fn outside_a_runtime() {
    static WARNED: AtomicBool = AtomicBool::new(false);
    if !WARNED.swap(true, Ordering::Relaxed) {
        tracing::warn!(
            target: "reattempt",
            "an async function without `sleep = ..` waits outside a tokio runtime, where tokio's \
             timer cannot run: its waits and timers run on a thread of reattempt's own instead; \
             pass `sleep = ..` the timer of the executor it runs on"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::{Wake, Waker};

    struct Ignore;

    impl Wake for Ignore {
        fn wake(self: std::sync::Arc<Self>) {}
    }

    #[test]
    fn a_default_timer_is_made_where_it_is_first_polled() {
        let waker = Waker::from(std::sync::Arc::new(Ignore));
        let mut cx = Context::from_waker(&waker);
        let later = tokio::time::Instant::now() + Duration::from_secs(3600);
        let mut outside = Box::pin(DefaultTimer::after(Duration::from_secs(3600)));
        assert!(
            matches!(*outside, DefaultTimer::At { .. }),
            "not made before a poll"
        );
        assert!(outside.as_mut().poll(&mut cx).is_pending());
        assert!(matches!(*outside, DefaultTimer::Thread { .. }));
        // Reset to now: it ends.
        outside.as_mut().reset(tokio::time::Instant::now());
        assert!(outside.as_mut().poll(&mut cx).is_ready());

        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let mut inside = Box::pin(DefaultTimer::At { deadline: later });
        inside.as_mut().reset(tokio::time::Instant::now());
        runtime.block_on(async {
            assert!(matches!(*inside, DefaultTimer::At { .. }));
            inside.as_mut().await;
            assert!(matches!(*inside, DefaultTimer::Tokio { .. }));
        });
    }
}
