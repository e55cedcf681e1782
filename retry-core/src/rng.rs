//! The small random number generator behind jitter.
//!
//! Each retried call owns one (8 bytes, seeded from the thread RNG on the
//! first retry), so a retrying future never holds a thread-local RNG across
//! an `.await` and the success path never touches randomness.

/// A SplitMix64 generator: fast, 8 bytes of state, seedable for tests.
///
/// ```
/// use retry::jitter::Rng;
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

    /// A generator seeded from the thread's cryptographic RNG.
    pub fn from_entropy() -> Rng {
        Rng::seeded(rand::random())
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
