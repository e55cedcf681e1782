//! `sqlx::Error`.
//!
//! | error | class |
//! |---|---|
//! | `Database` from PostgreSQL | its SQLSTATE, by the PostgreSQL table |
//! | `Database` from MySQL or MariaDB | its error number, by the MySQL table |
//! | `Io` | the `std::io::Error` table |
//! | `Tls`, `PoolTimedOut` | transient, not applied (no connection was had; a pool that times out often hides a database that is down) |
//! | `WorkerCrashed` | transient, maybe applied |
//! | `InvalidArgument`, `Encode` | validation |
//! | `RowNotFound`, `PoolClosed`, `Configuration`, `Protocol`, decoding and column errors, and the rest | logical |

use ::sqlx::Error;

use crate::class::Classification;
use crate::classify::Classified;

// Kept out of "other types implement" lists, which would change with features.
#[diagnostic::do_not_recommend]
impl Classified for Error {
    fn classification(&self) -> Classification {
        match self {
            Error::Database(database) => database_error(database.as_ref()),
            Error::Io(io) => io.classification(),
            // No connection was had: nothing was sent.
            Error::Tls(_) => Classification::transient().with_code("tls").not_applied(),
            Error::PoolTimedOut => Classification::transient()
                .with_code("pool_timed_out")
                .not_applied(),
            Error::WorkerCrashed => Classification::transient().with_code("worker_crashed"),
            Error::InvalidArgument(_) | Error::Encode(_) => Classification::validation(),
            Error::RowNotFound => Classification::logical().with_code("row_not_found"),
            Error::PoolClosed => Classification::logical().with_code("pool_closed"),
            _ => Classification::logical(),
        }
    }
}

fn database_error(error: &(dyn ::sqlx::error::DatabaseError + 'static)) -> Classification {
    #[cfg(feature = "sqlx-mysql")]
    if let Some(mysql) = error.try_downcast_ref::<::sqlx::mysql::MySqlDatabaseError>() {
        return crate::classify::mysql::error_number(mysql.number());
    }
    #[cfg(feature = "sqlx-postgres")]
    if let Some(postgres) = error.try_downcast_ref::<::sqlx::postgres::PgDatabaseError>() {
        return crate::classify::postgres::sqlstate(postgres.code());
    }
    match error.code() {
        Some(code) => Classification::logical().with_code(code.as_ref()),
        None => Classification::logical(),
    }
}
