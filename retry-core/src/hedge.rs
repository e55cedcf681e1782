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

/// The percentiles a hedge's delay may be, `p50` to `p99`.
pub const PERCENTILES: core::ops::RangeInclusive<u8> = 50..=99;

/// What a [`DynamicPolicy`](crate::dynamic::DynamicPolicy) does to a hedged function's hedges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HedgeSpec {
    /// No hedges: each attempt runs alone (`hedge = off`).
    Off,
    /// A hedge once an attempt has run this long (`hedge = 20ms`), in
    /// place of the attribute's delay or percentile.
    After(Duration),
    /// A hedge once an attempt has run longer than this percentile (50 to
    /// 99) of the function's recent attempt latencies (`hedge = p95`), in
    /// place of the attribute's delay or percentile. Until enough
    /// latencies are known, the attribute's `min` is the delay if it gave
    /// one, and no hedge starts otherwise.
    Percentile(u8),
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
#[derive(Clone, Copy)]
pub struct Hedge {
    after: After,
    /// The function's recent attempt latencies, which a percentile reads:
    /// the attribute's, or one a dynamic policy sets.
    sketch: &'static LatencySketch,
}

/// How long an attempt runs before another starts beside it.
#[derive(Clone, Copy, Debug)]
enum After {
    Fixed(Duration),
    /// A percentile of the function's recent attempt latencies, at least
    /// `min`; `min` alone until the sketch has enough samples.
    Percentile {
        percentile: u8,
        min: Option<Duration>,
    },
}

impl core::fmt::Debug for Hedge {
    /// The delay or the percentile, not the sketch's counts.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.after {
            After::Fixed(after) => f.debug_tuple("Hedge").field(&after).finish(),
            After::Percentile { percentile, min } => f
                .debug_struct("Hedge")
                .field("percentile", &percentile)
                .field("min", &min)
                .finish(),
        }
    }
}

impl Hedge {
    /// A hedge `after` the last attempt started; `sketch` keeps the
    /// function's latencies should a dynamic policy ask for a percentile.
    pub const fn new(sketch: &'static LatencySketch, after: Duration) -> Hedge {
        Hedge {
            after: After::Fixed(after),
            sketch,
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
            after: After::Percentile { percentile, min },
            sketch,
        }
    }

    /// This hedge as a dynamic policy's `spec` sets it: `None` when it
    /// turns hedging off. A percentile keeps the attribute's `min`, where
    /// the attribute gave a percentile with one.
    pub(crate) fn with_spec(self, spec: HedgeSpec) -> Option<Hedge> {
        let after = match spec {
            HedgeSpec::Off => return None,
            HedgeSpec::After(after) => After::Fixed(after),
            HedgeSpec::Percentile(percentile) => After::Percentile {
                percentile,
                min: match self.after {
                    After::Percentile { min, .. } => min,
                    After::Fixed(_) => None,
                },
            },
        };
        Some(Hedge { after, ..self })
    }

    /// How long an attempt runs, with none ended, before another starts;
    /// `None` while a percentile has too few samples and no `min`.
    pub fn after(&self) -> Option<Duration> {
        match self.after {
            After::Fixed(after) => Some(after),
            After::Percentile { percentile, min } => {
                match (self.sketch.percentile(percentile), min) {
                    (Some(after), Some(min)) => Some(after.max(min)),
                    (after, min) => after.or(min),
                }
            }
        }
    }

    /// Where the latencies of the function's attempts go, when a
    /// percentile sets the delay.
    pub(crate) fn sketch(&self) -> Option<&'static LatencySketch> {
        match self.after {
            After::Fixed(_) => None,
            After::Percentile { .. } => Some(self.sketch),
        }
    }
}
