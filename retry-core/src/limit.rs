//! A concurrency limit: at most N attempts of all the functions that share
//! it run at once, sync and async alike.
//!
//! A permit is held only while an attempt runs, never during the wait
//! before the next one, so a call that is backing off does not hold a slot
//! another call could use. Waiters are served first come, first served,
//! threads and tasks in one queue; a task that stops waiting (its future is
//! dropped) leaves the queue, and a permit it was just given passes on.
//!
//! A retried call nested in an attempt that holds a permit of the same
//! limit, on the same thread or task, runs under that permit instead of
//! waiting for a second one: with every permit held by such outer calls,
//! none would ever be free. It shares the permit rather than borrowing it:
//! the slot is free again only when the last attempt sharing it ends, so
//! a nested future that outlives the attempt that admitted it still counts.
//!
//! A call's deadline ends its wait for a permit when its error type can
//! stand for a timeout, or, for a retry, when the last attempt's error can
//! be returned instead: the attempt does not run.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// At most `max` attempts at once, across the functions that name it. Build
/// it as a `static`:
///
/// ```
/// use reattempt::{ConcurrencyLimit, retry};
///
/// static DATABASE: ConcurrencyLimit = ConcurrencyLimit::new(8);
///
/// #[retry(max = 3, limit = DATABASE)]
/// fn query() -> std::io::Result<u32> {
///     Ok(1)
/// }
/// # query().unwrap();
/// assert_eq!(DATABASE.in_use(), 0);
/// ```
#[derive(Debug)]
pub struct ConcurrencyLimit {
    max: usize,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    in_use: usize,
    next_id: u64,
    /// Waiting callers, in arrival order.
    queue: VecDeque<Waiter>,
    /// Waiters that were handed a permit and have not yet taken it.
    granted: Vec<u64>,
    /// Slots held by more than one permit, with how many more: a slot is
    /// free again when its last permit drops.
    shared: Vec<(u64, usize)>,
}

#[derive(Debug)]
struct Waiter {
    id: u64,
    wake: Wake,
}

#[derive(Debug)]
enum Wake {
    Thread(Thread),
    Task(Waker),
}

impl Wake {
    fn wake(self) {
        match self {
            Wake::Thread(thread) => thread.unpark(),
            Wake::Task(waker) => waker.wake(),
        }
    }
}

impl ConcurrencyLimit {
    /// A limit of `max` attempts at once (`0` is read as `1`).
    pub const fn new(max: usize) -> ConcurrencyLimit {
        ConcurrencyLimit {
            max: if max == 0 { 1 } else { max },
            state: Mutex::new(State {
                in_use: 0,
                next_id: 0,
                queue: VecDeque::new(),
                granted: Vec::new(),
                shared: Vec::new(),
            }),
        }
    }

    /// Most attempts at once.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Attempts running now.
    pub fn in_use(&self) -> usize {
        self.lock().in_use
    }

    /// Callers waiting for a permit now.
    pub fn waiting(&self) -> usize {
        self.lock().queue.len()
    }

    /// A permit, blocking the thread until one is free.
    pub fn acquire_blocking(&self) -> Permit<'_> {
        let mut state = self.lock();
        if let Some(slot) = state.take_free(self.max) {
            return Permit { limit: self, slot };
        }
        let id = state.enqueue(Wake::Thread(std::thread::current()));
        loop {
            if state.take_grant(id) {
                return Permit {
                    limit: self,
                    slot: id,
                };
            }
            drop(state);
            std::thread::park();
            state = self.lock();
        }
    }

    /// A permit, blocking the thread until one is free or `timeout` has
    /// passed; `None` then, having left the queue. A permit handed over
    /// before it looks for the last time is taken, never lost.
    pub(crate) fn acquire_blocking_within(&self, timeout: Duration) -> Option<Permit<'_>> {
        let mut state = self.lock();
        if let Some(slot) = state.take_free(self.max) {
            return Some(Permit { limit: self, slot });
        }
        // A timeout past what an `Instant` holds is no timeout.
        let Some(until) = Instant::now().checked_add(timeout) else {
            drop(state);
            return Some(self.acquire_blocking());
        };
        let id = state.enqueue(Wake::Thread(std::thread::current()));
        loop {
            if state.take_grant(id) {
                return Some(Permit {
                    limit: self,
                    slot: id,
                });
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                state.queue.retain(|w| w.id != id);
                return None;
            }
            drop(state);
            std::thread::park_timeout(left);
            state = self.lock();
        }
    }

    /// A future of a permit, waiting in line with the other callers.
    pub fn acquire(&self) -> Acquire<'_> {
        Acquire {
            limit: self,
            id: None,
        }
    }

    /// A permit, when one is free and nobody waits for one: for work that
    /// is skipped rather than queued (a hedge).
    pub(crate) fn try_acquire(&self) -> Option<Permit<'_>> {
        let slot = self.lock().take_free(self.max)?;
        Some(Permit { limit: self, slot })
    }

    /// One more permit of the slot `held` holds: for an attempt nested in
    /// the one holding `held`, which must not wait for a slot of its own.
    pub(crate) fn share(&self, held: u64) -> Permit<'_> {
        let mut state = self.lock();
        match state.shared.iter_mut().find(|(slot, _)| *slot == held) {
            Some((_, more)) => *more += 1,
            None => state.shared.push((held, 1)),
        }
        Permit {
            limit: self,
            slot: held,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while the lock was held leaves the counts
        // consistent: every change is a single step.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Hands a permit to the first waiter, or returns it.
    fn release(state: &mut State) {
        match state.queue.pop_front() {
            Some(waiter) => {
                state.granted.push(waiter.id);
                waiter.wake.wake();
            }
            None => state.in_use = state.in_use.saturating_sub(1),
        }
    }
}

