//! The grammar of durations in a dynamic policy, in its text form and in
//! configuration: `250ms`, `30s`, `1m30s`, `1.5s`, as the attribute writes
//! them, and their writing back.

use core::fmt;
use core::time::Duration;

use super::invalid::{ParsePolicyError, syntax};

/// A duration as people write it; a part of a nanosecond is refused.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, ParsePolicyError> {
    let text = text.trim();
    let malformed = || {
        syntax(format!(
            "`{text}` is not a duration such as `250ms`, `30s` or `1m30s` (units: h, m, s, ms, us, ns)"
        ))
    };
    let mut rest = text;
    let mut total: u128 = 0;
    if rest.is_empty() {
        return Err(malformed());
    }
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(malformed)?;
        let (number, after) = rest.split_at(number_end);
        let unit_end = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_end);
        let nanos_per: u128 = match unit {
            "h" => 3_600_000_000_000,
            "m" => 60_000_000_000,
            "s" => 1_000_000_000,
            "ms" => 1_000_000,
            "us" | "µs" => 1_000,
            "ns" => 1,
            _ => return Err(malformed()),
        };
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
            return Err(malformed());
        }
        let whole: u128 = if whole.is_empty() {
            0
        } else {
            whole.parse().map_err(|_| malformed())?
        };
        let mut nanos = whole.checked_mul(nanos_per).ok_or_else(malformed)?;
        if !fraction.is_empty() {
            let digits = u32::try_from(fraction.len()).map_err(|_| malformed())?;
            let scale = 10u128.checked_pow(digits).ok_or_else(malformed)?;
            let fraction: u128 = fraction.parse().map_err(|_| malformed())?;
            let part = fraction.checked_mul(nanos_per).ok_or_else(malformed)?;
            // As the attribute reads durations: a part of a nanosecond is
            // refused, not dropped, so that `0.5ns` means the same there
            // and here.
            if part % scale != 0 {
                return Err(syntax(format!(
                    "`{text}` is not a whole number of nanoseconds, the smallest step of a duration"
                )));
            }
            nanos += part / scale;
        }
        total = total.checked_add(nanos).ok_or_else(malformed)?;
        rest = after;
    }
    let secs = u64::try_from(total / 1_000_000_000).map_err(|_| malformed())?;
    Ok(Duration::new(secs, (total % 1_000_000_000) as u32))
}

/// A duration as [`parse_duration`] reads it: `1m30s`, `250ms`, `0s`.
pub(crate) struct Written(pub Duration);

impl fmt::Display for Written {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut nanos = self.0.as_nanos();
        if nanos == 0 {
            return f.write_str("0s");
        }
        for (unit, per) in [
            ("h", 3_600_000_000_000u128),
            ("m", 60_000_000_000),
            ("s", 1_000_000_000),
            ("ms", 1_000_000),
            ("us", 1_000),
            ("ns", 1),
        ] {
            if nanos >= per {
                write!(f, "{}{unit}", nanos / per)?;
                nanos %= per;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_read_as_people_write_them() {
        let ms = Duration::from_millis;
        for (text, expected) in [
            ("250ms", ms(250)),
            ("30s", ms(30_000)),
            ("1m30s", ms(90_000)),
            ("1.5s", ms(1_500)),
            (".5s", ms(500)),
            ("2h", ms(7_200_000)),
            ("100us", Duration::from_micros(100)),
            ("7ns", Duration::from_nanos(7)),
            (" 1h1m1s1ms ", ms(3_661_001)),
            ("0s", Duration::ZERO),
        ] {
            assert_eq!(parse_duration(text), Ok(expected), "{text}");
            assert_eq!(parse_duration(&Written(expected).to_string()), Ok(expected));
        }
        for bad in [
            "",
            "5",
            "ms",
            "5 s",
            "5parsecs",
            "1..5s",
            "1.5.5s",
            "-1s",
            "s5",
            "99999999999999999999999999999999999h",
            "1e3s",
        ] {
            let error = parse_duration(bad).unwrap_err().to_string();
            assert!(error.contains("is not a duration"), "{bad:?}: {error}");
        }
    }
}
