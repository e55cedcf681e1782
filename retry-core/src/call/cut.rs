//! How a timer ended the last attempt, as [`Call`](super::Call) keeps it,
//! and the classification of an attempt it cut.

use crate::class::{Applied, Classification};

/// `Call::timed_out`: the last attempt was not cut.
pub(super) const RAN: u8 = 0;
/// `Call::timed_out`: the last attempt ran past its time and was dropped.
pub(super) const TIMED_OUT: u8 = 1;
/// `Call::timed_out`: the deadline came before the last attempt started
/// (while it waited for its permit of a concurrency limit, or during a wait
/// before it that overran); it never ran.
pub(super) const NEVER_RAN: u8 = 2;

/// The code of an attempt that never ran: the deadline came first.
pub(super) const NOT_STARTED: &str = "not_started";

/// The classification of an attempt a timer cut: [`TIMED_OUT`] or
/// [`NEVER_RAN`].
#[cold]
#[inline(never)]
pub(super) fn timeout_class(cut: u8) -> Classification {
    let class = Classification::transient();
    if cut == NEVER_RAN {
        // It never ran, so it cannot have taken effect.
        class.with_code(NOT_STARTED).not_applied()
    } else {
        class.with_code("attempt_timeout")
    }
}

/// Whether `class` is that of an attempt that never ran.
pub(super) fn never_ran(class: &Classification) -> bool {
    class.applied() == Applied::No && class.code() == Some(NOT_STARTED)
}
