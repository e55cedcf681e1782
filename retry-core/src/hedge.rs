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
mod sketch;
mod slots;

pub(crate) use frame::HedgeFrame;
pub use sketch::LatencySketch;
pub use slots::{End, Ended, Finished, InFlight, Slot, Slots};

/// What a [`DynamicPolicy`](crate::dynamic::DynamicPolicy) does to a hedged function's hedges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HedgeSpec {
    /// No hedges: each attempt runs alone (`hedge = off`).
    Off,
    /// A hedge once an attempt has run this long (`hedge = 20ms`), in
    /// place of the attribute's delay or percentile.
    After(Duration),
}

/// An attempt of a hedged round, as the hooks see it: one that started,
/// failed beside others, or ended the round.
#[derive(Clone, Copy, Debug)]
pub struct RoundEnded {
    pub(crate) attempt: u32,
    pub(crate) hedge: bool,
    pub(crate) succeeded: bool,
    /// It failed while others ran: no decision followed.
    pub(crate) beside: bool,
}

/// The most attempts a hedged call runs at once, the first included.
pub const MAX_IN_FLIGHT: u8 = 4;

/// When a call hedges: `after` an attempt started with none ended, another
/// starts beside it, up to `in_flight` at once.
#[derive(Clone, Copy, Debug)]
pub struct Hedge {
    after: After,
    in_flight: u8,
}

/// How long an attempt runs before another starts beside it.
#[derive(Clone, Copy, Debug)]
enum After {
    Fixed(Duration),
    /// A percentile of the function's recent attempt latencies, at least
    /// `min`; `min` alone until the sketch has enough samples.
    Percentile {
        sketch: &'static LatencySketch,
        percentile: u8,
        min: Option<Duration>,
    },
}

impl Hedge {
    /// A hedge `after` the last attempt started, up to `in_flight` attempts
    /// at once (2 to [`MAX_IN_FLIGHT`]; outside that range, the nearest
    /// bound: the attribute refuses such a value before it gets here).
    pub const fn new(after: Duration, in_flight: u8) -> Hedge {
        Hedge {
            after: After::Fixed(after),
            in_flight: clamp(in_flight),
        }
    }

    /// A hedge after the `percentile` of the latencies `sketch` holds, at
    /// least `min`; until it holds [`MIN_SAMPLES`], after `min`, or never
    /// without one.
    pub const fn percentile(
        sketch: &'static LatencySketch,
        percentile: u8,
        min: Option<Duration>,
        in_flight: u8,
    ) -> Hedge {
        Hedge {
            after: After::Percentile {
                sketch,
                percentile,
                min,
            },
            in_flight: clamp(in_flight),
        }
    }

    /// How long an attempt runs, with none ended, before another starts;
    /// `None` while a percentile has too few samples and no `min`.
    pub fn after(&self) -> Option<Duration> {
        match self.after {
            After::Fixed(after) => Some(after),
            After::Percentile {
                sketch,
                percentile,
                min,
            } => match (sketch.percentile(percentile), min) {
                (Some(after), Some(min)) => Some(after.max(min)),
                (after, min) => after.or(min),
            },
        }
    }

    /// The same hedge after a fixed `after`, as a dynamic policy sets it.
    pub(crate) fn after_fixed(self, after: Duration) -> Hedge {
        Hedge {
            after: After::Fixed(after),
            ..self
        }
    }

    /// The most attempts in flight at once, the first included.
    pub const fn in_flight(&self) -> u8 {
        self.in_flight
    }

    /// Where the latencies of the function's attempts go, when a
    /// percentile sets the delay.
    pub(crate) fn sketch(&self) -> Option<&'static LatencySketch> {
        match self.after {
            After::Fixed(_) => None,
            After::Percentile { sketch, .. } => Some(sketch),
        }
    }
}

/// `in_flight` within 2 to [`MAX_IN_FLIGHT`].
const fn clamp(in_flight: u8) -> u8 {
    if in_flight < 2 {
        2
    } else if in_flight > MAX_IN_FLIGHT {
        MAX_IN_FLIGHT
    } else {
        in_flight
    }
}
