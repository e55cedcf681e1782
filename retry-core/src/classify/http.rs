//! HTTP status codes and the `Retry-After` header.
//!
//! | status | class | applied |
//! |---|---|---|
//! | 408 Request Timeout, 421 Misdirected Request, 425 Too Early | transient | no |
//! | 429 Too Many Requests | rate-limited (with the `Retry-After` delay when given) | no |
//! | 503 Service Unavailable | rate-limited with a valid `Retry-After`, else transient | no |
//! | 413 Content Too Large | rate-limited with a valid `Retry-After`, else validation | no |
//! | 500, 502, 504, 507 and every other 5xx but 501, 508, 511 | transient | **maybe** |
//! | 400 Bad Request, 422 Unprocessable Content, 431 Request Header Fields Too Large | validation | no |
//! | 501, 508, 511, every other 4xx (401, 403, 404, 405, 409, 410, 412, ...) and anything below 400 | logical | no |
//!
//! "Applied" says whether the request may have taken effect before the
//! error (see [`Applied`](crate::Applied)): a 408, 421, 425, 429 or 503
//! is a refusal (RFC 9110 §15.5.9, §15.5.20; RFC 8470 §5.2; RFC 6585 §4;
//! RFC 9110 §15.6.4), while a 500, 502 or 504 may come after the server or
//! its upstream processed it, in part or whole (RFC 9110 §15.6.1, §15.6.3,
//! §15.6.5). A server that sends `x-should-retry: true` vouches that the
//! request did not take effect.
//!
//! Facts from RFC 9110 §15, RFC 6585 and RFC 8470. A 500 may come from a
//! deterministic server bug, so keep `max` small for non-idempotent calls.
//!
#![cfg_attr(
    feature = "http",
    doc = "With the `http` feature, [`http::StatusCode`](::http::StatusCode) is \
           [`Classified`](crate::Classified) and [`classify_response`] reads \
           `Retry-After` from an [`http::HeaderMap`](::http::HeaderMap)."
)]
// Without the feature those items are not there to link to.
#![cfg_attr(
    not(feature = "http"),
    doc = "With the `http` feature, `http::StatusCode` is \
           [`Classified`](crate::Classified) and `classify_response` reads \
           `Retry-After` from an `http::HeaderMap`."
)]

use core::fmt;
use core::time::Duration;
use std::time::SystemTime;

use crate::class::{Class, Classification, Code, CodeKind};

/// The class of an HTTP status code, carrying the code.
///
/// ```
/// use reattempt::{http, Class};
///
/// assert_eq!(http::status(503).class(), Class::Transient);
/// assert_eq!(http::status(429).class(), Class::RateLimited);
/// assert_eq!(http::status(404).class(), Class::Logical);
/// assert_eq!(http::status(422).class(), Class::Validation);
/// assert_eq!(http::status(503).code(), Some("503"));
/// ```
pub fn status(code: u16) -> Classification {
    let class = Classification::new(status_class(code))
        .with_code(Code::number(u64::from(code)))
        .with_code_kind(CodeKind::Http);
    match code {
        // The server refused the request without acting on it: it timed out
        // waiting for it (408), is not the right server (421), will not
        // risk a replay (425), or says it cannot take it now (429, 503).
        408 | 421 | 425 | 429 | 503 => class.not_applied(),
        // 500, 502, 504 and the other 5xx: the request may have been
        // processed, upstream or in part, before the failure.
        _ => class,
    }
}

fn status_class(code: u16) -> Class {
    match code {
        408 | 421 | 425 => Class::Transient,
        429 => Class::RateLimited,
        400 | 413 | 422 | 431 => Class::Validation,
        501 | 508 | 511 => Class::Logical,
        500..=599 => Class::Transient,
        _ => Class::Logical,
    }
}

