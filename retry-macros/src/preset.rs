//! `preset = ...`: the defaults of the three situations backend code meets
//! most. Explicit arguments override them.
//!
//! | preset | max | backoff | jitter | classification |
//! |---|---|---|---|---|
//! | `network` | 5 | exp from 1 s, ×2, cap 30 s | proportional (¼) | transient errors only |
//! | `external_api` | 3 | exp from 2 s, ×2, cap 30 s | full | `Retry-After` honoured; 4xx never retried but 408 and 429 |
//! | `internal` | 3 | exp from 50 ms, ×2, cap 1 s | none | transient errors only |

use std::time::Duration;

use crate::args::{Args, Backoff, DEFAULT_JITTER_RATIO, Jitter, Max, Preset};
use crate::duration::Dur;

/// Fills the arguments the preset sets and the user left out; true when
/// errors are to be classified as `external_api` says.
pub fn apply(args: &mut Args) -> bool {
    let Some(preset) = args.preset else {
        return false;
    };
    let exp = |base: Duration, max: Duration| Backoff::Exp {
        base: Some(Dur::default_literal(base)),
        factor: Some(2.0),
        max: Some(Dur::default_literal(max)),
    };
    let (max, backoff, jitter) = match preset {
        Preset::Network => (
            5,
            exp(Duration::from_secs(1), Duration::from_secs(30)),
            Jitter::Proportional(DEFAULT_JITTER_RATIO),
        ),
        Preset::ExternalApi => (
            3,
            exp(Duration::from_secs(2), Duration::from_secs(30)),
            Jitter::Full,
        ),
        Preset::Internal => (
            3,
            exp(Duration::from_millis(50), Duration::from_secs(1)),
            Jitter::None,
        ),
    };
    args.max.get_or_insert(Max::Limited(max));
    args.backoff.get_or_insert(backoff);
    args.jitter.get_or_insert(jitter);
    if preset == Preset::ExternalApi {
        args.honor_retry_after.get_or_insert(true);
    }
    preset == Preset::ExternalApi && args.on.is_none()
}
