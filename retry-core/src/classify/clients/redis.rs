//! `redis::RedisError`.
//!
//! | error | class |
//! |---|---|
//! | I/O: refused | transient, not applied |
//! | I/O: dropped, timed out | transient, maybe applied (the command may have run) |
//! | a server reply (`LOADING`, `WRONGTYPE`, ...) | its prefix, by the Redis table |
//! | `Parse` (a protocol error; the server closes the connection) | transient |
//! | no cluster connection, or no master or replica found by the sentinels | transient |
//! | `AuthenticationFailed` | logical, though redis-rs would reconnect: credentials do not fix themselves |
//! | the rest (`InvalidClientConfig`, `UnexpectedReturnType`, ...) | logical |

use ::redis::{ErrorKind, RedisError};

use crate::class::Classification;
use crate::classify::{Classified, redis};

// Kept out of "other types implement" lists, which would change with features.
#[diagnostic::do_not_recommend]
impl Classified for RedisError {
    fn classification(&self) -> Classification {
        if self.is_timeout() {
            return Classification::transient().with_code("timeout");
        }
        if self.is_connection_refusal() {
            return Classification::transient().with_code("io").not_applied();
        }
        if self.is_connection_dropped() || self.is_io_error() {
            return Classification::transient().with_code("io");
        }
        if let Some(code) = self.code() {
            return redis::prefix(code);
        }
        match self.kind() {
            ErrorKind::Parse => Classification::transient().with_code("parse"),
            ErrorKind::ClusterConnectionNotFound
            | ErrorKind::MasterNameNotFoundBySentinel
            | ErrorKind::NoValidReplicasFoundBySentinel => Classification::transient(),
            ErrorKind::AuthenticationFailed => Classification::logical().with_code("auth"),
            _ => Classification::logical(),
        }
    }
}