/// The class of a response from its status and its `Retry-After` value, if
/// any: a 429, 503 or 413 with a valid delay is rate-limited with that
/// delay. A `Retry-After` that does not parse is ignored (the status alone
/// decides), as RFC 9110 asks.
///
/// ```
/// use reattempt::{http, Class};
/// use std::time::{Duration, SystemTime};
///
/// let c = http::response(503, Some("2"), SystemTime::now());
/// assert_eq!(c.class(), Class::RateLimited);
/// assert_eq!(c.retry_after(), Some(Duration::from_secs(2)));
///
/// // Garbage is no hint: a plain 503 is transient.
/// let c = http::response(503, Some("soon"), SystemTime::now());
/// assert_eq!(c.class(), Class::Transient);
/// assert_eq!(c.retry_after(), None);
/// ```
pub fn response(code: u16, retry_after: Option<&str>, now: SystemTime) -> Classification {
    pushback(
        code,
        |name| {
            if name == "retry-after" {
                retry_after
            } else {
                None
            }
        },
        now,
    )
}

/// The class of a response from its status and every header servers push
/// back with; `header` gives a header's value by its lower-case name (and
/// `None` for a header that is missing or given more than once).
///
/// - `x-should-retry` and `Stripe-Should-Retry` override the status's class
///   in either direction: `false` makes any status logical (one attempt),
///   `true` makes a status that is not retried transient.
/// - On a 413, 429 or 503 (or a status the server said to retry), the delay
///   the server asks for comes from `Retry-After`, else `RateLimit-Reset`,
///   else `X-RateLimit-Reset`. The two reset headers are read as
///   delta-seconds when below 1,000,000,000 and as a Unix timestamp in
///   seconds from there on: no window is 31 years long, and every
///   timestamp since 2001 is above it (the IETF draft's `RateLimit-Reset`
///   is delta-seconds; GitHub's `X-RateLimit-Reset` is a timestamp).
/// - A value that does not parse (negative, fractional, non-numeric,
///   several values, a date or timestamp not in the future, more than a
///   year) is no hint, and the next header is tried. Nothing here panics.
///
/// ```
/// use reattempt::{http, Class};
/// use std::time::{Duration, SystemTime};
///
/// let now = SystemTime::now();
/// let c = http::pushback(429, |name| (name == "ratelimit-reset").then_some("7"), now);
/// assert_eq!(c.retry_after(), Some(Duration::from_secs(7)));
///
/// let c = http::pushback(503, |name| (name == "x-should-retry").then_some("false"), now);
/// assert_eq!(c.class(), Class::Logical);
///
/// let c = http::pushback(409, |name| (name == "x-should-retry").then_some("true"), now);
/// assert_eq!(c.class(), Class::Transient);
/// ```
pub fn pushback<'h>(
    code: u16,
    header: impl Fn(&str) -> Option<&'h str>,
    now: SystemTime,
) -> Classification {
    let plain = status(code);
    let code_text = Code::number(u64::from(code));
    let told = header("x-should-retry")
        .or_else(|| header("stripe-should-retry"))
        .and_then(|value| match value.trim() {
            v if v.eq_ignore_ascii_case("true") => Some(true),
            v if v.eq_ignore_ascii_case("false") => Some(false),
            _ => None,
        });
    let plain = match told {
        Some(false) => {
            return Classification::logical()
                .with_code(code_text)
                .with_code_kind(CodeKind::Http);
        }
        // A server that says to retry says the request did not take effect.
        Some(true) => {
            let retried = if plain.class().is_retryable() {
                plain
            } else {
                Classification::transient()
                    .with_code(code_text)
                    .with_code_kind(CodeKind::Http)
            };
            retried.not_applied()
        }
        None => plain,
    };
    if !matches!(code, 413 | 429 | 503) && told != Some(true) {
        return plain;
    }
    let delay = header("retry-after")
        .and_then(|value| parse_retry_after(value, now).ok())
        .or_else(|| header("ratelimit-reset").and_then(|v| parse_rate_limit_reset(v, now).ok()))
        .or_else(|| header("x-ratelimit-reset").and_then(|v| parse_rate_limit_reset(v, now).ok()));
    match delay {
        Some(delay) => {
            let limited = Classification::rate_limited()
                .with_code(code_text)
                .with_code_kind(CodeKind::Http)
                .with_retry_after(delay);
            // A server asking for time refused this request.
            limited.not_applied()
        }
        None => plain,
    }
}

