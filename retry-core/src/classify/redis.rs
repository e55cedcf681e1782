//! Redis error replies, by their prefix word.
//!
//! | class | prefixes |
//! |---|---|
//! | transient | LOADING, BUSY, TRYAGAIN, CLUSTERDOWN, MASTERDOWN, READONLY (a write reaching a replica after failover), OOM, NOREPLICAS, MISCONF; MOVED and ASK (a cluster redirection: the next attempt, through a cluster client that follows it, succeeds; see below) |
//! | validation | CROSSSLOT |
//! | logical | WRONGTYPE, NOAUTH, WRONGPASS, NOPERM, NOSCRIPT, EXECABORT, ERR and any other prefix |
//!
//! Every transient reply above is sent before the command runs, so a retry
//! cannot apply it twice: each reply is **not applied** (see
//! [`Applied`](crate::Applied)). An I/O error (a connection reset or closed
//! after the command was sent) **maybe** applied it: `INCR` or `LPUSH` may
//! have run. MOVED and ASK are retried at once by cluster
//! clients themselves; a plain connection that receives one will get it
//! again, and the attempts run out. Connection and protocol errors are not
//! replies: the client crate reports them as I/O errors, classified as
//! such (transient).

use crate::class::{Class, Classification, CodeKind};

/// The class of an error reply, by its first word, which it carries as the
/// code.
///
/// ```
/// use reattempt::{Class, redis};
///
/// assert_eq!(redis::reply("LOADING Redis is loading the dataset in memory").class(), Class::Transient);
/// assert_eq!(redis::reply("WRONGTYPE Operation against a key holding the wrong kind of value").class(), Class::Logical);
/// assert_eq!(redis::reply("BUSY Redis is busy running a script").code(), Some("BUSY"));
/// ```
pub fn reply(message: &str) -> Classification {
    let prefix = message
        .trim_start_matches('-')
        .split_ascii_whitespace()
        .next()
        .unwrap_or_default();
    prefix_class(prefix).with_code(prefix)
}

/// The class of an error prefix alone (`"BUSY"`).
pub fn prefix(prefix: &str) -> Classification {
    prefix_class(prefix).with_code(prefix)
}

/// Every reply's classification says its code is the database's.
const REPLY: CodeKind = CodeKind::Database;

fn prefix_class(prefix: &str) -> Classification {
    // Every reply is sent instead of running the command: whatever the
    // class, the command did not take effect.
    Classification::new(match prefix {
        "LOADING" | "BUSY" | "TRYAGAIN" | "CLUSTERDOWN" | "MASTERDOWN" | "READONLY" | "OOM"
        | "NOREPLICAS" | "MISCONF" | "MOVED" | "ASK" => Class::Transient,
        "CROSSSLOT" => Class::Validation,
        _ => Class::Logical,
    })
    .not_applied()
    .with_code_kind(REPLY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reply_is_sent_instead_of_running_the_command() {
        for message in [
            "LOADING x",
            "BUSY x",
            "TRYAGAIN",
            "MOVED 1 a:1",
            "OOM x",
            "WRONGTYPE x",
            "ERR x",
        ] {
            assert_eq!(reply(message).applied(), crate::Applied::No, "{message}");
        }
    }

    #[test]
    fn every_row() {
        let rows: &[(&str, Class)] = &[
            (
                "LOADING Redis is loading the dataset in memory",
                Class::Transient,
            ),
            ("BUSY Redis is busy running a script.", Class::Transient),
            (
                "TRYAGAIN Multiple keys request during rehashing of slot",
                Class::Transient,
            ),
            ("CLUSTERDOWN The cluster is down", Class::Transient),
            ("MASTERDOWN Link with MASTER is down", Class::Transient),
            (
                "READONLY You can't write against a read only replica.",
                Class::Transient,
            ),
            (
                "OOM command not allowed when used memory > 'maxmemory'.",
                Class::Transient,
            ),
            (
                "NOREPLICAS Not enough good replicas to write.",
                Class::Transient,
            ),
            (
                "MISCONF Redis is configured to save RDB snapshots",
                Class::Transient,
            ),
            ("MOVED 3999 127.0.0.1:6381", Class::Transient),
            ("ASK 3999 127.0.0.1:6381", Class::Transient),
            (
                "CROSSSLOT Keys in request don't hash to the same slot",
                Class::Validation,
            ),
            (
                "WRONGTYPE Operation against a key holding the wrong kind of value",
                Class::Logical,
            ),
            ("NOAUTH Authentication required.", Class::Logical),
            ("WRONGPASS invalid username-password pair", Class::Logical),
            ("NOPERM this user has no permissions", Class::Logical),
            (
                "NOSCRIPT No matching script. Please use EVAL.",
                Class::Logical,
            ),
            (
                "EXECABORT Transaction discarded because of previous errors.",
                Class::Logical,
            ),
            ("ERR unknown command 'FOO'", Class::Logical),
            ("-ERR wrong number of arguments", Class::Logical),
            ("", Class::Logical),
            ("loading lower case is not a prefix", Class::Logical),
        ];
        for &(message, class) in rows {
            assert_eq!(reply(message).class(), class, "{message}");
        }
        assert_eq!(reply("-LOADING x").code(), Some("LOADING"));
        assert_eq!(prefix("TRYAGAIN").class(), Class::Transient);
    }
}
