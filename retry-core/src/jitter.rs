//! Randomisation of delays, so that many clients retrying the same server
//! do not come back in lockstep.
//!
//! The kinds are those of the AWS Architecture Blog's "Exponential Backoff
//! And Jitter" (2015), plus the proportional jitter of the bare `jitter`
//! flag. Every kind stays within `[0, cap]` but the proportional one, which
//! only ever adds to the curve; see [`Jitter::apply`].

use core::time::Duration;

use crate::backoff::saturating_from_nanos;
pub use crate::rng::Rng;

/// How a delay is randomised.
///
/// ```
/// use reattempt::jitter::{Jitter, Rng};
/// use std::time::Duration;
///
/// let s = Duration::from_secs;
/// let mut rng = Rng::seeded(1);
/// let d = Jitter::Full.apply(s(4), s(2), s(1), s(30), &mut rng);
/// assert!(d <= s(4));
/// let d = Jitter::Equal.apply(s(4), s(2), s(1), s(30), &mut rng);
/// assert!(s(2) <= d && d <= s(4));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Jitter {
    /// The delay as the backoff gives it.
    None,
    /// The delay plus a uniform random `0..=ratio·delay`; the bare `jitter`
    /// flag is `Proportional(0.25)`. It never waits less than the curve (a
    /// recovering server gets at least the delay the policy names), so at
    /// the cap, and on a fixed backoff, it passes the cap by up to
    /// `ratio·cap`. A ratio outside `[0, 1]` is clamped to it.
    Proportional(f64),
    /// A uniform random `0..=delay`.
    Full,
    /// Half the delay plus a uniform random `0..=delay/2`.
    Equal,
    /// `min(cap, uniform(base, 3·previous))`: each delay grows from the last
    /// one actually used rather than from the attempt number.
    Decorrelated,
}

impl Jitter {
    /// The jitter of the bare `jitter` flag: up to a quarter of the delay added.
    pub const DEFAULT: Jitter = Jitter::Proportional(0.25);

    /// The randomised delay.
    ///
    /// `delay` is the backoff's delay for this retry, `previous` the delay
    /// used before the last retry (`base` before the first), `base` the
    /// backoff's first delay and `cap` its largest. The result is never above
    /// `cap`, but for [`Jitter::Proportional`], which adds to the capped
    /// delay and may pass `cap` by its ratio; it never panics or overflows.
    pub fn apply(
        self,
        delay: Duration,
        previous: Duration,
        base: Duration,
        cap: Duration,
        rng: &mut Rng,
    ) -> Duration {
        let delay = delay.min(cap);
        let jittered = match self {
            Jitter::None => delay,
            Jitter::Proportional(ratio) => {
                let ratio = if ratio.is_nan() {
                    0.0
                } else {
                    ratio.clamp(0.0, 1.0)
                };
                // Added on top, even at the cap: the curve is a floor the
                // server may count on, and clients at the cap still spread
                // out instead of all being clipped to the same instant.
                return delay.saturating_add(uniform(scale(delay, ratio), rng));
            }
            Jitter::Full => uniform(delay, rng),
            Jitter::Equal => {
                let half = delay / 2;
                half.saturating_add(uniform(delay - half, rng))
            }
            Jitter::Decorrelated => {
                let base = base.min(cap);
                let high = previous.saturating_mul(3).max(base);
                base.saturating_add(uniform(high - base, rng))
            }
        };
        jittered.min(cap)
    }

    /// Whether this kind draws random numbers at all.
    pub const fn is_random(self) -> bool {
        !matches!(self, Jitter::None)
    }
}

/// A uniform draw from `[0, span]`, to the nanosecond.
fn uniform(span: Duration, rng: &mut Rng) -> Duration {
    match u64::try_from(span.as_nanos()) {
        Ok(nanos) => Duration::from_nanos(rng.up_to(nanos)),
        Err(_) => scale(span, rng.next_f64()),
    }
}