/// Values of `RateLimit-Reset` at and above this are Unix timestamps;
/// below it, delta-seconds. See [`pushback`].
pub const RESET_TIMESTAMP_FROM: u64 = 1_000_000_000;

/// Parses a `RateLimit-Reset` or `X-RateLimit-Reset` value: delta-seconds
/// below [`RESET_TIMESTAMP_FROM`], a Unix timestamp in seconds from there
/// on, measured from `now`. Never panics.
///
/// ```
/// use reattempt::http::{parse_rate_limit_reset, RetryAfterError};
/// use std::time::{Duration, SystemTime, UNIX_EPOCH};
///
/// let now = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
/// assert_eq!(parse_rate_limit_reset("30", now), Ok(Duration::from_secs(30)));
/// assert_eq!(parse_rate_limit_reset("1800000045", now), Ok(Duration::from_secs(45)));
/// assert_eq!(parse_rate_limit_reset("1700000000", now), Err(RetryAfterError::InThePast));
/// assert_eq!(parse_rate_limit_reset("-5", now), Err(RetryAfterError::Negative));
/// assert_eq!(parse_rate_limit_reset("5, 6", now), Err(RetryAfterError::Malformed));
/// ```
pub fn parse_rate_limit_reset(value: &str, now: SystemTime) -> Result<Duration, RetryAfterError> {
    let value = value.trim_matches([' ', '\t']);
    if value.is_empty() {
        return Err(RetryAfterError::Empty);
    }
    if !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(match value.strip_prefix('-') {
            Some(rest) if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) => {
                RetryAfterError::Negative
            }
            _ => RetryAfterError::Malformed,
        });
    }
    let significant = value.trim_start_matches('0');
    let number: u64 = if significant.is_empty() {
        0
    } else {
        significant.parse().map_err(|_| RetryAfterError::TooLarge)?
    };
    let delay = if number < RESET_TIMESTAMP_FROM {
        Duration::from_secs(number)
    } else {
        let at = SystemTime::UNIX_EPOCH
            .checked_add(Duration::from_secs(number))
            .ok_or(RetryAfterError::TooLarge)?;
        match at.duration_since(now) {
            Ok(delay) if !delay.is_zero() => delay,
            _ => return Err(RetryAfterError::InThePast),
        }
    };
    if delay > MAX_RETRY_AFTER_HINT {
        return Err(RetryAfterError::TooLarge);
    }
    Ok(delay)
}

/// The longest delay a `Retry-After` value may ask for; anything longer is
/// [`RetryAfterError::TooLarge`]. A policy caps it further with
/// `max_retry_after`.
pub const MAX_RETRY_AFTER_HINT: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// Why a `Retry-After` value gives no delay.
///
/// ```
/// use reattempt::http::{RetryAfterError, parse_retry_after};
/// use std::time::{Duration, SystemTime};
///
/// let now = SystemTime::now();
/// assert_eq!(parse_retry_after("120", now), Ok(Duration::from_secs(120)));
/// assert_eq!(parse_retry_after("soon", now), Err(RetryAfterError::Malformed));
/// assert_eq!(parse_retry_after("-5", now), Err(RetryAfterError::Negative));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RetryAfterError {
    /// The value is empty or only whitespace.
    Empty,
    /// The value is neither delay-seconds nor an HTTP-date.
    Malformed,
    /// The value is a negative number of seconds.
    Negative,
    /// The delay is longer than [`MAX_RETRY_AFTER_HINT`] (or overflows).
    TooLarge,
    /// The HTTP-date is not after `now`.
    InThePast,
}

impl fmt::Display for RetryAfterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RetryAfterError::Empty => "Retry-After is empty",
            RetryAfterError::Malformed => {
                "Retry-After is neither a number of seconds nor an HTTP-date"
            }
            RetryAfterError::Negative => "Retry-After is a negative number of seconds",
            RetryAfterError::TooLarge => "Retry-After asks for more than a year",
            RetryAfterError::InThePast => "Retry-After names a date that has passed",
        })
    }
}

impl std::error::Error for RetryAfterError {}

