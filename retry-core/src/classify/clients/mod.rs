//! The default classification of client crates' errors, each behind the
//! crate's feature.

#[cfg(feature = "redis")]
mod redis;
#[cfg(feature = "reqwest")]
pub(crate) mod reqwest;
#[cfg(any(feature = "sqlx-postgres", feature = "sqlx-mysql"))]
mod sqlx;
#[cfg(feature = "tokio-postgres")]
mod tokio_postgres;
