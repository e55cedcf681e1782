//! `tokio_postgres::Error`.
//!
//! | error | class |
//! |---|---|
//! | a server error | its SQLSTATE, by the PostgreSQL table |
//! | `is_closed()` (the connection is gone) | transient |
//! | an I/O error as its source | the `std::io::Error` table |
//! | the rest (configuration, conversion, ...) | logical |

use std::error::Error as _;

use ::tokio_postgres::Error;

use crate::class::Classification;
use crate::classify::{Classified, postgres};

// Kept out of "other types implement" lists, which would change with features.
#[diagnostic::do_not_recommend]
impl Classified for Error {
    fn classification(&self) -> Classification {
        if let Some(state) = self.code() {
            return postgres::sqlstate(state.code());
        }
        if self.is_closed() {
            return Classification::transient().with_code("closed");
        }
        if let Some(io) = self
            .source()
            .and_then(|e| e.downcast_ref::<std::io::Error>())
        {
            return io.classification();
        }
        Classification::logical()
    }
}
