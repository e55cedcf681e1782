//! A retried call's future kept, or dropped, by the body of another
//! retried call: the limit it was admitted under still bounds it once it
//! outlives the attempt that admitted it, and the destructors of its
//! attempt see its own call, never the one that drops it.
//!
//! Each future is polled by hand with a waker that does nothing, so that
//! the order of polls and drops is the test's, not an executor's.

mod common;

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use reattempt::{ConcurrencyLimit, retry};

type Fut<T> = Pin<Box<dyn Future<Output = io::Result<T>> + Send>>;

/// Pending until `go` is set; the test polls again.
struct Until(Arc<AtomicBool>);

impl Future for Until {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if self.0.load(Ordering::SeqCst) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// Polls the future it holds once, whatever that gives.
struct PollOnce<'a, T>(Pin<&'a mut (dyn Future<Output = T> + Send)>);

impl<T> Future for PollOnce<'_, T> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let _ = self.0.as_mut().poll(cx);
        Poll::Ready(())
    }
}

/// Polls `future` until it is ready, at most a thousand times.
fn poll_to_end<T>(future: Pin<&mut (dyn Future<Output = T> + Send + '_)>) -> T {
    let mut future = future;
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1_000 {
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
    }
    panic!("the future did not end");
}

fn poll_once<T>(future: Pin<&mut (dyn Future<Output = T> + Send + '_)>) -> Poll<T> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

static ONE: ConcurrencyLimit = ConcurrencyLimit::new(1);
/// The attempts of `work` running.
static RUNNING: common::Gauge = common::Gauge::new();

#[retry(max = 1, limit = ONE)]
async fn work(go: Arc<AtomicBool>) -> io::Result<()> {
    let _running = RUNNING.start();
    Until(go.clone()).await;
    Ok(())
}

#[retry(max = 1, limit = ONE)]
async fn starts_work(out: &Mutex<Option<Fut<()>>>, go: Arc<AtomicBool>) -> io::Result<()> {
    let mut nested: Fut<()> = Box::pin(work(go.clone()));
    // First polled inside this attempt, which holds ONE's permit...
    PollOnce(nested.as_mut()).await;
    // ...and kept past its end.
    *out.lock().unwrap() = Some(nested);
    Ok(())
}

#[test]
fn an_attempt_admitted_under_a_holders_permit_keeps_it_until_it_ends() {
    let out = Mutex::new(None);
    let first_go = Arc::new(AtomicBool::new(false));
    poll_to_end(Box::pin(starts_work(&out, first_go.clone())).as_mut()).unwrap();
    let mut first = out
        .lock()
        .unwrap()
        .take()
        .expect("the nested call was kept");
    assert_eq!(RUNNING.running(), 1, "the nested attempt runs");
    assert_eq!(
        ONE.in_use(),
        1,
        "and holds the permit it was admitted under"
    );

    let second_go = Arc::new(AtomicBool::new(true));
    let mut second: Fut<()> = Box::pin(work(second_go));
    assert!(poll_once(second.as_mut()).is_pending(), "it waits its turn");
    assert_eq!(RUNNING.peak(), 1, "a limit of one ran two attempts");

    first_go.store(true, Ordering::SeqCst);
    poll_to_end(first.as_mut()).unwrap();
    poll_to_end(second.as_mut()).unwrap();
    assert_eq!(RUNNING.peak(), 1, "a limit of one ran two attempts");
    assert_eq!((ONE.in_use(), ONE.waiting()), (0, 0));
}

/// What the destructor of a guard in `holds_guard`'s body saw, and the id of
/// the call it belongs to.
#[derive(Default)]
struct Seen {
    own: Mutex<Option<u128>>,
    guarded: AtomicBool,
    at_drop: Mutex<Vec<Option<u128>>>,
}

struct Guard(Arc<Seen>);

impl Drop for Guard {
    fn drop(&mut self) {
        let seen = reattempt::attempt().map(|a| a.call_id().as_u128());
        self.0.at_drop.lock().unwrap().push(seen);
    }
}

fn current_id() -> u128 {
    reattempt::attempt()
        .expect("inside a retried call")
        .call_id()
        .as_u128()
}

/// The body of `holds_guard`: fails its first attempt when `fail_first`
/// is set, so that the guard of its second is dropped; waits for `go` in
/// every attempt.
async fn guarded(seen: &Arc<Seen>, fail_first: bool, go: &Arc<AtomicBool>) -> io::Result<u128> {
    *seen.own.lock().unwrap() = Some(current_id());
    if fail_first && reattempt::attempt().unwrap().number() == 1 {
        return Err(io::ErrorKind::ConnectionReset.into());
    }
    let _guard = Guard(seen.clone());
    seen.guarded.store(true, Ordering::SeqCst);
    Until(go.clone()).await;
    Ok(0)
}

#[retry(max = 2, backoff = none)]
async fn holds_guard(seen: Arc<Seen>, fail_first: bool, go: Arc<AtomicBool>) -> io::Result<u128> {
    guarded(&seen, fail_first, &go).await
}

static WIDE: ConcurrencyLimit = ConcurrencyLimit::new(64);

/// `holds_guard` under a limit: its attempts are wrapped otherwise.
#[retry(max = 2, backoff = none, limit = WIDE)]
async fn holds_guard_limited(
    seen: Arc<Seen>,
    fail_first: bool,
    go: Arc<AtomicBool>,
) -> io::Result<u128> {
    guarded(&seen, fail_first, &go).await
}

#[retry(max = 2, backoff = none)]
fn drops_it(victim: &Mutex<Option<Fut<u128>>>) -> io::Result<u128> {
    drop(victim.lock().unwrap().take());
    Ok(current_id())
}

#[retry(max = 2, backoff = none)]
async fn drops_it_async(victim: &Mutex<Option<Fut<u128>>>) -> io::Result<u128> {
    drop(victim.lock().unwrap().take());
    Ok(current_id())
}

/// Starts `holds_guard` (failing its first attempt or not, under a limit
/// or not), has a retried call drop it in its body, and gives what the
/// guard saw, the victim's id and the dropper's.
fn dropped_by(fail_first: bool, limited: bool, sync: bool) -> (Vec<Option<u128>>, u128, u128) {
    let seen = Arc::new(Seen::default());
    let go = Arc::new(AtomicBool::new(false));
    let mut victim: Fut<u128> = if limited {
        Box::pin(holds_guard_limited(seen.clone(), fail_first, go))
    } else {
        Box::pin(holds_guard(seen.clone(), fail_first, go))
    };
    // With `fail_first`, the second attempt, after a retry of no delay,
    // holds the guard.
    for _ in 0..10 {
        assert!(poll_once(victim.as_mut()).is_pending());
        if seen.guarded.load(Ordering::SeqCst) {
            break;
        }
    }
    assert!(
        seen.guarded.load(Ordering::SeqCst),
        "the victim holds its guard"
    );
    let victim = Mutex::new(Some(victim));
    let dropper = if sync {
        drops_it(&victim).unwrap()
    } else {
        poll_to_end(Box::pin(drops_it_async(&victim)).as_mut()).unwrap()
    };
    let own = seen.own.lock().unwrap().expect("the victim ran");
    let at_drop = seen.at_drop.lock().unwrap().clone();
    (at_drop, own, dropper)
}

#[test]
fn a_cancelled_attempts_destructors_see_their_own_call_never_the_droppers() {
    for (fail_first, limited, sync) in (0..8).map(|i| (i & 1 == 1, i & 2 == 2, i & 4 == 4)) {
        let (at_drop, own, dropper) = dropped_by(fail_first, limited, sync);
        let what = format!(
            "first attempt failed: {fail_first}, limited: {limited}, dropped by a sync call: {sync}"
        );
        assert_eq!(at_drop.len(), 1, "{what}: one guard dropped");
        assert_ne!(at_drop[0], Some(dropper), "{what}: the dropper's call");
        assert!(
            at_drop[0].is_none() || at_drop[0] == Some(own),
            "{what}: saw {:?}, its own call is {own}",
            at_drop[0]
        );
    }
}
