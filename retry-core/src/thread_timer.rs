//! Timers for a task polled outside any tokio runtime: one thread, made
//! at the first such timer, keeps every pending timer's deadline in order
//! and wakes each task when its deadline comes.
//!
//! One thread for all of them, not one each: an executor with many calls
//! in flight would otherwise start a thread for each of their timers, and
//! a failure to start one would end that timer early.

use core::task::{Context, Poll, Waker};
use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// A timer that ends at its deadline, woken by the timers' thread.
#[derive(Debug)]
pub struct ThreadTimer {
    deadline: Instant,
    /// Tells timers with one deadline apart in the thread's list.
    id: u64,
    /// Whether the thread's list holds this timer, under its deadline.
    listed: bool,
}

/// The pending timers, by deadline, and the thread that ends them.
#[derive(Debug)]
struct Timers {
    pending: Mutex<BTreeMap<(Instant, u64), Waker>>,
    /// Signalled when a timer is listed ahead of every other.
    sooner: Condvar,
    /// Whether the thread runs: false if it could not be started.
    thread: OnceLock<bool>,
}

static TIMERS: Timers = Timers {
    pending: Mutex::new(BTreeMap::new()),
    sooner: Condvar::new(),
    thread: OnceLock::new(),
};

impl Timers {
    /// The list, even after a panic elsewhere held its lock: each change
    /// to it is one insertion or removal, whole, so nothing is lost by
    /// reading on.
    fn pending(&self) -> MutexGuard<'_, BTreeMap<(Instant, u64), Waker>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the thread runs, starting it the first time.
    fn running(&'static self) -> bool {
        *self.thread.get_or_init(|| {
            std::thread::Builder::new()
                .name("reattempt-timer".into())
                .spawn(move || self.run())
                .is_ok()
        })
    }