/// `d · ratio` for a ratio in `[0, 1]`, never above `d`.
fn scale(d: Duration, ratio: f64) -> Duration {
    // 32 fractional bits: exact for ratios such as 0.25, and any duration's
    // nanoseconds (below 2^94) times 2^32 still fit a u128.
    let fixed = (ratio.clamp(0.0, 1.0) * 4_294_967_296.0) as u128;
    saturating_from_nanos((d.as_nanos() * fixed) >> 32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::{
        Just, Strategy, any, prop_assert, prop_assert_eq, prop_oneof, proptest,
    };

    const KINDS: [Jitter; 6] = [
        Jitter::None,
        Jitter::DEFAULT,
        Jitter::Proportional(1.0),
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
    ];

    fn duration() -> impl Strategy<Value = Duration> {
        prop_oneof![
            (0u64..=120_000_000_000).prop_map(Duration::from_nanos),
            (any::<u64>(), 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n)),
            Just(Duration::ZERO),
            Just(Duration::MAX),
        ]
    }

    proptest! {
        #[test]
        fn every_kind_but_proportional_stays_at_or_below_the_cap(
            delay in duration(), previous in duration(), base in duration(), cap in duration(),
            seed in any::<u64>(),
        ) {
            let mut rng = Rng::seeded(seed);
            for kind in KINDS {
                let d = kind.apply(delay, previous, base, cap, &mut rng);
                match kind {
                    Jitter::Proportional(ratio) => {
                        let curve = delay.min(cap);
                        let most = curve.saturating_add(scale(curve, ratio).saturating_add(Duration::from_nanos(1)));
                        prop_assert!(curve <= d && d <= most, "{d:?} outside {curve:?}..={most:?}");
                    }
                    _ => prop_assert!(d <= cap),
                }
            }
        }

        #[test]
        fn each_kind_stays_in_its_documented_range(
            delay in (0u64..=u64::MAX / 2).prop_map(Duration::from_nanos), previous in duration(), base in duration(), seed in any::<u64>(),
        ) {
            let mut rng = Rng::seeded(seed);
            let cap = Duration::MAX;
            prop_assert_eq!(Jitter::None.apply(delay, previous, base, cap, &mut rng), delay);
            let p = Jitter::DEFAULT.apply(delay, previous, base, cap, &mut rng);
            prop_assert!(delay <= p && p <= delay.saturating_add(delay / 4 + Duration::from_nanos(1)));
            // At the cap (a fixed backoff, or a long exponential one) the
            // bare jitter still only adds.
            let q = Jitter::DEFAULT.apply(delay, previous, base, delay, &mut rng);
            prop_assert!(delay <= q && q <= delay.saturating_add(delay / 4 + Duration::from_nanos(1)));
            prop_assert!(Jitter::Full.apply(delay, previous, base, cap, &mut rng) <= delay);
            let e = Jitter::Equal.apply(delay, previous, base, cap, &mut rng);
            prop_assert!(delay / 2 <= e && e <= delay);
        }

        #[test]
        fn decorrelated_stays_within_base_and_cap(
            previous in duration(), base in duration(), cap in duration(), seed in any::<u64>(),
        ) {
            let mut rng = Rng::seeded(seed);
            let d = Jitter::Decorrelated.apply(Duration::ZERO, previous, base, cap, &mut rng);
            prop_assert!(base.min(cap) <= d && d <= cap);
            prop_assert!(d <= previous.saturating_mul(3).max(base));
        }
    }

    #[test]
    fn full_jitter_mean_is_half_the_delay() {
        let mut rng = Rng::seeded(0x5EED);
        let delay = Duration::from_secs(8);
        let draws = 10_000;
        let total: f64 = (0..draws)
            .map(|_| {
                Jitter::Full
                    .apply(delay, delay, delay, Duration::MAX, &mut rng)
                    .as_secs_f64()
            })
            .sum();
        let mean = total / f64::from(draws);
        assert!((mean - 4.0).abs() <= 4.0 * 0.05, "mean {mean}");
    }

    #[test]
    fn the_same_seed_gives_the_same_delays() {
        let s = Duration::from_secs;
        let draw = |seed| {
            let mut rng = Rng::seeded(seed);
            [0; 8].map(|_| Jitter::Full.apply(s(10), s(10), s(1), s(30), &mut rng))
        };
        assert_eq!(draw(3), draw(3));
        assert_ne!(draw(3), draw(4));
    }

    #[test]
    fn out_of_range_ratios_are_clamped() {
        let mut rng = Rng::seeded(9);
        let s = Duration::from_secs;
        assert_eq!(
            Jitter::Proportional(-1.0).apply(s(4), s(4), s(1), s(30), &mut rng),
            s(4)
        );
        assert_eq!(
            Jitter::Proportional(f64::NAN).apply(s(4), s(4), s(1), s(30), &mut rng),
            s(4)
        );
        assert!(Jitter::Proportional(9.0).apply(s(4), s(4), s(1), s(30), &mut rng) <= s(8));
    }

    #[test]
    fn the_bare_jitter_on_a_fixed_second_waits_one_to_one_and_a_quarter_seconds() {
        let mut rng = Rng::seeded(11);
        let s = Duration::from_secs;
        let draws: Vec<Duration> = (0..1_000)
            .map(|_| Jitter::DEFAULT.apply(s(1), s(1), s(1), s(1), &mut rng))
            .collect();
        assert!(
            draws
                .iter()
                .all(|d| s(1) <= *d && *d <= Duration::from_millis(1250))
        );
        // Spread over the whole range, not clipped to one instant.
        assert!(draws.iter().any(|d| *d > Duration::from_millis(1200)));
        assert!(draws.iter().any(|d| *d < Duration::from_millis(1050)));
    }
}
