//! Where the body stands: [`attempt()`] gives the attempt in progress and
//! the call's id to a body that wants them (for an idempotency key or an
//! attempt-count header).

use core::cell::{Cell, RefCell};
use core::future::Future;
use core::marker::PhantomData;
use core::mem;
use core::num::NonZeroU32;
use core::pin::Pin;
use core::ptr;
use core::task::{Context, Poll};

use crate::call_id::{CallId, CallIdCell};
use crate::limit::{ConcurrencyLimit, Permit};
use crate::site::Site;

/// The attempt in progress of a retried call.
///
/// ```
/// use reattempt::retry;
///
/// #[retry(max = 3, backoff = none)]
/// fn send(sent: &mut Vec<(u32, String)>) -> std::io::Result<()> {
///     let attempt = reattempt::attempt().expect("inside a retried call");
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
/// assert!(reattempt::attempt().is_none());
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

/// The attempt in progress, or `None` outside the body of a retried call.
///
/// The call id is drawn the first time it is asked for, so calls that never
/// ask pay nothing for it.
pub fn attempt() -> Option<Attempt> {
    with_current(|frame| Attempt {
        number: frame.number,
        max: frame.max.map(NonZeroU32::get),
        call_id: frame.call_id.id(),
    })
}

thread_local! {
    static CURRENT: Cell<*const Frame> = const { Cell::new(ptr::null()) };
}

/// `f` of the frame of the attempt running on this thread, if any. Inline:
/// every retry asks ([`outer`]), from code made in the user's crate.
#[inline]
fn with_current<T>(f: impl FnOnce(&Frame) -> T) -> Option<T> {
    let frame = CURRENT.get();
    // SAFETY: `CURRENT` is non-null only while the `Entered` guard of
    // `Frame::entered`, or the `Polling` guard of a poll, lives, which
    // borrows the frame it points to and restores the previous value when
    // it drops, unwinding included (this crate never forgets one), or
    // between `Frame::enter_first` and `FirstEntered::leave`, whose guard
    // also borrows the frame and restores the value when it drops; the one
    // way to forget it, `judged`, takes the `Left` that only `leave`, which
    // restores the value, makes (the one caller, `run_sync`, holds one such
    // guard at a time, so the `Left` it passes is that guard's). `f` is
    // called here, in that time, with a reference it cannot keep (its
    // lifetime is any the caller's closure accepts).
    unsafe { frame.as_ref() }.map(f)
}

/// What [`attempt()`] reads while an attempt runs, kept by the call (or,
/// before a call is built, by its first attempt) and pointed at from
/// thread-local storage while an attempt runs: entering it is one store,
/// with nothing built on each poll.
#[doc(hidden)]
#[derive(Debug)]
pub struct Frame {
    /// The function's site, whose name is read only when asked for.
    pub(crate) site: &'static Site,
    pub(crate) number: u32,
    /// As the policy keeps it, converted only when asked for.
    pub(crate) max: Option<NonZeroU32>,
    pub(crate) call_id: CallIdCell,
}

thread_local! {
    /// The slots held by the attempts running on this thread, innermost
    /// last, each as the address of its limit and the slot: pushed while
    /// an attempt that holds a permit runs (`holding`, for `Call::scope`,
    /// and `Limited::poll`), and popped by its guard.
    static HELD: RefCell<Vec<(usize, u64)>> = const { RefCell::new(Vec::new()) };
}

/// The slot of `limit` held by an attempt running on this thread, this one
/// or one it was called from: a retried call nested in it then shares that
/// slot instead of waiting for a second one, which it could never get if
/// the limit were full of such outer calls.
pub(crate) fn held_slot(limit: &ConcurrencyLimit) -> Option<u64> {
    let address = ptr::from_ref(limit).addr();
    HELD.with_borrow(|held| {
        held.iter()
            .rev()
            .find(|(limit, _)| *limit == address)
            .map(|(_, slot)| *slot)
    })
}

impl Frame {
    /// The frame of a call's first attempt.
    #[inline]
    pub(crate) fn first(site: &'static Site, max: Option<NonZeroU32>) -> Frame {
        Frame {
            site,
            number: 1,
            max,
            call_id: CallIdCell::default(),
        }
    }

