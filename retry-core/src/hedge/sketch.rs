//! The recent latencies of one function's attempts, for `hedge(after =
//! pNN)`: a histogram of fixed buckets, each an atomic count, in two
//! generations of [`WINDOW`] that take turns, so that recording a latency
//! and reading a percentile allocate nothing, take no lock, and see only
//! the last one to two windows.

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use core::time::Duration;
use std::sync::OnceLock;
use std::time::Instant;

/// How long a generation of samples lasts: a percentile reads the current
/// one and the one before, samples 10 to 20 seconds old at most.
pub const WINDOW: Duration = Duration::from_secs(10);

/// The fewest samples a percentile is read from: with fewer, the hedge's
/// delay is its `min`, or no hedge starts.
pub const MIN_SAMPLES: u32 = 100;

/// Steps per doubling of the latency: a bucket's width is an eighth of an
/// octave, so a percentile is read within 12.5 %.
const STEPS: u32 = 8;
/// Latencies under 2^10 ns (1 µs) share the first bucket.
const LOWEST_OCTAVE: u32 = 10;
/// Octaves from 1 µs up to 2^42 ns (about 73 minutes); longer latencies
/// share the last bucket.
const OCTAVES: u32 = 32;
const BUCKETS: usize = (OCTAVES * STEPS + 2) as usize;

/// The recent latencies of a function's attempts. The expansion makes one
/// `static` of it for each function with `hedge(after = pNN)`.
#[derive(Debug)]
pub struct LatencySketch {
    counts: [[AtomicU32; BUCKETS]; 2],
    totals: [AtomicU32; 2],
    /// The number of the current generation (its start, in windows since
    /// the first use of any sketch); its samples are in
    /// `counts[generation % 2]`.
    generation: AtomicU64,
}

impl Default for LatencySketch {
    fn default() -> LatencySketch {
        LatencySketch::new()
    }
}

impl LatencySketch {
    /// A sketch with no sample.
    pub const fn new() -> LatencySketch {
        LatencySketch {
            counts: [
                [const { AtomicU32::new(0) }; BUCKETS],
                [const { AtomicU32::new(0) }; BUCKETS],
            ],
            totals: [const { AtomicU32::new(0) }; 2],
            generation: AtomicU64::new(0),
        }
    }

    /// Adds a latency.
    pub fn record(&self, latency: Duration) {
        self.record_in(generation_now(), latency);
    }

    /// The `percentile` (1 to 99) of the latencies of the last one to two
    /// windows, within 12.5 % (the top of its bucket); `None` with fewer
    /// than [`MIN_SAMPLES`].
    pub fn percentile(&self, percentile: u8) -> Option<Duration> {
        self.percentile_in(generation_now(), percentile)
    }

    fn record_in(&self, now: u64, latency: Duration) {
        let generation = self.turn_to(now);
        let at = (generation % 2) as usize;
        self.counts[at][bucket(latency)].fetch_add(1, Ordering::Relaxed);
        self.totals[at].fetch_add(1, Ordering::Relaxed);
    }

    fn percentile_in(&self, now: u64, percentile: u8) -> Option<Duration> {
        self.turn_to(now);
        let total: u64 = self
            .totals
            .iter()
            .map(|t| u64::from(t.load(Ordering::Relaxed)))
            .sum();
        if total < u64::from(MIN_SAMPLES) {
            return None;
        }
        // The rank of the sample at the percentile, 1-based.
        let rank = (total * u64::from(percentile)).div_ceil(100).max(1);
        let mut seen = 0;
        for index in 0..BUCKETS {
            seen += self
                .counts
                .iter()
                .map(|counts| u64::from(counts[index].load(Ordering::Relaxed)))
                .sum::<u64>();
            if seen >= rank {
                return Some(top(index));
            }
        }
        Some(top(BUCKETS - 1))
    }