impl State {
    /// A free slot, taken, when there is one and nobody waits for it.
    fn take_free(&mut self, max: usize) -> Option<u64> {
        if self.in_use < max && self.queue.is_empty() {
            self.in_use += 1;
            Some(self.new_id())
        } else {
            None
        }
    }

    /// An id no waiter or slot has, to name either.
    fn new_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        id
    }

    fn enqueue(&mut self, wake: Wake) -> u64 {
        let id = self.new_id();
        self.queue.push_back(Waiter { id, wake });
        id
    }

    /// Whether the slot lives on in another permit after one of its own
    /// drops: it is then still held.
    fn unshare(&mut self, slot: u64) -> bool {
        let Some(at) = self.shared.iter().position(|(s, _)| *s == slot) else {
            return false;
        };
        let more = &mut self.shared[at].1;
        *more -= 1;
        if *more == 0 {
            self.shared.swap_remove(at);
        }
        true
    }

    fn take_grant(&mut self, id: u64) -> bool {
        match self.granted.iter().position(|g| *g == id) {
            Some(at) => {
                self.granted.swap_remove(at);
                true
            }
            None => false,
        }
    }
}

/// The right to run one attempt; returned to the limit when dropped.
#[derive(Debug)]
#[must_use = "the permit is returned as soon as it is dropped"]
pub struct Permit<'a> {
    limit: &'a ConcurrencyLimit,
    /// The slot it holds, which other permits may share.
    slot: u64,
}

impl<'a> Permit<'a> {
    /// The limit this permit is of.
    pub(crate) fn limit(&self) -> &'a ConcurrencyLimit {
        self.limit
    }

    /// The slot it holds, for [`ConcurrencyLimit::share`].
    pub(crate) fn slot(&self) -> u64 {
        self.slot
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut state = self.limit.lock();
        if !state.unshare(self.slot) {
            ConcurrencyLimit::release(&mut state);
        }
    }
}

/// The future of [`ConcurrencyLimit::acquire`]. Dropping it leaves the
/// queue, passing on a permit it was handed in the meantime.
#[derive(Debug)]
pub struct Acquire<'a> {
    limit: &'a ConcurrencyLimit,
    id: Option<u64>,
}

impl<'a> Acquire<'a> {
    /// Whether it has not been polled yet (so it is in no queue).
    pub(crate) fn is_new(&self) -> bool {
        self.id.is_none()
    }

    /// The limit it waits on.
    pub(crate) fn limit(&self) -> &'a ConcurrencyLimit {
        self.limit
    }
}

impl<'a> Future for Acquire<'a> {
    type Output = Permit<'a>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Permit<'a>> {
        let limit = self.limit;
        let mut state = limit.lock();
        match self.id {
            None => {
                if let Some(slot) = state.take_free(limit.max) {
                    return Poll::Ready(Permit { limit, slot });
                }
                let id = state.enqueue(Wake::Task(cx.waker().clone()));
                drop(state);
                self.id = Some(id);
                Poll::Pending
            }
            Some(id) => {
                if state.take_grant(id) {
                    drop(state);
                    self.id = None;
                    return Poll::Ready(Permit { limit, slot: id });
                }
                if let Some(waiter) = state.queue.iter_mut().find(|w| w.id == id) {
                    waiter.wake = Wake::Task(cx.waker().clone());
                }
                Poll::Pending
            }
        }
    }
}