/// Parses a `Retry-After` value (RFC 9110 §10.2.3): delay-seconds (`120`) or
/// an HTTP-date in any of its three forms (IMF-fixdate, RFC 850, asctime),
/// measured from `now`. Never panics.
///
/// ```
/// use reattempt::http::{parse_retry_after, RetryAfterError};
/// use std::time::{Duration, SystemTime, UNIX_EPOCH};
///
/// let now = UNIX_EPOCH + Duration::from_secs(784_111_770); // 06 Nov 1994 08:49:30 GMT
/// assert_eq!(parse_retry_after("120", now), Ok(Duration::from_secs(120)));
/// assert_eq!(
///     parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
///     Ok(Duration::from_secs(7)),
/// );
/// assert_eq!(parse_retry_after("-1", now), Err(RetryAfterError::Negative));
/// assert_eq!(parse_retry_after("soon", now), Err(RetryAfterError::Malformed));
/// ```
pub fn parse_retry_after(value: &str, now: SystemTime) -> Result<Duration, RetryAfterError> {
    let value = value.trim_matches([' ', '\t']);
    if value.is_empty() {
        return Err(RetryAfterError::Empty);
    }
    if value.bytes().all(|b| b.is_ascii_digit()) {
        return delay_seconds(value);
    }
    if let Some(rest) = value.strip_prefix('-')
        && !rest.is_empty()
        && rest.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(RetryAfterError::Negative);
    }
    // httpdate reads all three forms, checks the weekday against the date,
    // and reads an RFC 850 two-digit year as 1970-2069.
    let at = httpdate::parse_http_date(value).map_err(|_| RetryAfterError::Malformed)?;
    let delay = match at.duration_since(now) {
        Ok(delay) if !delay.is_zero() => delay,
        _ => return Err(RetryAfterError::InThePast),
    };
    if delay > MAX_RETRY_AFTER_HINT {
        return Err(RetryAfterError::TooLarge);
    }
    Ok(delay)
}

fn delay_seconds(digits: &str) -> Result<Duration, RetryAfterError> {
    let significant = digits.trim_start_matches('0');
    // Anything over 20 digits overflows u64 before the hint limit is checked.
    if significant.len() > 20 {
        return Err(RetryAfterError::TooLarge);
    }
    let seconds: u64 = if significant.is_empty() {
        0
    } else {
        significant.parse().map_err(|_| RetryAfterError::TooLarge)?
    };
    let delay = Duration::from_secs(seconds);
    if delay > MAX_RETRY_AFTER_HINT {
        return Err(RetryAfterError::TooLarge);
    }
    Ok(delay)
}

#[cfg(feature = "http")]
mod http_crate {
    use std::time::SystemTime;

    use ::http::{HeaderMap, Response, StatusCode};

    use crate::class::Classification;
    use crate::classify::{Classified, ClassifiedValue};

    // Kept out of "other types implement" lists, which would change with features.
    #[diagnostic::do_not_recommend]
    impl Classified for StatusCode {
        fn classification(&self) -> Classification {
            super::status(self.as_u16())
        }
    }

    /// The class of a response from its status and headers, read by
    /// [`pushback`](super::pushback) against the system clock. Requires the
    /// `http` feature.
    ///
    /// ```
    /// use http::{HeaderMap, HeaderValue, StatusCode};
    /// use reattempt::Class;
    ///
    /// let mut headers = HeaderMap::new();
    /// headers.insert("retry-after", HeaderValue::from_static("3"));
    /// let c = reattempt::http::classify_response(StatusCode::TOO_MANY_REQUESTS, &headers);
    /// assert_eq!(c.class(), Class::RateLimited);
    /// assert_eq!(c.retry_after(), Some(std::time::Duration::from_secs(3)));
    /// ```
    pub fn classify_response(status: StatusCode, headers: &HeaderMap) -> Classification {
        super::pushback(
            status.as_u16(),
            |name| single(headers, name),
            SystemTime::now(),
        )
    }

