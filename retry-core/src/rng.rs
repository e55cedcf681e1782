//! The random number generator behind jitter.
//!
//! Each retried call owns one, seeded from the operating system on its first
//! jittered retry, so a retrying future never holds a thread-local RNG across
//! an `.await` and the success path never touches randomness.

use std::hash::BuildHasher as _;

use rand::rngs::{SmallRng, SysRng};
use rand::{Rng as _, RngExt as _, SeedableRng as _};

/// A small, fast generator (`rand`'s [`SmallRng`]), seedable for tests.
///
/// It is not cryptographically secure: it spreads retries, nothing more.
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
pub struct Rng(SmallRng);

impl Rng {
    /// A generator with a fixed seed: the same seed gives the same draws.
    pub fn seeded(seed: u64) -> Rng {
        Rng(SmallRng::seed_from_u64(seed))
    }

    /// A generator seeded from the operating system's entropy.
    ///
    /// Should the operating system refuse (early boot, a sandbox without
    /// `getrandom`), the seed comes from std's per-thread hash keys instead,
    /// which std draws from the same source with its own fallbacks: jitter
    /// never fails a call.
    pub fn from_entropy() -> Rng {
        Rng::or_from_hash_keys(SmallRng::try_from_rng(&mut SysRng))
    }

    fn or_from_hash_keys<E>(from_os: Result<SmallRng, E>) -> Rng {
        match from_os {
            Ok(rng) => Rng(rng),
            Err(_) => Rng::seeded(entropy().hash_one(0u8)),
        }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A uniform draw from `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        self.0.random::<f64>()
    }

    /// A uniform draw from `[0, high]`.
    pub(crate) fn up_to(&mut self, high: u64) -> u64 {
        self.0.random_range(0..=high)
    }
}

/// A keyed hash whose keys come from the operating system's entropy.
///
/// std draws each thread's SipHash keys from the OS once and changes them
/// for every `RandomState`, so hashing a constant with a fresh one gives
/// bits that no other call, thread or process can predict or repeat: all
/// that a call id needs, without a system call per call.
pub(crate) fn entropy() -> std::hash::RandomState {
    std::hash::RandomState::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SysError;
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

    #[test]
    fn draws_up_to_a_bound_reach_both_ends_and_never_pass_it() {
        let mut rng = Rng::seeded(5);
        let draws: Vec<u64> = (0..2000).map(|_| rng.up_to(3)).collect();
        assert!(draws.iter().all(|d| *d <= 3));
        assert!(draws.contains(&0) && draws.contains(&3));
        assert_eq!(rng.up_to(0), 0);
        // The whole range is one draw, with no overflow.
        let _ = rng.up_to(u64::MAX);
    }

    #[test]
    fn a_refused_os_seed_falls_back_to_distinct_hash_key_seeds() {
        let refused = || Rng::or_from_hash_keys(Err::<SmallRng, _>(SysError::UNSUPPORTED));
        let draws: HashSet<u64> = (0..1000).map(|_| refused().next_u64()).collect();
        assert_eq!(draws.len(), 1000);
    }
}