    /// The same frame, with the same id if the body drew it: for a call
    /// built in the place of its first attempt's state.
    #[inline]
    pub(crate) fn moved(&self) -> Frame {
        Frame {
            site: self.site,
            number: self.number,
            max: self.max,
            call_id: self.call_id.moved(),
        }
    }

    /// Runs `f` with this frame as the one [`attempt()`] sees.
    #[inline]
    pub(crate) fn enter<T>(&self, f: impl FnOnce() -> T) -> T {
        let _entered = self.entered();
        f()
    }

    /// Makes this frame the one [`attempt()`] sees until the guard drops,
    /// unwinding included. Not generic, so that the code of an attempt
    /// only calls it. Private, so that no guard escapes this module to be
    /// forgotten: `current` relies on each one dropping.
    #[inline]
    pub(crate) fn entered(&self) -> Entered<'_> {
        Entered {
            outer: CURRENT.replace(ptr::from_ref(self)),
            frame: PhantomData,
        }
    }

    /// Makes this frame, of the first attempt of a call that has no
    /// [`Call`](crate::call::Call) yet, the one [`attempt()`] sees until
    /// [`FirstEntered::leave`]. The guard stands for the call too: dropped,
    /// which only unwinding does (the attempt's, or the judgement's of its
    /// outcome), it puts back the frame that was current before and counts
    /// the call as cancelled, as a dropped call would be. One guard for
    /// both, instead of the frame's and one for the count: a function whose
    /// first attempt runs early compiles one landing pad, not two.
    #[inline]
    pub(crate) fn enter_first(&self) -> FirstEntered<'_> {
        FirstEntered {
            outer: CURRENT.replace(ptr::from_ref(self)),
            site: self.site,
            frame: PhantomData,
        }
    }
}

/// The first attempt of a call, entered by [`Frame::enter_first`].
#[must_use = "dropped, the guard counts the call as cancelled"]
pub(crate) struct FirstEntered<'a> {
    outer: *const Frame,
    site: &'static Site,
    /// The frame stays borrowed, so that it outlives its time as current.
    frame: PhantomData<&'a Frame>,
}

impl FirstEntered<'_> {
    /// The attempt returned: the frame that was current before is current
    /// again. The guard stays, to count the call as cancelled should the
    /// judgement of its outcome unwind, until it is [judged](Self::judged).
    /// Its drop puts back the same frame again, which changes nothing.
    #[inline]
    pub(crate) fn leave(&self) -> Left {
        CURRENT.set(self.outer);
        Left(())
    }

    /// The call goes on without unwinding: nothing is counted. Only the
    /// [`Left`] of [`leave`](Self::leave) allows it, so that no guard is
    /// forgotten with its frame still current.
    #[inline]
    pub(crate) fn judged(self, _left: Left) {
        mem::forget(self);
    }
}

/// Proof that a first attempt [left](FirstEntered::leave) its frame: what
/// [`FirstEntered::judged`] takes. One guard across the attempt and the
/// judgement of its outcome, not one for each, so that each function
/// compiles one landing pad for both.
#[must_use = "a first attempt that left its frame is judged next"]
pub(crate) struct Left(());

impl Drop for FirstEntered<'_> {
    #[cold]
    fn drop(&mut self) {
        CURRENT.set(self.outer);
        self.site.cancelled();
    }
}

/// A [`Frame`] entered; dropped, it puts back the frame that was current
/// before.
pub(crate) struct Entered<'a> {
    outer: *const Frame,
    frame: PhantomData<&'a Frame>,
}

impl Drop for Entered<'_> {
    #[inline]
    fn drop(&mut self) {
        CURRENT.set(self.outer);
    }
}

/// An attempt's poll: its call's frame made current and its span
/// entered, in one guard, so that the code of each function that polls an
/// attempt has one landing pad for both, not one each.
struct Polling<'a> {
    outer: *const Frame,
    span: Option<&'a tracing::Span>,
    frame: PhantomData<&'a Frame>,
}

