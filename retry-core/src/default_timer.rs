//! The timer of an async function without `sleep = ..`: tokio's, or, when
//! it is polled outside any tokio runtime, where making tokio's timer
//! panics, one on a thread of its own. A function that succeeds at once
//! makes none, so such a function would otherwise work until its first
//! retry, and then panic.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

/// tokio's timer, or the fallback of one polled outside a runtime, made
/// at its first poll.
#[derive(Debug)]
#[must_use = "a timer does nothing unless polled"]
pub enum DefaultTimer {
    /// Not polled yet: which timer it is depends on where it is polled.
    /// An attempt that ends at its first poll never polls the timer that
    /// cuts it, so it costs a reading of the clock, and no timer is made.
    At(tokio::time::Instant),
    /// Polled inside a tokio runtime.
    Tokio(tokio::time::Sleep),
    /// Polled outside any.
    Thread(ThreadTimer),
}

impl DefaultTimer {
    /// A timer that ends at `deadline`.
    pub(crate) fn until(deadline: tokio::time::Instant) -> DefaultTimer {
        DefaultTimer::At(deadline)
    }

    /// A timer that ends `limit` from now, as `tokio::time::sleep` does.
    pub(crate) fn after(limit: Duration) -> DefaultTimer {
        DefaultTimer::until(deadline_after(limit))
    }

    /// The timer for `deadline`, polled where this thread is now.
    fn made(deadline: tokio::time::Instant) -> DefaultTimer {
        if tokio::runtime::Handle::try_current().is_ok() {
            DefaultTimer::Tokio(tokio::time::sleep_until(deadline))
        } else {
            outside_a_runtime();
            DefaultTimer::Thread(ThreadTimer::until(deadline.into_std()))
        }
    }

    /// Ends the timer at `deadline` instead.
    pub(crate) fn reset(self: Pin<&mut Self>, deadline: tokio::time::Instant) {
        // SAFETY: no variant is moved out of its place; only the one that
        // is not `Unpin` is pinned again, where it is.
        match unsafe { self.get_unchecked_mut() } {
            DefaultTimer::At(at) => *at = deadline,
            DefaultTimer::Tokio(sleep) => unsafe { Pin::new_unchecked(sleep) }.reset(deadline),
            DefaultTimer::Thread(timer) => timer.reset(deadline.into_std()),
        }
    }
}

impl Future for DefaultTimer {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            // SAFETY: as in `reset`; a timer not yet made is replaced in
            // place, through the pin.
            match unsafe { self.as_mut().get_unchecked_mut() } {
                DefaultTimer::At(deadline) => {
                    let deadline = *deadline;
                    self.set(DefaultTimer::made(deadline));
                }
                DefaultTimer::Tokio(sleep) => return unsafe { Pin::new_unchecked(sleep) }.poll(cx),
                DefaultTimer::Thread(timer) => return timer.poll(cx),
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

/// Says once in the process that timers run on threads of their own, and
/// what to do about it.
#[cold]
fn outside_a_runtime() {
    static WARNED: AtomicBool = AtomicBool::new(false);
    if !WARNED.swap(true, Ordering::Relaxed) {
        tracing::warn!(
            target: "reattempt",
            "an async function without `sleep = ..` waits outside a tokio runtime, where tokio's \
             timer cannot run: its waits and timers run on threads of their own instead, a thread \
             each; pass `sleep = ..` the timer of the executor it runs on"
        );
    }
}

/// A timer whose thread, started at its first poll before its deadline,
/// sleeps until then and wakes the task; dropping the timer ends the
/// thread.
#[derive(Debug)]
pub struct ThreadTimer {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Debug)]
struct State {
    deadline: Instant,
    waker: Option<Waker>,
    /// Whether a thread watches the deadline.
    watched: bool,
    dropped: bool,
}

impl Shared {
    /// The state, even after a panic elsewhere held its lock: each field
    /// is whole at every step, so nothing is lost by reading on.
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl ThreadTimer {
    fn until(deadline: Instant) -> ThreadTimer {
        ThreadTimer {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    deadline,
                    waker: None,
                    watched: false,
                    dropped: false,
                }),
                changed: Condvar::new(),
            }),
        }
    }

    fn reset(&mut self, deadline: Instant) {
        self.shared.state().deadline = deadline;
        self.shared.changed.notify_one();
    }

    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.shared.state();
        if Instant::now() >= state.deadline {
            return Poll::Ready(());
        }
        match &mut state.waker {
            Some(waker) => waker.clone_from(cx.waker()),
            None => state.waker = Some(cx.waker().clone()),
        }
        if !state.watched {
            let shared = Arc::clone(&self.shared);
            let spawned = std::thread::Builder::new()
                .name("reattempt-timer".into())
                .spawn(move || watch(&shared));
            if spawned.is_err() {
                // No thread to wait on: the timer ends now, as a wait that
                // is cut short rather than one that never ends.
                return Poll::Ready(());
            }
            state.watched = true;
        }
        Poll::Pending
    }
}

