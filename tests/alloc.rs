//! Heap allocations of retried calls, counted by a global allocator: the
//! success path must make none, nor the retries of a sync call.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::future::Future;
use std::io::{self, ErrorKind};
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use reattempt::dynamic::{DynamicPolicy, PolicyCell};
use reattempt::retry;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded to `System` unchanged; counting touches a
// const-initialised thread-local, which never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: forwarded with the caller's arguments.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Allocations made on this thread by `f`.
fn allocations<T>(f: impl FnOnce() -> T) -> (usize, T) {
    let before = ALLOCATIONS.with(Cell::get);
    let value = f();
    (ALLOCATIONS.with(Cell::get) - before, value)
}

fn no_wait(_: Duration) {}

#[retry(max = 5, backoff = exp, jitter)]
fn plain(x: u64) -> io::Result<u64> {
    Ok(std::hint::black_box(x))
}

#[retry(max = 5, backoff = exp, jitter = decorrelated, deadline = 10s)]
fn with_deadline(x: u64) -> io::Result<u64> {
    Ok(std::hint::black_box(x))
}

static RELOADED: PolicyCell = PolicyCell::new(DynamicPolicy::new());

#[retry(max = 5, backoff = exp, jitter, policy = RELOADED)]
fn configured(x: u64) -> io::Result<u64> {
    Ok(x)
}

#[retry(max = 5, backoff = exp, jitter)]
async fn plain_async(x: u64) -> io::Result<u64> {
    Ok(std::hint::black_box(x))
}

#[retry(max = 5, backoff = exp, jitter, sleep = no_wait)]
fn fails(calls: &Cell<u32>, times: u32) -> io::Result<u32> {
    calls.set(calls.get() + 1);
    if calls.get() <= times {
        return Err(ErrorKind::TimedOut.into());
    }
    Ok(calls.get())
}

#[retry(max = 5, backoff = fixed(1ms))]
async fn fails_async(calls: &Cell<u32>, times: u32) -> io::Result<u32> {
    calls.set(calls.get() + 1);
    if calls.get() <= times {
        return Err(ErrorKind::TimedOut.into());
    }
    Ok(calls.get())
}

#[retry(max = 5, backoff = none)]
async fn fails_async_at_once(calls: &Cell<u32>, times: u32) -> io::Result<u32> {
    calls.set(calls.get() + 1);
    if calls.get() <= times {
        return Err(ErrorKind::TimedOut.into());
    }
    Ok(calls.get())
}

/// Polls a future that needs no waking to completion.
fn run<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

#[test]
fn the_success_path_never_allocates() {
    let (n, out) = allocations(|| plain(7));
    assert_eq!(out.unwrap(), 7);
    assert_eq!(n, 0, "sync success");

    let (n, out) = allocations(|| with_deadline(7));
    assert_eq!(out.unwrap(), 7);
    assert_eq!(n, 0, "sync success with a deadline");

    let (n, out) = allocations(|| run(plain_async(7)));
    assert_eq!(out.unwrap(), 7);
    assert_eq!(n, 0, "async success");
}

/// A call reads its `PolicyCell` as it starts: after the cell was set, and
/// again once this thread has its copy, the read allocates nothing.
#[test]
fn reading_a_reloaded_policy_allocates_nothing() {
    let (n, out) = allocations(|| configured(7));
    assert_eq!(out.unwrap(), 7);
    assert_eq!(n, 0, "a cell never set");
    RELOADED.set(DynamicPolicy::new().max_attempts(3));
    for read in ["the first read after a set", "a cached read"] {
        let (n, out) = allocations(|| configured(7));
        assert_eq!(out.unwrap(), 7);
        assert_eq!(n, 0, "{read}");
    }
}

#[test]
fn a_failing_sync_call_never_allocates_however_many_retries() {
    // The first jittered retry on a thread seeds from the thread RNG, which
    // allocates its state once.
    fails(&Cell::new(0), 1).unwrap();
    for retries in [1, 2, 4] {
        let (n, out) = allocations(|| fails(&Cell::new(0), retries));
        assert_eq!(out.unwrap(), retries + 1);
        // The failure state comes from the thread's spare, which the
        // first call above left.
        assert_eq!(n, 0, "{retries} retries");
    }
}

#[test]
fn a_failing_async_call_reuses_a_failure_state_however_many_retries() {
    // The first failure on a thread boxes a failure state; each call that
    // ends gives its box back for the next one.
    run(fails_async_at_once(&Cell::new(0), 1)).unwrap();
    for retries in [1, 2, 4] {
        let (n, out) = allocations(|| run(fails_async_at_once(&Cell::new(0), retries)));
        assert_eq!(out.unwrap(), retries + 1);
        assert_eq!(n, 0, "{retries} retries");
    }
}