impl<'a> Polling<'a> {
    #[inline]
    fn enter(frame: &'a Frame, span: Option<&'a tracing::Span>) -> Polling<'a> {
        if let Some(span) = span {
            enter_span(span);
        }
        Polling {
            outer: CURRENT.replace(ptr::from_ref(frame)),
            span,
            frame: PhantomData,
        }
    }
}

impl Drop for Polling<'_> {
    #[inline]
    fn drop(&mut self) {
        CURRENT.set(self.outer);
        if let Some(span) = self.span {
            exit_span(span);
        }
    }
}

/// Runs `f` with `permit`, if any, on the thread's list of held limits: for
/// the code that holds it while an attempt runs.
#[inline]
pub(crate) fn holding<T>(permit: Option<&Permit<'_>>, f: impl FnOnce() -> T) -> T {
    let _pushed = permit.map(Pushed::new);
    f()
}

/// A permit on the thread's list of held limits, until the guard drops,
/// unwinding included. Guards drop in the order they were made (each lives
/// in the scope of one attempt's poll or run), so each pops its own entry.
pub(crate) struct Pushed;

impl Pushed {
    pub(crate) fn new(permit: &Permit<'_>) -> Pushed {
        let entry = (ptr::from_ref(permit.limit()).addr(), permit.slot());
        // An attempt dropped as its thread ends may find the list gone:
        // nothing on that thread can ask for it any more.
        let _ = HELD.try_with(|held| held.borrow_mut().push(entry));
        Pushed
    }
}

impl Drop for Pushed {
    fn drop(&mut self) {
        let _ = HELD.try_with(|held| held.borrow_mut().pop());
    }
}

/// An attempt's span entered while the attempt runs.
pub(crate) struct InSpan<'a>(Option<&'a tracing::Span>);

impl<'a> InSpan<'a> {
    #[inline]
    pub(crate) fn enter(span: Option<&'a tracing::Span>) -> InSpan<'a> {
        if let Some(span) = span {
            enter_span(span);
        }
        InSpan(span)
    }
}

impl Drop for InSpan<'_> {
    #[inline]
    fn drop(&mut self) {
        if let Some(span) = self.0 {
            exit_span(span);
        }
    }
}

/// Enters an attempt's span, out of line, through its subscriber: the
/// guards above hold the span by reference, with no drop glue of their own
/// (tracing's `Entered` has some), which every function that polls an
/// attempt would compile again. Not through `Span::enter`, so tracing's
/// `log` records of entering and leaving a span (its `log-always`
/// feature) are not written for an attempt's.
#[inline(never)]
fn enter_span(span: &tracing::Span) {
    span.with_subscriber(|(id, dispatch)| dispatch.enter(id));
}

/// Leaves the span [`enter_span`] entered.
#[inline(never)]
fn exit_span(span: &tracing::Span) {
    span.with_subscriber(|(id, dispatch)| dispatch.exit(id));
}

/// The name of the retried call whose attempt is running on this thread, if
/// any: the outer call when a retried call runs inside another. Inline: every
/// retry asks, and the answer is one read of the thread-local.
#[inline]
pub(crate) fn outer() -> Option<&'static str> {
    with_current(|frame| frame.site.name())
}

/// What gives the frame of the attempt in progress: the call, or a hedged
/// attempt's own frame. Only this crate's types have one.
pub trait HasFrame: sealed::Sealed {
    /// Called as an attempt starts running, on every poll of it: the
    /// frame [`attempt()`] reads while it runs, and its span if the call
    /// has spans.
    #[doc(hidden)]
    fn starts(&self) -> (&Frame, Option<&tracing::Span>);

    /// The frame [`attempt()`] reads.
    #[doc(hidden)]
    fn frame(&self) -> &Frame;
}

pub(crate) mod sealed {
    /// Keeps [`HasFrame`](super::HasFrame) to the calls of this crate.
    pub trait Sealed {}
}