impl Drop for ThreadTimer {
    fn drop(&mut self) {
        self.shared.state().dropped = true;
        self.shared.changed.notify_one();
    }
}

/// The timer's thread: until the deadline (which a reset may move) or the
/// timer's drop, whichever comes first.
fn watch(shared: &Shared) {
    let mut state = shared.state();
    loop {
        if state.dropped {
            return;
        }
        let now = Instant::now();
        if now >= state.deadline {
            state.watched = false;
            let waker = state.waker.take();
            drop(state);
            if let Some(waker) = waker {
                waker.wake();
            }
            return;
        }
        // Capped, so that a deadline decades away (a wait for ever) is
        // no timeout the platform might refuse.
        let left = (state.deadline - now).min(Duration::from_secs(3600));
        state = shared
            .changed
            .wait_timeout(state, left)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::task::Wake;

    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn waker() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        (Arc::clone(&count), Waker::from(count))
    }

    /// Polls until ready, at most for `limit`, polling again each time
    /// `waker` is woken.
    fn wait(timer: &mut ThreadTimer, count: &Count, waker: &Waker, limit: Duration) -> bool {
        let started = Instant::now();
        let mut cx = Context::from_waker(waker);
        while started.elapsed() < limit {
            // Read before the poll, so that a wake just after it counts.
            let woken = count.0.load(Ordering::SeqCst);
            if timer.poll(&mut cx).is_ready() {
                return true;
            }
            while count.0.load(Ordering::SeqCst) == woken && started.elapsed() < limit {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        false
    }

    #[test]
    fn a_timer_ends_at_its_deadline_and_wakes_the_task() {
        let (count, waker) = waker();
        let started = Instant::now();
        let mut timer = ThreadTimer::until(started + Duration::from_millis(20));
        assert!(timer.poll(&mut Context::from_waker(&waker)).is_pending());
        // Not polled again until the timer's thread wakes the task.
        while count.0.load(Ordering::SeqCst) == 0 {
            assert!(started.elapsed() < Duration::from_secs(10), "never woken");
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(started.elapsed() >= Duration::from_millis(20));
        assert!(timer.poll(&mut Context::from_waker(&waker)).is_ready());
    }

    #[test]
    fn a_timer_reset_ends_at_its_new_deadline() {
        let (count, waker) = waker();
        let mut timer = ThreadTimer::until(Instant::now() + Duration::from_secs(3600));
        assert!(timer.poll(&mut Context::from_waker(&waker)).is_pending());
        let started = Instant::now();
        timer.reset(Instant::now() + Duration::from_millis(10));
        assert!(
            wait(&mut timer, &count, &waker, Duration::from_secs(10)),
            "the reset moved it"
        );
        assert!(started.elapsed() >= Duration::from_millis(10));
        // Reset again after it ended: it ends again, at the new deadline.
        timer.reset(Instant::now() + Duration::from_millis(10));
        assert!(timer.poll(&mut Context::from_waker(&waker)).is_pending());
        assert!(wait(&mut timer, &count, &waker, Duration::from_secs(10)));
    }

    #[test]
    fn dropping_a_timer_ends_its_thread() {
        let (_, waker) = waker();
        let mut timer = ThreadTimer::until(Instant::now() + Duration::from_secs(3600));
        assert!(timer.poll(&mut Context::from_waker(&waker)).is_pending());
        let shared = Arc::downgrade(&timer.shared);
        drop(timer);
        let started = Instant::now();
        // The thread holds the last reference until it returns.
        while shared.upgrade().is_some() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the thread lives on"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn a_default_timer_is_made_where_it_is_first_polled() {
        let (_, waker) = waker();
        let mut cx = Context::from_waker(&waker);
        let later = tokio::time::Instant::now() + Duration::from_secs(3600);
        let mut outside = Box::pin(DefaultTimer::after(Duration::from_secs(3600)));
        assert!(
            matches!(*outside, DefaultTimer::At(_)),
            "not made before a poll"
        );
        assert!(outside.as_mut().poll(&mut cx).is_pending());
        assert!(matches!(*outside, DefaultTimer::Thread(_)));
        // Reset to now: it ends.
        outside.as_mut().reset(tokio::time::Instant::now());
        let started = Instant::now();
        while outside.as_mut().poll(&mut cx).is_pending() {
            assert!(started.elapsed() < Duration::from_secs(10), "never ended");
            std::thread::sleep(Duration::from_millis(1));
        }

        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let mut inside = Box::pin(DefaultTimer::until(later));
        inside.as_mut().reset(tokio::time::Instant::now());
        runtime.block_on(async {
            assert!(matches!(*inside, DefaultTimer::At(_)));
            inside.as_mut().await;
            assert!(matches!(*inside, DefaultTimer::Tokio(_)));
        });
    }
}
