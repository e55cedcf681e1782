//! Where a call keeps the state that only failures need, so that a call
//! that succeeds at once makes none of it.

use core::cell::Cell;
#[cfg(feature = "tokio")]
use core::pin::Pin;
use core::time::Duration;

use crate::class::Classification;
use crate::dead_letter::AttemptRecord;
use crate::give_up::GiveUp;
use crate::jitter::Rng;

/// Where a call keeps the state that only failures need.
pub trait Slot: Default {
    /// The state, made at the first use.
    #[doc(hidden)]
    fn state(&mut self) -> &mut FailureState;
    /// The state, if made.
    #[doc(hidden)]
    fn peek(&self) -> Option<&FailureState>;
}

/// The failure state in the call itself: for sync functions, whose call
/// lives on the stack.
#[derive(Debug, Default)]
pub struct Inline(Option<FailureState>);

impl Slot for Inline {
    #[inline]
    fn state(&mut self) -> &mut FailureState {
        self.0.get_or_insert_with(FailureState::default)
    }

    #[inline]
    fn peek(&self) -> Option<&FailureState> {
        self.0.as_ref()
    }
}

/// The failure state made with the call: for the rest of a sync call
/// whose first attempt failed, which needs it at once. Made in place.
#[derive(Debug, Default)]
pub(crate) struct Made(FailureState);

impl Slot for Made {
    #[inline]
    fn state(&mut self) -> &mut FailureState {
        &mut self.0
    }

    #[inline]
    fn peek(&self) -> Option<&FailureState> {
        Some(&self.0)
    }
}

/// The failure state boxed at the first failure: for async functions, whose
/// future it would otherwise make larger by its size. The box is taken
/// from the thread's spare when there is one, and given back to it when
/// the call ends, so that retries in steady state allocate nothing.
#[derive(Debug, Default)]
pub struct Boxed(Option<Box<FailureState>>);

impl Slot for Boxed {
    #[inline]
    fn state(&mut self) -> &mut FailureState {
        self.0.get_or_insert_with(take_spare)
    }

    #[inline]
    fn peek(&self) -> Option<&FailureState> {
        self.0.as_deref()
    }
}

impl Drop for Boxed {
    /// Out of line only when there is a state: a success drops nothing.
    #[inline]
    fn drop(&mut self) {
        if let Some(state) = self.0.take() {
            give_back(state);
        }
    }
}

thread_local! {
    /// One failure state a call that ended left for the next. One is
    /// enough: a thread runs one attempt at a time, and the calls that are
    /// waiting keep theirs.
    static SPARE: Cell<Option<Box<FailureState>>> = const { Cell::new(None) };
}

#[cold]
#[inline(never)]
fn take_spare() -> Box<FailureState> {
    // While the thread's locals are torn down there is no spare.
    SPARE
        .try_with(Cell::take)
        .ok()
        .flatten()
        .unwrap_or_default()
}

#[cold]
#[inline(never)]
fn give_back(mut state: Box<FailureState>) {
    // Cleared as new, but for the history's buffer, field by field: every
    // field named, so that a new one is cleared here too, and none but the
    // timer dropped. The timer goes: it belongs to the runtime that made
    // it, which the next call on this thread may not run on.
    let FailureState {
        skipped,
        rng,
        last_class,
        last_delay,
        gave_up,
        history,
        held,
        #[cfg(feature = "tokio")]
        timer,
    } = &mut *state;
    *skipped = Duration::ZERO;
    *rng = None;
    *last_class = None;
    *last_delay = None;
    *gave_up = None;
    history.clear();
    *held = None;
    // Only a timer that was set can be waited on.
    #[cfg(feature = "tokio")]
    if timer.sleep.is_some() {
        *timer = Timer::default();
    }
    // A spare already there is freed: one is kept, the newer.
    let _ = SPARE.try_with(|spare| spare.set(Some(state)));
}

/// The part of a call's state that only failures need.
#[derive(Debug, Default)]
pub struct FailureState {
    /// Waits skipped by test mode, counted as time that passed.
    pub(super) skipped: Duration,
    pub(super) rng: Option<Rng>,
    pub(super) last_class: Option<Classification>,
    /// The delay of the last decision when it was a retry (so `attempt` has
    /// moved on); `None` after a success or a give-up.
    pub(super) last_delay: Option<Duration>,
    pub(super) gave_up: Option<GiveUp>,
    /// Kept only when there is a dead-letter sink to give it to.
    pub(super) history: Vec<AttemptRecord>,
    /// A success decided and not yet returned, under
    /// [`Call::count_success_on_return`](super::Call::count_success_on_return).
    pub(super) held: Option<Held>,
    /// The timer of the default async sleep.
    #[cfg(feature = "tokio")]
    pub(super) timer: Timer,
}

/// A success decided and not yet returned to the caller, as the call's
/// statistics will count it ([`Call::returns`](super::Call::returns)).
#[derive(Clone, Copy, Debug)]
pub(super) enum Held {
    /// At the first attempt, with the call's time when the `timing`
    /// feature reads it.
    FirstTry(Option<Duration>),
    /// After retries, with the call's time in nanoseconds when it read its
    /// clock as it started.
    AfterRetries(Option<u64>),
}

/// The timer of the default async sleep, and whether an attempt waits on it.
#[cfg(feature = "tokio")]
#[derive(Debug, Default)]
pub(super) struct Timer {
    /// Made at the first wait and reset for the next ones.
    pub(super) sleep: Option<Pin<Box<crate::default_timer::DefaultTimer>>>,
    /// Whether the next attempt made by [`Call::next`](super::Call::next)
    /// waits on `sleep` first.
    pub(super) waiting: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a call left in its failure state is gone when the next call
    /// takes it from the spare: all of it but the history's buffer.
    #[test]
    fn a_spare_given_back_is_taken_as_new_with_its_history_buffer() {
        let mut used = Box::new(FailureState {
            skipped: Duration::from_secs(3),
            rng: Some(Rng::seeded(7)),
            last_class: Some(Classification::transient()),
            last_delay: Some(Duration::from_millis(5)),
            gave_up: Some(GiveUp::Exhausted),
            history: Vec::with_capacity(4),
            held: Some(Held::AfterRetries(Some(5))),
            #[cfg(feature = "tokio")]
            timer: Timer {
                sleep: None,
                waiting: true,
            },
        });
        used.history.push(AttemptRecord {
            attempt: 1,
            class: crate::class::Class::Transient,
            code: Some("reset".into()),
            delay: None,
            delay_from: None,
            hedge: false,
        });
        #[cfg(feature = "tokio")]
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        #[cfg(feature = "tokio")]
        runtime.block_on(async {
            used.timer.sleep = Some(Box::pin(crate::default_timer::DefaultTimer::after(
                Duration::from_secs(1),
            )));
        });
        let address = core::ptr::from_ref::<FailureState>(&used);
        give_back(used);
        let taken = take_spare();
        assert_eq!(
            core::ptr::from_ref::<FailureState>(&taken),
            address,
            "the same box"
        );
        // Every field, as its `Debug` shows it, is as new.
        assert_eq!(
            format!("{taken:?}"),
            format!("{:?}", FailureState::default())
        );
        assert_eq!(taken.history.capacity(), 4, "the buffer is kept");
    }
}