/// Polls an attempt's `future` as one of `call`'s: counted as started,
/// in the attempt's span, and seen by [`attempt()`]. The future comes as
/// `dyn`, so that rustc makes this once per outcome type rather than once
/// per annotated function.
#[inline]
pub(crate) fn poll_in<K: HasFrame, T>(
    call: &K,
    future: Pin<&mut dyn Future<Output = T>>,
    cx: &mut Context<'_>,
) -> Poll<T> {
    let (frame, span) = call.starts();
    let _polling = Polling::enter(frame, span);
    future.poll(cx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_current_frame_is_restored_after_a_nested_one_and_after_a_panic() {
        static OUTER: Site = Site::new("outer");
        static INNER: Site = Site::new("inner");
        let outer = Frame::first(&OUTER, NonZeroU32::new(3));
        let inner = Frame {
            number: 2,
            ..Frame::first(&INNER, None)
        };
        outer.enter(|| {
            let first = attempt().unwrap().call_id();
            inner.enter(|| {
                assert_eq!(attempt().unwrap().number(), 2);
                assert_eq!(attempt().unwrap().max(), None);
                assert_eq!(super::outer(), Some("inner"));
            });
            assert_eq!(attempt().unwrap().max(), Some(3));
            assert_eq!(attempt().unwrap().call_id(), first);
            let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                inner.enter(|| panic!("hook panicked"));
            }));
            assert!(unwound.is_err());
            assert_eq!(attempt().unwrap().max(), Some(3));
        });
        assert_ne!(outer.call_id.get_or_draw(), inner.call_id.get_or_draw());
        assert!(attempt().is_none());
        assert_eq!(super::outer(), None);
    }

    #[test]
    fn a_first_attempt_puts_the_frame_back_and_counts_only_an_unwinding_call() {
        static OUTER: Site = Site::new("first-outer");
        static FIRST: Site = Site::new("first");
        let outer = Frame {
            number: 2,
            ..Frame::first(&OUTER, None)
        };
        let first = Frame::first(&FIRST, NonZeroU32::new(5));
        let outer_sees = || attempt().map(|a| (a.number(), a.max()));
        outer.enter(|| {
            // Returned and judged: back to the outer frame, nothing counted.
            let entered = first.enter_first();
            assert_eq!(outer_sees(), Some((1, Some(5))));
            let left = entered.leave();
            assert_eq!(outer_sees(), Some((2, None)));
            entered.judged(left);
            assert_eq!(crate::stats::Stats::of(&FIRST).cancelled, 0);

            // The attempt unwinds.
            let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let _entered = first.enter_first();
                panic!("the attempt panicked");
            }));
            assert!(unwound.is_err());
            assert_eq!(outer_sees(), Some((2, None)));
            assert_eq!(crate::stats::Stats::of(&FIRST).cancelled, 1);

            // Its judgement unwinds, after the attempt left the frame.
            let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let entered = first.enter_first();
                let _left = entered.leave();
                panic!("the judgement panicked");
            }));
            assert!(unwound.is_err());
            assert_eq!(outer_sees(), Some((2, None)));
            assert_eq!(crate::stats::Stats::of(&FIRST).cancelled, 2);
        });
        assert!(attempt().is_none());
        assert_eq!(crate::stats::Stats::of(&OUTER).cancelled, 0);
    }

    #[test]
    fn a_pushed_limit_is_held_until_its_guard_drops_unwinding_included() {
        static A: ConcurrencyLimit = ConcurrencyLimit::new(1);
        static B: ConcurrencyLimit = ConcurrencyLimit::new(1);
        let (a, b) = (A.acquire_blocking(), B.acquire_blocking());
        let holds = |limit| held_slot(limit).is_some();
        assert!(!holds(&A));
        {
            let _a = Pushed::new(&a);
            {
                let _b = Pushed::new(&b);
                assert!(holds(&A) && holds(&B));
                assert_eq!(held_slot(&A), Some(a.slot()));
            }
            assert!(holds(&A) && !holds(&B));
            let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let _b = Pushed::new(&b);
                panic!("attempt panicked");
            }));
            assert!(unwound.is_err());
            assert!(holds(&A) && !holds(&B));
        }
        assert!(!holds(&A) && !holds(&B));
    }
}