    /// The thread: wakes each task whose deadline has come, then sleeps
    /// until the next deadline, or until a sooner one is listed.
    fn run(&self) {
        let mut pending = self.pending();
        loop {
            let now = Instant::now();
            let mut due = Vec::new();
            while let Some(entry) = pending.first_entry() {
                if entry.key().0 > now {
                    break;
                }
                due.push(entry.remove());
            }
            if !due.is_empty() {
                // Woken without the lock, so that a task polled at once on
                // another thread does not wait for it. An executor's waker
                // that panics ends no other task's timer with this thread.
                drop(pending);
                for waker in due {
                    let _ = std::panic::catch_unwind(AssertUnwindSafe(|| waker.wake()));
                }
                pending = self.pending();
                continue;
            }
            pending = match pending.keys().next() {
                // Capped, so that a deadline decades away (a wait for
                // ever) is no timeout the platform might refuse.
                Some(&(at, _)) => {
                    let left = (at - now).min(Duration::from_secs(3600));
                    self.sooner
                        .wait_timeout(pending, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
                None => self
                    .sooner
                    .wait(pending)
                    .unwrap_or_else(PoisonError::into_inner),
            };
        }
    }
}

impl ThreadTimer {
    pub(crate) fn until(deadline: Instant) -> ThreadTimer {
        static IDS: AtomicU64 = AtomicU64::new(0);
        ThreadTimer {
            deadline,
            id: IDS.fetch_add(1, Ordering::Relaxed),
            listed: false,
        }
    }

    /// Ends the timer at `deadline` instead, listed again at its next poll.
    pub(crate) fn reset(&mut self, deadline: Instant) {
        self.unlist();
        self.deadline = deadline;
    }

    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.deadline {
            self.unlist();
            return Poll::Ready(());
        }
        if !TIMERS.running() {
            // No thread to wake the task: the timer ends now, as a wait
            // cut short rather than one that never ends.
            return Poll::Ready(());
        }
        let key = (self.deadline, self.id);
        let mut pending = TIMERS.pending();
        // Listed again at each poll, with that poll's waker: a task may
        // move between threads.
        pending.insert(key, cx.waker().clone());
        self.listed = true;
        if pending.keys().next() == Some(&key) {
            TIMERS.sooner.notify_one();
        }
        Poll::Pending
    }

    fn unlist(&mut self) {
        if self.listed {
            TIMERS.pending().remove(&(self.deadline, self.id));
            self.listed = false;
        }
    }
}

impl Drop for ThreadTimer {
    fn drop(&mut self) {
        self.unlist();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
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

    /// Waits, at most ten seconds, until `count` reaches `at_least`.
    fn woken(count: &Count, at_least: usize) -> bool {
        let started = Instant::now();
        while count.0.load(Ordering::SeqCst) < at_least {
            if started.elapsed() > Duration::from_secs(10) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        true
    }

    fn listed(timer: &ThreadTimer) -> bool {
        TIMERS.pending().contains_key(&(timer.deadline, timer.id))
    }

    #[test]
    fn a_timer_ends_at_its_deadline_and_wakes_the_task() {
        let (count, waker) = waker();
        let mut cx = Context::from_waker(&waker);
        let started = Instant::now();
        let mut timer = ThreadTimer::until(started + Duration::from_millis(20));
        assert!(timer.poll(&mut cx).is_pending());
        assert!(woken(&count, 1), "never woken");
        assert!(started.elapsed() >= Duration::from_millis(20));
        assert!(timer.poll(&mut cx).is_ready());
        assert!(!listed(&timer));
    }

    #[test]
    fn a_timer_reset_ends_at_its_new_deadline() {
        let (count, waker) = waker();
        let mut cx = Context::from_waker(&waker);
        let mut timer = ThreadTimer::until(Instant::now() + Duration::from_secs(3600));
        assert!(timer.poll(&mut cx).is_pending());
        let started = Instant::now();
        timer.reset(started + Duration::from_millis(10));
        assert!(timer.poll(&mut cx).is_pending());
        assert!(woken(&count, 1), "the reset did not move it");
        assert!(started.elapsed() >= Duration::from_millis(10));
        assert!(timer.poll(&mut cx).is_ready());
    }

    #[test]
    fn a_waker_that_panics_ends_no_other_timer() {
        struct Panics;

        impl Wake for Panics {
            fn wake(self: Arc<Self>) {
                panic!("a broken executor");
            }
        }

        let broken = Waker::from(Arc::new(Panics));
        let started = Instant::now();
        let mut first = ThreadTimer::until(started + Duration::from_millis(5));
        assert!(first.poll(&mut Context::from_waker(&broken)).is_pending());
        let (count, waker) = waker();
        let mut second = ThreadTimer::until(started + Duration::from_millis(30));
        assert!(second.poll(&mut Context::from_waker(&waker)).is_pending());
        assert!(woken(&count, 1), "the thread ended with the panic");
    }

    #[test]
    fn a_dropped_timer_leaves_the_list() {
        let (_, waker) = waker();
        let mut timer = ThreadTimer::until(Instant::now() + Duration::from_secs(3600));
        assert!(timer.poll(&mut Context::from_waker(&waker)).is_pending());
        assert!(listed(&timer));
        let key = (timer.deadline, timer.id);
        drop(timer);
        assert!(!TIMERS.pending().contains_key(&key));
    }

    #[test]
    fn one_thread_ends_many_timers_in_the_order_of_their_deadlines() {
        let started = Instant::now();
        // Listed latest first, so that each one is the soonest when listed.
        let timers: Vec<_> = (1..=200u32)
            .rev()
            .map(|i| {
                let (count, waker) = waker();
                let mut timer = ThreadTimer::until(started + Duration::from_micros(100) * i);
                let pending = timer.poll(&mut Context::from_waker(&waker)).is_pending();
                (timer, count, waker, pending)
            })
            .collect();
        for (mut timer, count, waker, pending) in timers {
            if pending {
                assert!(woken(&count, 1), "a timer was never woken");
            }
            assert!(timer.poll(&mut Context::from_waker(&waker)).is_ready());
        }
        let threads = std::fs::read_dir("/proc/self/task").map(|tasks| {
            tasks
                .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
                .filter(|name| name.trim() == "reattempt-timer")
                .count()
        });
        if let Ok(threads) = threads {
            assert!(threads <= 1, "{threads} timer threads");
        }
    }
}
