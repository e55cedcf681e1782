//! The small random number generator behind jitter.
//!
//! Each retried call owns one (8 bytes, seeded from the operating system's
//! entropy on the first jittered retry), so a retrying future never holds a
//! thread-local RNG across an `.await` and the success path never touches
//! randomness.

use std::hash::BuildHasher as _;

/// A SplitMix64 generator: fast, 8 bytes of state, seedable for tests.
///
/// ```
/// use reattempt::jitter::Rng;
///
/// let mut a = Rng::seeded(7);
/// let mut b = Rng::seeded(7);
/// assert_eq!(a.next_u64(), b.next_u64());
/// let x = a.next_f64();
/// assert!((0.0..1.0).contains(&x));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator with a fixed seed: the same seed gives the same draws.
    pub const fn seeded(seed: u64) -> Rng {
        Rng { state: seed }
    }

    /// A generator seeded from the operating system's entropy.
    pub fn from_entropy() -> Rng {
        Rng::seeded(entropy().hash_one(0u8))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform draw from `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        // The top 53 bits fill an f64 mantissa exactly.
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// A keyed hash whose keys come from the operating system's entropy.
///
/// std draws each thread's SipHash keys from the OS once and changes them
/// for every `RandomState`, so hashing a constant with a fresh one gives
/// bits that no other call, thread or process can predict or repeat. That
/// is all that jitter seeds and call ids need, and it spares the crate a
/// random-number dependency.
pub(crate) fn entropy() -> std::hash::RandomState {
    std::hash::RandomState::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::hash::BuildHasher;

    #[test]
    fn entropy_seeds_differ_between_calls_and_threads() {
        let here: Vec<u64> = (0..1000).map(|_| Rng::from_entropy().next_u64()).collect();
        let there: Vec<u64> =
            std::thread::spawn(|| (0..1000).map(|_| Rng::from_entropy().next_u64()).collect())
                .join()
                .unwrap();
        let distinct: HashSet<u64> = here.iter().chain(&there).copied().collect();
        assert_eq!(distinct.len(), 2000);
    }

    #[test]
    fn entropy_bits_are_balanced() {
        // Each of the 64 bits is set in about half of 4,000 draws: far from
        // 2,000 would mean a stuck or biased bit (the bound is ~6 sigma).
        let draws: Vec<u64> = (0..4000).map(|_| entropy().hash_one(0u8)).collect();
        for bit in 0..64 {
            let ones = draws.iter().filter(|d| *d >> bit & 1 == 1).count();
            assert!((1800..=2200).contains(&ones), "bit {bit}: {ones} of 4000");
        }
    }
}