impl Drop for Acquire<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id else { return };
        let mut state = self.limit.lock();
        if state.take_grant(id) {
            ConcurrencyLimit::release(&mut state);
        } else {
            state.queue.retain(|w| w.id != id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn threads_never_exceed_the_limit_and_all_get_through() {
        let limit = Arc::new(ConcurrencyLimit::new(3));
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..16)
            .map(|_| {
                let (limit, running, peak) =
                    (Arc::clone(&limit), Arc::clone(&running), Arc::clone(&peak));
                std::thread::spawn(move || {
                    for _ in 0..20 {
                        let _permit = limit.acquire_blocking();
                        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                        peak.fetch_max(now, Ordering::SeqCst);
                        std::thread::yield_now();
                        running.fetch_sub(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let peak = peak.load(Ordering::SeqCst);
        assert!(peak <= 3, "{peak} at once");
        // Miri's scheduler switches threads too seldom to fill the limit.
        #[cfg(not(miri))]
        assert_eq!(peak, 3);
        assert_eq!(limit.in_use(), 0);
        assert_eq!(limit.waiting(), 0);
    }

    #[test]
    fn a_shared_slot_is_free_again_only_when_its_last_permit_drops() {
        let limit = ConcurrencyLimit::new(1);
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        for holder_first in [true, false] {
            let holder = limit.acquire_blocking();
            let sharer = limit.share(holder.slot());
            let mut waiting = Box::pin(limit.acquire());
            assert!(waiting.as_mut().poll(&mut cx).is_pending());
            let (first, last) = if holder_first {
                (holder, sharer)
            } else {
                (sharer, holder)
            };
            drop(first);
            assert!(
                waiting.as_mut().poll(&mut cx).is_pending(),
                "the slot is still held"
            );
            assert_eq!(limit.in_use(), 1);
            drop(last);
            let Poll::Ready(permit) = waiting.as_mut().poll(&mut cx) else {
                panic!("the slot passed on with its last permit");
            };
            drop(permit);
            assert_eq!((limit.in_use(), limit.waiting()), (0, 0));
        }
    }

    #[test]
    fn waiters_are_served_in_arrival_order() {
        let limit = ConcurrencyLimit::new(1);
        let held = limit.acquire_blocking();
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut first = Box::pin(limit.acquire());
        let mut second = Box::pin(limit.acquire());
        assert!(first.as_mut().poll(&mut cx).is_pending());
        assert!(second.as_mut().poll(&mut cx).is_pending());
        drop(held);
        assert!(
            second.as_mut().poll(&mut cx).is_pending(),
            "the second waits for the first"
        );
        let Poll::Ready(permit) = first.as_mut().poll(&mut cx) else {
            panic!("the first waiter gets the permit");
        };
        drop(permit);
        assert!(second.as_mut().poll(&mut cx).is_ready());
    }

    #[test]
    fn a_dropped_waiter_leaves_the_queue_and_passes_on_its_permit() {
        let limit = ConcurrencyLimit::new(1);
        let held = limit.acquire_blocking();
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut gone = Box::pin(limit.acquire());
        let mut next = Box::pin(limit.acquire());
        assert!(gone.as_mut().poll(&mut cx).is_pending());
        assert!(next.as_mut().poll(&mut cx).is_pending());
        drop(held); // granted to `gone`...
        drop(gone); // ...which passes it on.
        let Poll::Ready(permit) = next.as_mut().poll(&mut cx) else {
            panic!("the permit passed on");
        };
        assert_eq!(limit.in_use(), 1);
        drop(permit);
        assert_eq!(limit.in_use(), 0);

        let mut abandoned = Box::pin(limit.acquire());
        let held = limit.acquire_blocking();
        assert!(abandoned.as_mut().poll(&mut cx).is_pending());
        drop(abandoned);
        assert_eq!(limit.waiting(), 0);
        drop(held);
        assert_eq!(limit.in_use(), 0);
    }

    #[test]
    fn a_thread_that_waits_too_long_leaves_the_queue_and_one_in_time_gets_the_permit() {
        let limit = ConcurrencyLimit::new(1);
        let held = limit.acquire_blocking();
        assert!(
            limit
                .acquire_blocking_within(Duration::from_millis(20))
                .is_none(),
            "the only permit is held"
        );
        assert_eq!(limit.waiting(), 0, "it left the queue");
        std::thread::scope(|threads| {
            let waiting = threads.spawn(|| {
                limit
                    .acquire_blocking_within(Duration::from_secs(60))
                    .is_some()
            });
            // Bounded: the thread queues at once.
            for _ in 0..10_000 {
                if limit.waiting() == 1 {
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            assert_eq!(limit.waiting(), 1);
            drop(held);
            assert!(waiting.join().unwrap(), "released before its time ran out");
        });
        assert_eq!(limit.in_use(), 0);
        assert!(
            limit.acquire_blocking_within(Duration::MAX).is_some(),
            "a free permit, whatever the timeout"
        );
    }
}
