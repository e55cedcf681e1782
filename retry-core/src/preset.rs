//! What `#[retry(preset = ..)]` sets, for the three situations backend code
//! meets most. A function's own arguments override each part; the
//! expansion names these constants rather than copying their values.
//!
//! | preset | max | backoff | jitter | classification |
//! |---|---|---|---|---|
//! | `network` | 5 | exp from 1 s, ×2, cap 30 s | proportional (¼) | transient errors only |
//! | `external_api` | 3 | exp from 2 s, ×2, cap 30 s | full | `Retry-After` honoured; 4xx never retried but 408 and 429 ([`external_api`]) |
//! | `internal` | 3 | exp from 50 ms, ×2, cap 1 s | none | transient errors only |

use core::time::Duration;

use crate::backoff::{DEFAULT_FACTOR, Exponential};
use crate::class::Classification;
use crate::jitter::Jitter;

/// The parts of a policy a preset sets.
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    /// Most attempts, the first included.
    pub max_attempts: u32,
    /// The delay curve.
    pub backoff: Exponential,
    /// The jitter.
    pub jitter: Jitter,
}

/// `preset = network`: a call across the network, which a dropped
/// connection or a timeout ends now and then.
pub const NETWORK: Preset = Preset {
    max_attempts: 5,
    backoff: Exponential::new(
        Duration::from_secs(1),
        DEFAULT_FACTOR,
        Duration::from_secs(30),
    ),
    jitter: Jitter::DEFAULT,
};

/// `preset = external_api`: a service of someone else's, which rate-limits
/// and says so.
pub const EXTERNAL_API: Preset = Preset {
    max_attempts: 3,
    backoff: Exponential::new(
        Duration::from_secs(2),
        DEFAULT_FACTOR,
        Duration::from_secs(30),
    ),
    jitter: Jitter::Full,
};

/// `preset = internal`: a service of one's own, close by, that recovers
/// fast.
pub const INTERNAL: Preset = Preset {
    max_attempts: 3,
    backoff: Exponential::new(
        Duration::from_millis(50),
        DEFAULT_FACTOR,
        Duration::from_secs(1),
    ),
    jitter: Jitter::None,
};

/// The classification of `preset = external_api`: 4xx statuses other than
/// 408 and 429 are never retried.
pub fn external_api(class: Classification) -> Classification {
    match class.code().and_then(|code| code.parse::<u16>().ok()) {
        Some(status @ 400..=499)
            if status != 408 && status != 429 && class.class().is_retryable() =>
        {
            Classification::logical().with_code(status)
        }
        _ => class,
    }
}
