//! Where the body stands: [`attempt()`] gives the attempt in progress and
//! the call's id to a body that wants them (for an idempotency key or an
//! attempt-count header).

use core::cell::Cell;
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::ptr;
use core::sync::atomic::{AtomicU64, Ordering};
use core::task::{Context, Poll};

use crate::limit::{Acquire, ConcurrencyLimit, Permit};

/// The attempt in progress of a retried call.
///
/// ```
/// use retry::retry;
///
/// #[retry(max = 3, backoff = none)]
/// fn send(sent: &mut Vec<(u32, String)>) -> std::io::Result<()> {
///     let attempt = retry::attempt().expect("inside a retried call");
///     sent.push((attempt.number(), attempt.call_id().to_string()));
///     if attempt.number() < 3 {
///         return Err(std::io::ErrorKind::TimedOut.into());
///     }
///     Ok(())
/// }
///
/// let mut sent = Vec::new();
/// send(&mut sent).unwrap();
/// assert_eq!(sent.iter().map(|s| s.0).collect::<Vec<_>>(), [1, 2, 3]);
/// assert!(sent.iter().all(|s| s.1 == sent[0].1), "one id for every attempt");
/// assert!(retry::attempt().is_none());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attempt {
    number: u32,
    max: Option<u32>,
    call_id: CallId,
}

impl Attempt {
    /// The attempt's number: 1 for the first.
    pub const fn number(&self) -> u32 {
        self.number
    }

    /// Most attempts of this call, or `None` when unbounded.
    pub const fn max(&self) -> Option<u32> {
        self.max
    }

    /// Whether no attempt may follow this one (it is the `max`-th).
    pub const fn is_last(&self) -> bool {
        match self.max {
            Some(max) => self.number >= max,
            None => false,
        }
    }

    /// The id of the call, the same on every attempt of it.
    pub const fn call_id(&self) -> CallId {
        self.call_id
    }
}

/// A random 128-bit id of one retried call, written as a UUID (version 4),
/// fit to send as an `Idempotency-Key`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CallId(u128);

impl CallId {
    /// A new random id.
    pub fn random() -> CallId {
        let bits: u128 = rand::random();
        // Version 4 and the RFC 4122 variant, so it reads as a UUID.
        let bits = (bits & !(0xF << 76) & !(0x3 << 62)) | (0x4 << 76) | (0x2 << 62);
        CallId(bits)
    }

    /// The id as a number.
    pub const fn as_u128(&self) -> u128 {
        self.0
    }
}

impl fmt::Display for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hex = format!("{:032x}", self.0);
        write!(
            f,
            "{}-{}-{}-{}-{}",
            &hex[0..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..32]
        )
    }
}

impl fmt::Debug for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CallId({self})")
    }
}

/// The attempt in progress, or `None` outside the body of a retried call.
///
/// The call id is drawn the first time it is asked for, so calls that never
/// ask pay nothing for it.
pub fn attempt() -> Option<Attempt> {
    let frame = CURRENT.get();
    if frame.is_null() {
        return None;
    }
    // SAFETY: `CURRENT` is non-null only inside `Frame::enter`, which holds
    // the borrow it points to and restores the previous value before that
    // borrow ends, unwinding included.
    let frame = unsafe { &*frame };
    let mut call_id = frame.call_id.get();
    if call_id == 0 {
        call_id = CallId::random().0;
        frame.call_id.set(call_id);
    }
    Some(Attempt {
        number: frame.number,
        max: frame.max,
        call_id: CallId(call_id),
    })
}

thread_local! {
    static CURRENT: Cell<*const Frame> = const { Cell::new(ptr::null()) };
}

/// What [`attempt()`] reads while an attempt runs: a small local, so that
/// the call itself never escapes into thread-local storage.
#[derive(Debug)]
pub(crate) struct Frame {
    pub(crate) name: &'static str,
    pub(crate) number: u32,
    pub(crate) max: Option<u32>,
    /// Zero until first asked for (a version 4 id is never zero).
    pub(crate) call_id: Cell<u128>,
}