    /// Makes generation `now` the current one: the generation whose place
    /// it takes is cleared, and so is the one before when a whole window
    /// passed without a sample. Two threads that turn it at once may lose
    /// a few samples, which a sketch can spare.
    fn turn_to(&self, now: u64) -> u64 {
        let seen = self.generation.load(Ordering::Relaxed);
        if seen != now
            && self
                .generation
                .compare_exchange(seen, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            self.clear((now % 2) as usize);
            if now.saturating_sub(seen) >= 2 {
                self.clear(((now + 1) % 2) as usize);
            }
        }
        now
    }

    fn clear(&self, at: usize) {
        for count in &self.counts[at] {
            count.store(0, Ordering::Relaxed);
        }
        self.totals[at].store(0, Ordering::Relaxed);
    }
}

/// Windows since the first sketch was used in this process (the first is
/// numbered 1, so that a new sketch's generation 0 is stale).
fn generation_now() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    let since = START.get_or_init(Instant::now).elapsed();
    (since.as_nanos() / WINDOW.as_nanos()) as u64 + 1
}

/// The bucket of `latency`.
fn bucket(latency: Duration) -> usize {
    let nanos = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
    if nanos < 1 << LOWEST_OCTAVE {
        return 0;
    }
    let octave = 63 - nanos.leading_zeros();
    let step = (nanos >> (octave - 3)) & u64::from(STEPS - 1);
    let index = (octave - LOWEST_OCTAVE) * STEPS + step as u32 + 1;
    (index as usize).min(BUCKETS - 1)
}

/// The longest latency of bucket `index`.
fn top(index: usize) -> Duration {
    if index == 0 {
        return Duration::from_nanos(1 << LOWEST_OCTAVE);
    }
    let index = index as u32 - 1;
    let octave = index / STEPS + LOWEST_OCTAVE;
    let step = u64::from(index % STEPS);
    Duration::from_nanos((8 + step + 1) << (octave - 3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_latency_falls_in_a_bucket_whose_top_is_at_most_an_eighth_above_it() {
        for nanos in [1_500, 10_000, 999_999, 3_000_000, 47_000_000, 2_000_000_000] {
            let latency = Duration::from_nanos(nanos);
            let top = top(bucket(latency));
            assert!(top >= latency, "{nanos}: {top:?}");
            assert!(
                top.as_nanos() * 8 <= latency.as_nanos() * 9 + 8,
                "{nanos}: {top:?}"
            );
        }
        assert_eq!(bucket(Duration::ZERO), 0);
        assert_eq!(bucket(Duration::from_secs(100_000)), BUCKETS - 1);
    }

    #[test]
    fn a_percentile_needs_its_samples_and_reads_the_tail() {
        let sketch = LatencySketch::new();
        for _ in 0..MIN_SAMPLES - 1 {
            sketch.record(Duration::from_millis(5));
        }
        assert_eq!(sketch.percentile(95), None, "too few samples");
        sketch.record(Duration::from_millis(5));
        let p95 = sketch.percentile(95).unwrap();
        assert!(Duration::from_millis(5) <= p95 && p95 <= Duration::from_micros(5_625));
        // A tail of 10 % at 200 ms: the p95 is in it, the p50 is not.
        for _ in 0..12 {
            sketch.record(Duration::from_millis(200));
        }
        assert!(sketch.percentile(95).unwrap() >= Duration::from_millis(200));
        assert!(sketch.percentile(50).unwrap() < Duration::from_millis(6));
    }

    #[test]
    fn samples_are_read_for_two_windows_and_then_forgotten() {
        let sketch = LatencySketch::new();
        for _ in 0..MIN_SAMPLES {
            sketch.record_in(5, Duration::from_millis(5));
        }
        assert!(sketch.percentile_in(5, 90).is_some());
        assert!(
            sketch.percentile_in(6, 90).is_some(),
            "the window before counts"
        );
        assert_eq!(
            sketch.percentile_in(7, 90),
            None,
            "two windows on, forgotten"
        );
        // A gap of more than a window clears both generations.
        for _ in 0..MIN_SAMPLES {
            sketch.record_in(7, Duration::from_millis(5));
        }
        assert_eq!(sketch.percentile_in(10, 90), None);
    }
}
