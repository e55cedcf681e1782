//! gRPC status codes (`google.rpc.Code`) and server pushback
//! (`grpc-retry-pushback-ms`, gRFC A6).
//!
//! | class | codes |
//! |---|---|
//! | transient | 14 UNAVAILABLE, 4 DEADLINE_EXCEEDED, 10 ABORTED (retry the whole read-modify-write sequence), 8 RESOURCE_EXHAUSTED without pushback |
//! | rate-limited | 8 RESOURCE_EXHAUSTED with a pushback delay |
//! | validation | 3 INVALID_ARGUMENT, 11 OUT_OF_RANGE |
//! | logical | 1 CANCELLED, 2 UNKNOWN, 5 NOT_FOUND, 6 ALREADY_EXISTS, 7 PERMISSION_DENIED, 9 FAILED_PRECONDITION, 12 UNIMPLEMENTED, 13 INTERNAL, 15 DATA_LOSS, 16 UNAUTHENTICATED, 0 OK and any unknown code |
//!
//! Applied (see [`Applied`](crate::Applied)): **no** for
//! RESOURCE_EXHAUSTED and ABORTED (refused, or rolled back by a conflict)
//! and for a status with pushback; **maybe** for UNAVAILABLE and
//! DEADLINE_EXCEEDED, which the gRPC status-code guide says are "not
//! always safe to retry" for non-idempotent operations.
//!
//! The code carried is the status's name (`"UNAVAILABLE"`). A pushback that
//! is negative or does not parse means "do not retry" (gRFC A6): the status
//! becomes logical whatever its code.

use core::time::Duration;

use crate::class::{Class, Classification, CodeKind};

/// The number of a status named `name`, as `rpc.grpc.status_code` wants it.
pub(crate) fn number(name: &str) -> Option<i64> {
    NAMES.iter().position(|n| *n == name).map(|i| i as i64)
}

const NAMES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// The class of a gRPC status code, carrying its name as the code.
///
/// ```
/// use reattempt::{Class, grpc};
///
/// assert_eq!(grpc::status(14).class(), Class::Transient);
/// assert_eq!(grpc::status(14).code(), Some("UNAVAILABLE"));
/// assert_eq!(grpc::status(3).class(), Class::Validation);
/// assert_eq!(grpc::status(7).class(), Class::Logical);
/// ```
pub fn status(code: i32) -> Classification {
    let class = match code {
        4 | 8 | 10 | 14 => Class::Transient,
        3 | 11 => Class::Validation,
        _ => Class::Logical,
    };
    let classification = match code {
        // Refused for lack of quota, or aborted (a concurrency conflict
        // that rolled the operation back): it did not take effect.
        8 | 10 => Classification::new(class).not_applied(),
        // UNAVAILABLE and DEADLINE_EXCEEDED may come after the server acted
        // ("not always safe to retry non-idempotent operations").
        _ => Classification::new(class),
    };
    let classification = classification.with_code_kind(CodeKind::Grpc);
    match usize::try_from(code).ok().and_then(|i| NAMES.get(i)) {
        Some(name) => classification.with_code(*name),
        None => classification.with_code(u32::try_from(code).unwrap_or(u32::MAX)),
    }
}

/// The class of a status with the value of its `grpc-retry-pushback-ms`
/// trailer, if any: a valid pushback makes a retryable status rate-limited
/// with that delay; a negative or malformed one forbids the retry.
///
/// ```
/// use reattempt::{Class, grpc};
/// use std::time::Duration;
///
/// let c = grpc::status_with_pushback(8, Some("1500"));
/// assert_eq!(c.class(), Class::RateLimited);
/// assert_eq!(c.retry_after(), Some(Duration::from_millis(1500)));
/// assert_eq!(grpc::status_with_pushback(14, Some("-1")).class(), Class::Logical);
/// assert_eq!(grpc::status_with_pushback(14, None).class(), Class::Transient);
/// ```
pub fn status_with_pushback(code: i32, pushback_ms: Option<&str>) -> Classification {
    let plain = status(code);
    let Some(value) = pushback_ms else {
        return plain;
    };
    let name = plain.code().unwrap_or_default();
    match parse_pushback(value) {
        // A server pushing back refused the call.
        Some(delay) if plain.class().is_retryable() => Classification::rate_limited()
            .with_code(name)
            .with_code_kind(CodeKind::Grpc)
            .with_retry_after(delay)
            .not_applied(),
        Some(_) => plain,
        None => Classification::logical()
            .with_code(name)
            .with_code_kind(CodeKind::Grpc),
    }
}

/// A pushback in milliseconds: an ASCII signed 32-bit integer; `None` for
/// a negative or malformed value.
fn parse_pushback(value: &str) -> Option<Duration> {
    let millis: i32 = value.trim().parse().ok()?;
    let millis = u64::try_from(millis).ok()?;
    Some(Duration::from_millis(millis))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applied_rows() {
        use crate::Applied::{Maybe, No};
        for (code, applied) in [(8, No), (10, No), (14, Maybe), (4, Maybe), (3, No), (5, No)] {
            assert_eq!(status(code).applied(), applied, "{code}");
        }
        assert_eq!(status_with_pushback(14, Some("100")).applied(), No);
    }

    #[test]
    fn every_row() {
        let rows: &[(i32, Class, &str)] = &[
            (0, Class::Logical, "OK"),
            (1, Class::Logical, "CANCELLED"),
            (2, Class::Logical, "UNKNOWN"),
            (3, Class::Validation, "INVALID_ARGUMENT"),
            (4, Class::Transient, "DEADLINE_EXCEEDED"),
            (5, Class::Logical, "NOT_FOUND"),
            (6, Class::Logical, "ALREADY_EXISTS"),
            (7, Class::Logical, "PERMISSION_DENIED"),
            (8, Class::Transient, "RESOURCE_EXHAUSTED"),
            (9, Class::Logical, "FAILED_PRECONDITION"),
            (10, Class::Transient, "ABORTED"),
            (11, Class::Validation, "OUT_OF_RANGE"),
            (12, Class::Logical, "UNIMPLEMENTED"),
            (13, Class::Logical, "INTERNAL"),
            (14, Class::Transient, "UNAVAILABLE"),
            (15, Class::Logical, "DATA_LOSS"),
            (16, Class::Logical, "UNAUTHENTICATED"),
            (17, Class::Logical, "17"),
            (-1, Class::Logical, "4294967295"),
        ];
        for &(code, class, name) in rows {
            assert_eq!(status(code).class(), class, "{code}");
            assert_eq!(status(code).code(), Some(name), "{code}");
        }
    }

    #[test]
    fn pushback() {
        let limited = status_with_pushback(8, Some("250"));
        assert_eq!(limited.class(), Class::RateLimited);
        assert_eq!(limited.retry_after(), Some(Duration::from_millis(250)));
        assert_eq!(limited.code(), Some("RESOURCE_EXHAUSTED"));
        assert_eq!(
            status_with_pushback(14, Some("0")).retry_after(),
            Some(Duration::ZERO)
        );
        for bad in ["-5", "soon", "", "99999999999", "1.5"] {
            let c = status_with_pushback(14, Some(bad));
            assert_eq!(c.class(), Class::Logical, "{bad:?}");
            assert_eq!(c.code(), Some("UNAVAILABLE"));
        }
        // A pushback does not make a non-retryable status retryable.
        assert_eq!(status_with_pushback(5, Some("100")).class(), Class::Logical);
    }
}