impl Frame {
    /// Runs `f` with this frame as the one [`attempt()`] sees.
    #[inline]
    pub(crate) fn enter<T>(&self, f: impl FnOnce() -> T) -> T {
        struct Restore(*const Frame);

        impl Drop for Restore {
            #[inline]
            fn drop(&mut self) {
                CURRENT.set(self.0);
            }
        }

        let _restore = Restore(CURRENT.replace(self));
        f()
    }
}

/// The name of the retried call whose attempt is running on this thread, if
/// any: the outer call when a retried call runs inside another.
pub(crate) fn outer() -> Option<&'static str> {
    let frame = CURRENT.get();
    if frame.is_null() {
        return None;
    }
    // SAFETY: as in `attempt()`.
    Some(unsafe { &*frame }.name)
}

/// A call's id once drawn, kept between attempts. Atomic because an async
/// call's attempts may run on different threads.
#[derive(Debug, Default)]
pub(crate) struct CallIdCell([AtomicU64; 2]);

impl CallIdCell {
    #[inline]
    pub(crate) fn get(&self) -> u128 {
        let [high, low] = &self.0;
        (u128::from(high.load(Ordering::Relaxed)) << 64) | u128::from(low.load(Ordering::Relaxed))
    }

    #[inline]
    pub(crate) fn set(&self, id: u128) {
        let [high, low] = &self.0;
        high.store((id >> 64) as u64, Ordering::Relaxed);
        low.store(id as u64, Ordering::Relaxed);
    }
}

/// An attempt's future, seen by [`attempt()`] on every poll, holding a
/// permit of the call's concurrency limit (waiting for one first) while it
/// runs.
#[derive(Debug)]
pub struct Scoped<'c, F> {
    frame: Frame,
    call_id: &'c CallIdCell,
    waiting: Option<Acquire<'c>>,
    permit: Option<Permit<'c>>,
    future: Pin<&'c mut F>,
}

impl<'c, F> Scoped<'c, F> {
    pub(crate) fn new(
        frame: Frame,
        call_id: &'c CallIdCell,
        limit: Option<&'c ConcurrencyLimit>,
        future: Pin<&'c mut F>,
    ) -> Scoped<'c, F> {
        Scoped {
            frame,
            call_id,
            waiting: limit.map(ConcurrencyLimit::acquire),
            permit: None,
            future,
        }
    }
}

impl<F: Future> Future for Scoped<'_, F> {
    type Output = F::Output;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        if let Some(waiting) = &mut this.waiting {
            match Pin::new(waiting).poll(cx) {
                Poll::Ready(permit) => {
                    this.permit = Some(permit);
                    this.waiting = None;
                }
                Poll::Pending => return Poll::Pending,
            }
        }
        let before = this.frame.call_id.get();
        let poll = this.frame.enter(|| this.future.as_mut().poll(cx));
        let after = this.frame.call_id.get();
        if after != before {
            this.call_id.set(after);
        }
        if poll.is_ready() {
            // The attempt is over: free the slot before the wait.
            this.permit = None;
        }
        poll
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_ids_read_as_version_4_uuids() {
        let id = CallId::random().to_string();
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4");
        assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"), "{id}");
        assert_ne!(CallId::random(), CallId::random());
    }

    #[test]
    fn the_current_frame_is_restored_after_a_nested_one_and_after_a_panic() {
        let frame = |number, max| Frame {
            name: "t",
            number,
            max,
            call_id: Cell::new(0),
        };
        let (outer, inner) = (frame(1, Some(3)), frame(2, None));
        outer.enter(|| {
            let first = attempt().unwrap().call_id();
            inner.enter(|| {
                assert_eq!(attempt().unwrap().number(), 2);
                assert_eq!(attempt().unwrap().max(), None);
            });
            assert_eq!(attempt().unwrap().max(), Some(3));
            assert_eq!(attempt().unwrap().call_id(), first);
            let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                inner.enter(|| panic!("hook panicked"));
            }));
            assert!(unwound.is_err());
            assert_eq!(attempt().unwrap().max(), Some(3));
        });
        assert_ne!(outer.call_id.get(), 0, "the id drawn inside is kept");
        assert_ne!(inner.call_id.get(), outer.call_id.get());
        assert!(attempt().is_none());
    }
}
