//! PostgreSQL SQLSTATE codes (Appendix A of the PostgreSQL manual).
//!
//! | class | codes |
//! |---|---|
//! | transient | class 08 (connection exception) but 08007 and 08P01; class 40 (rollback: 40001 serialization failure, 40P01 deadlock) but 40002 and 40003; class 53 (insufficient resources); 55P03 lock not available; 57014 query canceled; 57P01 admin shutdown (`pg_terminate_backend`), 57P02, 57P03 cannot connect now, 57P05; 58000, 58030; 25006 read-only transaction (a write reaching a former primary after failover); 25P03; 23503 foreign-key violation |
//! | validation | class 22 (data exception); 23502 not-null and 23514 check violations and the rest of class 23 below; 40002 |
//! | logical | 23505 unique violation, 23P01 exclusion violation; class 42 (syntax, undefined objects, privileges); class 28 (authorization); 08007, 08P01, 40003, 57P04, 58P01, 58P02, 25P02; class XX (internal); any other code |
//!
//! Applied (see [`Applied`](crate::Applied)): **no** after 40000, 40001,
//! 40P01 (the transaction was rolled back: PostgreSQL manual, "Transaction
//! Isolation" §13.2 and "Serialization Failure Handling" §13.6), 08001,
//! 08004, 57P03 (no connection was made), 55P03, 25006, 23503 and 53000,
//! 53200, 53300, 53400 (refused at once), and every logical or validation
//! code; **maybe** after the rest of class 08 (a connection lost during
//! COMMIT leaves the outcome unknown), 57P01, 57P02, 57P05 (the session
//! ended under the statement: `pg_terminate_backend`), 57014, 53100, 58000,
//! 58030 and 25P03.
//!
//! A foreign-key violation (23503) is transient here, not a validation
//! error: the parent row is often being written by another transaction
//! that has not committed yet, and a short backoff lets it appear. When the
//! parent never comes, the attempts run out and the caller gets the error.
//! A unique violation (23505) is not retried: on a retried INSERT it usually
//! means the first attempt succeeded.

use crate::class::{Class, Classification, CodeKind};

/// The class of a five-character SQLSTATE, carrying it as the code.
///
/// ```
/// use reattempt::{Class, postgres};
///
/// assert_eq!(postgres::sqlstate("40001").class(), Class::Transient);
/// assert_eq!(postgres::sqlstate("23505").class(), Class::Logical);
/// assert_eq!(postgres::sqlstate("22P02").class(), Class::Validation);
/// assert_eq!(postgres::sqlstate("40P01").code(), Some("40P01"));
/// ```
pub fn sqlstate(code: &str) -> Classification {
    let class = Classification::new(sqlstate_class(code))
        .with_code(code)
        .with_code_kind(CodeKind::Database);
    if not_applied(code) {
        class.not_applied()
    } else {
        class
    }
}

/// Transient SQLSTATEs after which the statement or transaction is known
/// not to have taken effect.
fn not_applied(code: &str) -> bool {
    match code {
        // Rolled back: the whole transaction (serialization failure,
        // deadlock, generic rollback), or refused before it ran.
        "40000" | "40001" | "40P01" => true,
        // Could not connect, or was refused a connection: nothing ran.
        "08001" | "08004" | "57P03" => true,
        // Refused at once: a lock not available (NOWAIT), a write in a
        // read-only transaction, a missing parent row, no resources to
        // start (too many connections, out of memory, a configured limit).
        "55P03" | "25006" | "23503" | "53000" | "53200" | "53300" | "53400" => true,
        // The rest of class 08 (a connection lost, perhaps during COMMIT),
        // 57P01/57P02/57P05 (the session ended under the statement), 57014
        // (cancelled: perhaps after COMMIT was sent), 53100 (disk full while
        // writing), 58000, 58030 and 25P03 may come after it took effect.
        _ => false,
    }
}

fn sqlstate_class(code: &str) -> Class {
    use Class::{Logical, Transient, Validation};
    match code {
        "08007" | "08P01" => Logical,
        "40002" => Validation,
        "40003" => Logical,
        "55P03" | "57014" | "57P01" | "57P02" | "57P03" | "57P05" => Transient,
        "57P04" => Logical,
        "58000" | "58030" => Transient,
        "58P01" | "58P02" => Logical,
        "25006" | "25P03" => Transient,
        "23503" => Transient,
        "23505" | "23P01" => Logical,
        _ => match code.get(..2) {
            Some("08" | "40" | "53") => Transient,
            Some("22" | "23") => Validation,
            _ => Logical,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applied_rows() {
        use crate::Applied::{Maybe, No};
        for (code, applied) in [
            ("40001", No),
            ("40P01", No),
            ("40000", No),
            ("08001", No),
            ("08004", No),
            ("57P03", No),
            ("55P03", No),
            ("25006", No),
            ("23503", No),
            ("53300", No),
            ("08006", Maybe),
            ("08003", Maybe),
            ("08000", Maybe),
            ("57P01", Maybe),
            ("57P02", Maybe),
            ("57014", Maybe),
            ("53100", Maybe),
            ("58030", Maybe),
            ("23505", No),
            ("22P02", No),
            ("42P01", No),
        ] {
            assert_eq!(sqlstate(code).applied(), applied, "{code}");
        }
    }

    #[test]
    fn every_row() {
        let rows: &[(&str, Class)] = &[
            ("08000", Class::Transient),
            ("08001", Class::Transient),
            ("08003", Class::Transient),
            ("08004", Class::Transient),
            ("08006", Class::Transient),
            ("08007", Class::Logical),
            ("08P01", Class::Logical),
            ("40000", Class::Transient),
            ("40001", Class::Transient),
            ("40P01", Class::Transient),
            ("40002", Class::Validation),
            ("40003", Class::Logical),
            ("53000", Class::Transient),
            ("53100", Class::Transient),
            ("53200", Class::Transient),
            ("53300", Class::Transient),
            ("53400", Class::Transient),
            ("55P03", Class::Transient),
            ("55000", Class::Logical),
            ("57014", Class::Transient),
            ("57P01", Class::Transient),
            ("57P02", Class::Transient),
            ("57P03", Class::Transient),
            ("57P04", Class::Logical),
            ("57P05", Class::Transient),
            ("58000", Class::Transient),
            ("58030", Class::Transient),
            ("58P01", Class::Logical),
            ("58P02", Class::Logical),
            ("23503", Class::Transient),
            ("23505", Class::Logical),
            ("23P01", Class::Logical),
            ("23502", Class::Validation),
            ("23514", Class::Validation),
            ("23000", Class::Validation),
            ("22001", Class::Validation),
            ("22003", Class::Validation),
            ("22012", Class::Validation),
            ("22P02", Class::Validation),
            ("42601", Class::Logical),
            ("42501", Class::Logical),
            ("42P01", Class::Logical),
            ("42703", Class::Logical),
            ("28000", Class::Logical),
            ("28P01", Class::Logical),
            ("25006", Class::Transient),
            ("25P02", Class::Logical),
            ("25P03", Class::Transient),
            ("XX000", Class::Logical),
            ("XX001", Class::Logical),
            ("", Class::Logical),
            ("9", Class::Logical),
            ("é1234", Class::Logical),
        ];
        for &(code, class) in rows {
            assert_eq!(sqlstate(code).class(), class, "{code}");
        }
        assert_eq!(sqlstate("40P01").code(), Some("40P01"));
    }
}