/// A runtime on a paused clock, after one failing call that made the
/// runtime's first timer and left a spare failure state.
fn warmed_paused_runtime() -> tokio::runtime::Runtime {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(fails_async(&Cell::new(0), 1)).unwrap();
    runtime
}

#[test]
fn calls_alive_at_once_each_get_a_failure_state_of_their_own() {
    let runtime = warmed_paused_runtime();
    // Both fail before either ends: one takes the spare state, the other
    // boxes its own, and each makes its timer.
    let (first, second) = (Cell::new(0), Cell::new(0));
    let (n, (a, b)) = allocations(|| {
        runtime.block_on(async { tokio::join!(fails_async(&first, 2), fails_async(&second, 1)) })
    });
    assert_eq!((a.unwrap(), b.unwrap()), (3, 2));
    assert_eq!(n, 3, "one new state and two timers");
}

#[test]
fn an_async_call_allocates_only_its_timer_once() {
    let runtime = warmed_paused_runtime();
    for retries in [1, 2, 4] {
        let (n, out) = allocations(|| runtime.block_on(fails_async(&Cell::new(0), retries)));
        assert_eq!(out.unwrap(), retries + 1);
        // Tokio's timer entry, reused for every wait of the call; the
        // failure state is the one the last call gave back.
        assert_eq!(n, 1, "{retries} retries");
    }
}

/// A `fmt::Write` into a fixed buffer, so that formatting itself cannot
/// allocate.
struct Fixed {
    bytes: [u8; 64],
    len: usize,
}

impl std::fmt::Write for Fixed {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        self.bytes
            .get_mut(self.len..end)
            .ok_or(std::fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[test]
fn writing_a_call_id_allocates_nothing() {
    use std::fmt::Write as _;

    let id = reattempt::CallId::random();
    let mut out = Fixed {
        bytes: [0; 64],
        len: 0,
    };
    let (allocations, result) = allocations(|| write!(out, "{id}"));
    result.unwrap();
    assert_eq!(allocations, 0);
    assert_eq!(out.len, 36);
}

static HISTORY: reattempt::dead_letter::Memory = reattempt::dead_letter::Memory::new();

#[retry(max = 3, backoff = none, dead_letter = HISTORY)]
async fn recorded(calls: &Cell<u32>, times: u32) -> io::Result<u32> {
    calls.set(calls.get() + 1);
    if calls.get() <= times {
        return Err(ErrorKind::TimedOut.into());
    }
    Ok(calls.get())
}

#[test]
fn a_reused_failure_state_starts_as_new() {
    // Gives up after three attempts, leaving its state as the spare.
    assert!(run(recorded(&Cell::new(0), 5)).is_err());
    // Takes the spare: one retry, then a success.
    assert_eq!(run(recorded(&Cell::new(0), 1)).unwrap(), 2);
    // Takes it again and gives up: its record holds its own three attempts.
    assert!(run(recorded(&Cell::new(0), 5)).is_err());
    let records = HISTORY.take();
    assert_eq!(records.len(), 2);
    for record in &records {
        let attempts: Vec<u32> = record.history.iter().map(|a| a.attempt).collect();
        assert_eq!(attempts, [1, 2, 3]);
    }
}

/// The first attempt never ends; a hedge answers at once.
#[retry(max = 3, backoff = none, hedge = 10ms)]
async fn hedged(x: u64) -> io::Result<u64> {
    if reattempt::attempt().unwrap().number() == 1 {
        std::future::pending::<()>().await;
    }
    Ok(std::hint::black_box(x))
}

#[test]
fn a_hedged_call_allocates_nothing() {
    let runtime = warmed_paused_runtime();
    // A first attempt that ends at its first poll, and a slow one whose
    // hedge answers: the attempts in flight are held in the call's future.
    // Each future pinned here and polled through a reference: the
    // runtime's `block_on` would box a large future by value.
    let (n, out) = allocations(|| runtime.block_on(pin!(plain_hedged(7))));
    assert_eq!((n, out.unwrap()), (0, 7));
    for x in 0..3 {
        let (n, out) = allocations(|| runtime.block_on(pin!(hedged(x))));
        assert_eq!((n, out.unwrap()), (0, x));
    }
}

#[retry(max = 3, backoff = none, hedge = 10ms)]
async fn plain_hedged(x: u64) -> io::Result<u64> {
    Ok(std::hint::black_box(x))
}
