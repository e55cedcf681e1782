//! What the presets of `#[retry(preset = ..)]` decide at run time.

use crate::class::Classification;

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
