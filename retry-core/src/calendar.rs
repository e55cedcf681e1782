//! Dates without a date library: days since 1970 and back (Howard
//! Hinnant's algorithms), and RFC 3339 timestamps for records.

use std::time::SystemTime;

/// Days from 1970-01-01 to a date on or after it.
pub(crate) fn days_from_civil(year: u64, month: u64, day: u64) -> u64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year / 400;
    let year_of_era = year - era * 400;
    let month_index = (month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date (year, month, day) of a day counted from 1970-01-01.
pub(crate) fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// `2026-11-30T09:48:58.851Z`, to the millisecond, in UTC. Times before
/// 1970 are written as 1970-01-01T00:00:00.000Z.
pub(crate) fn rfc3339(at: SystemTime) -> String {
    let since = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = since.as_secs();
    let (year, month, day) = civil_from_days(secs / 86_400);
    let rest = secs % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60,
        since.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn days_round_trip() {
        for days in [0, 1, 59, 60, 365, 10_957, 11_016, 11_017, 19_782, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
        assert_eq!(civil_from_days(11_017), (2000, 3, 1));
    }

    #[test]
    fn rfc3339_writes_utc_to_the_millisecond() {
        let at = SystemTime::UNIX_EPOCH + Duration::from_millis(784_111_777_250);
        assert_eq!(rfc3339(at), "1994-11-06T08:49:37.250Z");
        let before = SystemTime::UNIX_EPOCH - Duration::from_secs(5);
        assert_eq!(rfc3339(before), "1970-01-01T00:00:00.000Z");
    }
}
