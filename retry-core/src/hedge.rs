//! Hedging: when an attempt is still running some time after it started,
//! another starts beside it, and the first to succeed ends the call.
//! Retrying answers failures; hedging answers slowness.
//!
//! A hedged round ([`Call::hedged`](crate::call::Call::hedged)) starts the
//! call's next attempt, then one more each time [`Hedge::after`] passes
//! with none ended, up to [`Hedge::in_flight`] at once and never past the
//! policy's `max`. The attempts in flight are stored inline, in a list of
//! [`Slot`]s as long as `in_flight`, so that a hedged call allocates
//! nothing. Each attempt is seen by [`attempt()`](crate::attempt()) with
//! its own number and the call's one id, and is dropped in its own frame.

use core::time::Duration;

mod frame;
mod slots;

pub(crate) use frame::HedgeFrame;
pub use slots::{End, Ended, InFlight, Slot, Slots};

/// The most attempts a hedged call runs at once, the first included.
pub const MAX_IN_FLIGHT: u8 = 4;

/// When a call hedges: `after` an attempt started with none ended, another
/// starts beside it, up to `in_flight` at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hedge {
    after: Duration,
    in_flight: u8,
}

impl Hedge {
    /// A hedge `after` the last attempt started, up to `in_flight` attempts
    /// at once (2 to [`MAX_IN_FLIGHT`]; outside that range, the nearest
    /// bound: the attribute refuses such a value before it gets here).
    pub const fn new(after: Duration, in_flight: u8) -> Hedge {
        let in_flight = if in_flight < 2 {
            2
        } else if in_flight > MAX_IN_FLIGHT {
            MAX_IN_FLIGHT
        } else {
            in_flight
        };
        Hedge { after, in_flight }
    }

    /// How long an attempt runs, with none ended, before another starts.
    pub const fn after(&self) -> Duration {
        self.after
    }

    /// The most attempts in flight at once, the first included.
    pub const fn in_flight(&self) -> u8 {
        self.in_flight
    }
}
