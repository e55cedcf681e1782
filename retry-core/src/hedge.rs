//! Hedging: when an attempt is still running some time after it started,
//! another starts beside it, and the first to succeed ends the call.
//! Retrying answers failures; hedging answers slowness.
//!
//! A hedged round ([`Call::hedged`](crate::call::Call::hedged)) starts the
//! call's next attempt, then one more each time [`Hedge::after`] passes
//! with none ended, up to as many at once as the round has slots, and
//! never past the policy's `max`. The attempts in flight are stored inline, in a list of
//! [`Slot`]s as long as the attribute's `in_flight`, so that a hedged call
//! allocates
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

/// When a call hedges: `after` an attempt started with none ended, another
/// starts beside it, up to as many at once as its round has slots.
#[derive(Clone, Copy, Debug)]
pub struct Hedge {
    after: After,
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
    /// A hedge `after` the last attempt started.
    pub const fn new(after: Duration) -> Hedge {
        Hedge {
            after: After::Fixed(after),
        }
    }

    /// A hedge after the `percentile` of the latencies `sketch` holds, at
    /// least `min`; until it holds [`MIN_SAMPLES`], after `min`, or never
    /// without one.
    pub const fn percentile(
        sketch: &'static LatencySketch,
        percentile: u8,
        min: Option<Duration>,
    ) -> Hedge {
        Hedge {
            after: After::Percentile {
                sketch,
                percentile,
                min,
            },
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

    /// Where the latencies of the function's attempts go, when a
    /// percentile sets the delay.
    pub(crate) fn sketch(&self) -> Option<&'static LatencySketch> {
        match self.after {
            After::Fixed(_) => None,
            After::Percentile { sketch, .. } => Some(sketch),
        }
    }
}
