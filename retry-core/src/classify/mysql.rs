//! MySQL and MariaDB error numbers (server errors and the C client's
//! 2000s), classified by number: many numbers share one SQLSTATE.
//!
//! | class | numbers |
//! |---|---|
//! | transient | 1205 lock wait timeout, 1213 deadlock, 3572 lock NOWAIT; 1040 too many connections, 1203, 1226; 1053, 1077 shutdown; 1158–1161 network; 1317 query interrupted; 1927 connection killed (MariaDB); 4031 idle disconnect; 2002, 2003, 2006, 2013, 2055 connection lost; 1290, 1836 read-only (a former primary after failover); 1452, 1216 no referenced row |
//! | validation | 1048 column cannot be null, 1364 no default value, 1406 data too long, 1366 incorrect value, 1264 out of range, 1292 truncated value, 3819 check violation |
//! | logical | 1062 duplicate entry; 1146 no such table, 1064 syntax error, 1045 access denied; 1215, 1217, 1451, 1792; any other number |
//!
//! Applied (see [`Applied`](crate::Applied)): **no** after 1205, 1213,
//! 3572 (rolled back: MySQL manual, "Deadlocks in InnoDB" and
//! `innodb_rollback_on_timeout`), 1040, 1203, 1226, 2002, 2003 (no
//! connection or refused at once), 1290, 1836 (read-only), 1452, 1216, 1053
//! and 1077, and every logical or validation number; **maybe** after
//! 2006, 2013, 2055 (connection lost during the query: "the server may
//! have executed it"), 1927, 4031, 1158–1161 and 1317.
//!
//! As in the PostgreSQL table, a missing referenced row (1452, 1216) is
//! transient: the parent is often still being committed by another
//! transaction. A deadlock (1213) rolls back the whole transaction, so the
//! retried body should be the whole transaction; a lock wait timeout (1205)
//! rolls back only the statement unless `innodb_rollback_on_timeout` is on.

use crate::class::{Class, Classification, Code, CodeKind};

/// The class of a MySQL or MariaDB error number, carrying it as the code.
///
/// ```
/// use reattempt::{Class, mysql};
///
/// assert_eq!(mysql::error_number(1213).class(), Class::Transient);
/// assert_eq!(mysql::error_number(1062).class(), Class::Logical);
/// assert_eq!(mysql::error_number(1048).class(), Class::Validation);
/// assert_eq!(mysql::error_number(1205).code(), Some("1205"));
/// ```
pub fn error_number(number: u16) -> Classification {
    let class = Classification::new(number_class(number))
        .with_code(Code::number(u64::from(number)))
        .with_code_kind(CodeKind::Database);
    match number {
        // Rolled back or refused at once: deadlock (the whole transaction),
        // lock wait timeout and NOWAIT (the statement), too many
        // connections, no connection made (2002, 2003), read-only, a
        // missing referenced row, a server shutting down before it took
        // the statement.
        1205 | 1213 | 3572 | 1040 | 1203 | 1226 | 2002 | 2003 | 1290 | 1836 | 1452 | 1216
        | 1053 | 1077 => class.not_applied(),
        // A connection lost or killed during the statement (2006, 2013,
        // 2055, 1927, 4031, 1158-1161) or the query interrupted (1317):
        // it may have run, and a COMMIT may have committed.
        _ => class,
    }
}

fn number_class(number: u16) -> Class {
    match number {
        1205
        | 1213
        | 3572
        | 1040
        | 1203
        | 1226
        | 1053
        | 1077
        | 1158..=1161
        | 1317
        | 1927
        | 4031
        | 2002
        | 2003
        | 2006
        | 2013
        | 2055
        | 1290
        | 1836
        | 1452
        | 1216 => Class::Transient,
        1048 | 1364 | 1406 | 1366 | 1264 | 1292 | 3819 => Class::Validation,
        _ => Class::Logical,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applied_rows() {
        use crate::Applied::{Maybe, No};
        for (number, applied) in [
            (1213, No),
            (1205, No),
            (3572, No),
            (1040, No),
            (2002, No),
            (2003, No),
            (1290, No),
            (1452, No),
            (2006, Maybe),
            (2013, Maybe),
            (2055, Maybe),
            (1927, Maybe),
            (4031, Maybe),
            (1317, Maybe),
            (1062, No),
            (1048, No),
        ] {
            assert_eq!(error_number(number).applied(), applied, "{number}");
        }
    }

    #[test]
    fn every_row() {
        let transient = [
            1205, 1213, 3572, 1040, 1203, 1226, 1053, 1077, 1158, 1159, 1160, 1161, 1317, 1927,
            4031, 2002, 2003, 2006, 2013, 2055, 1290, 1836, 1452, 1216,
        ];
        for number in transient {
            assert_eq!(error_number(number).class(), Class::Transient, "{number}");
        }
        for number in [1048, 1364, 1406, 1366, 1264, 1292, 3819] {
            assert_eq!(error_number(number).class(), Class::Validation, "{number}");
        }
        for number in [
            1062,
            1146,
            1064,
            1045,
            1215,
            1217,
            1451,
            1792,
            0,
            9999,
            u16::MAX,
        ] {
            assert_eq!(error_number(number).class(), Class::Logical, "{number}");
        }
        assert_eq!(error_number(1062).code(), Some("1062"));
    }
}