    /// The value of a header given once, as text; `None` when it is
    /// missing, not text, or given more than once (no hint, then).
    pub(crate) fn single<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
        let mut values = headers.get_all(name).iter();
        let value = values.next()?;
        if values.next().is_some() {
            return None;
        }
        value.to_str().ok()
    }

    impl<B> ClassifiedValue for Response<B> {
        fn failure(&self) -> Option<Classification> {
            (self.status().as_u16() >= 400)
                .then(|| classify_response(self.status(), self.headers()))
        }
    }
}

#[cfg(feature = "http")]
pub use http_crate::classify_response;
#[cfg(feature = "reqwest")]
pub(crate) use http_crate::single;

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    // Sun, 06 Nov 1994 08:49:37 GMT
    const SAMPLE: u64 = 784_111_777;

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn status_table_rows() {
        let rows: &[(u16, Class)] = &[
            (400, Class::Validation),
            (401, Class::Logical),
            (403, Class::Logical),
            (404, Class::Logical),
            (405, Class::Logical),
            (408, Class::Transient),
            (409, Class::Logical),
            (410, Class::Logical),
            (412, Class::Logical),
            (413, Class::Validation),
            (421, Class::Transient),
            (422, Class::Validation),
            (425, Class::Transient),
            (429, Class::RateLimited),
            (431, Class::Validation),
            (500, Class::Transient),
            (501, Class::Logical),
            (502, Class::Transient),
            (503, Class::Transient),
            (504, Class::Transient),
            (507, Class::Transient),
            (508, Class::Logical),
            (511, Class::Logical),
            (599, Class::Transient),
            (418, Class::Logical),
            (200, Class::Logical),
            (302, Class::Logical),
        ];
        for &(code, class) in rows {
            assert_eq!(status(code).class(), class, "{code}");
            assert_eq!(status(code).code(), Some(code.to_string().as_str()));
        }
    }

    #[test]
    fn response_reads_retry_after_only_where_it_means_a_delay() {
        let now = at(SAMPLE);
        let limited = response(429, Some("7"), now);
        assert_eq!(limited.class(), Class::RateLimited);
        assert_eq!(limited.retry_after(), Some(Duration::from_secs(7)));
        assert_eq!(response(429, None, now).retry_after(), None);
        assert_eq!(response(429, None, now).class(), Class::RateLimited);
        assert_eq!(response(503, Some("1"), now).class(), Class::RateLimited);
        assert_eq!(response(503, None, now).class(), Class::Transient);
        assert_eq!(response(413, Some("5"), now).class(), Class::RateLimited);
        assert_eq!(response(413, Some("-5"), now).class(), Class::Validation);
        // Retry-After on a 404 does not make it worth retrying.
        assert_eq!(response(404, Some("1"), now).class(), Class::Logical);
    }

    #[test]
    fn delay_seconds() {
        let now = at(SAMPLE);
        assert_eq!(parse_retry_after("0", now), Ok(Duration::ZERO));
        assert_eq!(
            parse_retry_after(" 120\t", now),
            Ok(Duration::from_secs(120))
        );
        assert_eq!(
            parse_retry_after("000042", now),
            Ok(Duration::from_secs(42))
        );
        assert_eq!(parse_retry_after("31536000", now), Ok(MAX_RETRY_AFTER_HINT));
        assert_eq!(
            parse_retry_after("31536001", now),
            Err(RetryAfterError::TooLarge)
        );
        assert_eq!(
            parse_retry_after("99999999999999999999999999", now),
            Err(RetryAfterError::TooLarge)
        );
    }

    #[test]
    fn garbage_and_negative_values_give_no_hint() {
        let now = at(SAMPLE);
        for (value, error) in [
            ("", RetryAfterError::Empty),
            ("   ", RetryAfterError::Empty),
            ("-1", RetryAfterError::Negative),
            ("-", RetryAfterError::Malformed),
            ("1.5", RetryAfterError::Malformed),
            ("+3", RetryAfterError::Malformed),
            ("3s", RetryAfterError::Malformed),
            ("soon", RetryAfterError::Malformed),
            ("١٢", RetryAfterError::Malformed),
            ("Sun, 06 Nov 1994 08:49:37 UTC", RetryAfterError::Malformed),
            ("Sun, 31 Feb 2030 08:49:37 GMT", RetryAfterError::Malformed),
            ("Sun, 06 Nov 2030 24:00:00 GMT", RetryAfterError::Malformed),
            ("Sun, 06 Foo 2030 08:49:37 GMT", RetryAfterError::Malformed),
            ("sun, 06 Nov 2030 08:49:37 GMT", RetryAfterError::Malformed),
            ("Sun, 6 Nov 2030 08:49:37 GMT", RetryAfterError::Malformed),
            ("Sun, 06 Nov 2030 8:49:37 GMT", RetryAfterError::Malformed),
        ] {
            assert_eq!(parse_retry_after(value, now), Err(error), "{value:?}");
        }
    }

    #[test]
    fn the_three_date_forms_agree() {
        let now = at(SAMPLE - 60);
        let expected = Ok(Duration::from_secs(60));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
            expected
        );
        assert_eq!(parse_retry_after("Sun Nov  6 08:49:37 1994", now), expected);
        assert_eq!(parse_retry_after("Sun Nov 06 08:49:37 1994", now), expected);
    }

    #[test]
    fn rfc850_two_digit_years_are_read_as_1970_to_2069() {
        let now = at(SAMPLE - 60);
        assert_eq!(
            parse_retry_after("Sunday, 06-Nov-94 08:49:37 GMT", now),
            Ok(Duration::from_secs(60))
        );
        // 06 Nov 2030 is a Wednesday; 2030-11-06T08:49:37Z is 1_920_185_377.
        assert_eq!(
            parse_retry_after("Wednesday, 06-Nov-30 08:49:37 GMT", at(1_920_185_377 - 5)),
            Ok(Duration::from_secs(5))
        );
    }

    #[test]
    fn past_and_far_future_dates_give_no_hint() {
        let now = at(SAMPLE);
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Err(RetryAfterError::InThePast)
        );
        assert_eq!(
            parse_retry_after("Thu, 01 Jan 1970 00:00:00 GMT", now),
            Err(RetryAfterError::InThePast)
        );
        assert_eq!(
            parse_retry_after("Fri, 31 Dec 9999 23:59:59 GMT", now),
            Err(RetryAfterError::TooLarge)
        );
    }

    #[test]
    fn leap_days_and_weekdays_are_checked() {
        // 2024-02-29T12:00:00Z is 1_709_208_000 and a Thursday.
        let now = at(1_709_208_000 - 10);
        assert_eq!(
            parse_retry_after("Thu, 29 Feb 2024 12:00:00 GMT", now),
            Ok(Duration::from_secs(10))
        );
        for value in [
            "Thu, 29 Feb 2023 12:00:00 GMT",
            "Fri, 29 Feb 2024 12:00:00 GMT",
            "Thu, 29 Feb 2024 12:00:60 GMT",
        ] {
            assert_eq!(
                parse_retry_after(value, now),
                Err(RetryAfterError::Malformed),
                "{value}"
            );
        }
    }

    /// A header lookup over `(name, value)` pairs.
    fn headers<'h>(pairs: &'h [(&'h str, &'h str)]) -> impl Fn(&str) -> Option<&'h str> {
        move |name| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }

    #[test]
    fn rate_limit_resets_in_both_forms_give_the_delay() {
        let now = at(1_800_000_000);
        for (name, value, delay) in [
            ("ratelimit-reset", "7", 7),
            ("x-ratelimit-reset", "7", 7),
            ("ratelimit-reset", "1800000045", 45),
            ("x-ratelimit-reset", "1800000045", 45),
            ("ratelimit-reset", "999999999", 999_999_999),
        ] {
            let c = pushback(429, headers(&[(name, value)]), now);
            let expected = Duration::from_secs(delay).min(MAX_RETRY_AFTER_HINT);
            if delay <= MAX_RETRY_AFTER_HINT.as_secs() {
                assert_eq!(c.retry_after(), Some(expected), "{name}: {value}");
                assert_eq!(c.class(), Class::RateLimited);
            } else {
                assert_eq!(c.retry_after(), None, "{name}: {value} is over a year");
            }
        }
    }

    #[test]
    fn retry_after_comes_first_then_ratelimit_reset_then_x_ratelimit_reset() {
        let now = at(1_800_000_000);
        let all = [
            ("retry-after", "3"),
            ("ratelimit-reset", "5"),
            ("x-ratelimit-reset", "9"),
        ];
        assert_eq!(
            pushback(503, headers(&all), now).retry_after(),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            pushback(503, headers(&all[1..]), now).retry_after(),
            Some(Duration::from_secs(5))
        );
        let garbled = [
            ("retry-after", "soon"),
            ("ratelimit-reset", "-1"),
            ("x-ratelimit-reset", "9"),
        ];
        assert_eq!(
            pushback(503, headers(&garbled), now).retry_after(),
            Some(Duration::from_secs(9)),
            "a value that does not parse is no hint: the next header is read"
        );
        // A 500 asks for no delay, whatever its headers say.
        assert_eq!(pushback(500, headers(&all), now).retry_after(), None);
    }

    #[test]
    fn should_retry_headers_override_the_status_both_ways() {
        let now = at(1_800_000_000);
        for name in ["x-should-retry", "stripe-should-retry"] {
            let no = pushback(503, headers(&[(name, "false"), ("retry-after", "2")]), now);
            assert_eq!(
                (no.class(), no.code(), no.retry_after()),
                (Class::Logical, Some("503"), None)
            );
            let yes = pushback(409, headers(&[(name, "true")]), now);
            assert_eq!((yes.class(), yes.code()), (Class::Transient, Some("409")));
            let asked = pushback(409, headers(&[(name, " TRUE "), ("retry-after", "4")]), now);
            assert_eq!(asked.retry_after(), Some(Duration::from_secs(4)));
            let unsure = pushback(409, headers(&[(name, "maybe")]), now);
            assert_eq!(unsure.class(), Class::Logical, "anything else is ignored");
        }
    }

    #[test]
    fn garbage_rate_limit_resets_are_no_hint() {
        let now = at(1_800_000_000);
        for (value, error) in [
            ("", RetryAfterError::Empty),
            ("-1", RetryAfterError::Negative),
            ("1.5", RetryAfterError::Malformed),
            ("5, 6", RetryAfterError::Malformed),
            ("ten", RetryAfterError::Malformed),
            ("1700000000", RetryAfterError::InThePast),
            ("1800000000", RetryAfterError::InThePast),
            ("99999999999999999999999", RetryAfterError::TooLarge),
            ("18446744073709551615", RetryAfterError::TooLarge),
        ] {
            assert_eq!(parse_rate_limit_reset(value, now), Err(error), "{value:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn never_panics(value in "\\PC{0,40}", now in 0u64..=u64::MAX / 4) {
            let _ = parse_retry_after(&value, at(now));
        }

        #[test]
        fn pushback_headers_never_panic_and_stay_within_the_limit(
            retry_after in "\\PC{0,24}|[0-9]{1,22}|-[0-9]{1,5}",
            reset in "\\PC{0,24}|[0-9]{1,22}|-[0-9]{1,5}|[0-9]{1,10}, [0-9]{1,10}",
            x_reset in "\\PC{0,24}|[0-9]{1,22}",
            should in "true|false|TRUE|\\PC{0,8}",
            code in 100u16..600,
            now in 0u64..4_000_000_000,
        ) {
            let pairs = [
                ("retry-after", retry_after.as_str()),
                ("ratelimit-reset", reset.as_str()),
                ("x-ratelimit-reset", x_reset.as_str()),
                ("x-should-retry", should.as_str()),
            ];
            let c = pushback(code, headers(&pairs), at(now));
            if let Some(delay) = c.retry_after() {
                proptest::prop_assert!(delay <= MAX_RETRY_AFTER_HINT);
            }
            let _ = parse_rate_limit_reset(&reset, at(now));
        }

        #[test]
        fn any_hint_is_within_the_limit(value in "[0-9]{1,30}|[A-Za-z0-9 ,:-]{0,40}", now in 0u64..4_000_000_000) {
            if let Ok(delay) = parse_retry_after(&value, at(now)) {
                proptest::prop_assert!(delay <= MAX_RETRY_AFTER_HINT);
            }
        }
    }
}
