//! Boxed errors (`Box<dyn Error + Send + Sync>`, `anyhow::Error`) are
//! classified by the first error of a known type in their `source()` chain:
//! `std::io::Error`, `reattempt::AttemptTimeout`, and with their features the
//! errors of reqwest, sqlx, redis and tokio-postgres. A chain with none of
//! them is logical: an application that boxes its own errors says what is
//! transient with `on = ...`.

use std::error::Error;

use crate::class::Classification;
use crate::classify::Classified;
use crate::timeout::AttemptTimeout;

/// The classification of the first error of a known type in the chain that
/// starts at `error`, or logical when there is none.
///
/// ```
/// use reattempt::{Class, classify_chain};
/// use std::io;
///
/// #[derive(Debug)]
/// struct Wrapper(io::Error);
///
/// impl std::fmt::Display for Wrapper {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         f.write_str("while loading")
///     }
/// }
///
/// impl std::error::Error for Wrapper {
///     fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
///         Some(&self.0)
///     }
/// }
///
/// let refused = Wrapper(io::ErrorKind::ConnectionRefused.into());
/// assert_eq!(classify_chain(&refused).class(), Class::Transient);
/// ```
pub fn classify_chain(error: &(dyn Error + 'static)) -> Classification {
    let mut next = Some(error);
    while let Some(error) = next {
        if let Some(class) = known(error) {
            return class;
        }
        next = error.source();
    }
    Classification::logical()
}

fn known(error: &(dyn Error + 'static)) -> Option<Classification> {
    if let Some(io) = error.downcast_ref::<std::io::Error>() {
        // `io::Error::source` skips the error it wraps; look at it first.
        if let Some(inner) = io.get_ref()
            && io.kind() == std::io::ErrorKind::Other
            && let Some(class) = known(inner)
        {
            return Some(class);
        }
        return Some(io.classification());
    }
    if error.is::<AttemptTimeout>() {
        return Some(Classification::transient().with_code("attempt_timeout"));
    }
    #[cfg(feature = "reqwest")]
    if let Some(e) = error.downcast_ref::<::reqwest::Error>() {
        return Some(e.classification());
    }
    #[cfg(any(feature = "sqlx-postgres", feature = "sqlx-mysql"))]
    if let Some(e) = error.downcast_ref::<::sqlx::Error>() {
        return Some(e.classification());
    }
    #[cfg(feature = "redis")]
    if let Some(e) = error.downcast_ref::<::redis::RedisError>() {
        return Some(e.classification());
    }
    #[cfg(feature = "tokio-postgres")]
    if let Some(e) = error.downcast_ref::<::tokio_postgres::Error>() {
        return Some(e.classification());
    }
    None
}

// Kept out of "other types implement" lists, which would change with features.
#[diagnostic::do_not_recommend]
impl Classified for dyn Error + 'static {
    fn classification(&self) -> Classification {
        classify_chain(self)
    }
}

// Kept out of "other types implement" lists, which would change with features.
#[diagnostic::do_not_recommend]
impl Classified for dyn Error + Send + 'static {
    fn classification(&self) -> Classification {
        classify_chain(self)
    }
}

// Kept out of "other types implement" lists, which would change with features.
#[diagnostic::do_not_recommend]
impl Classified for dyn Error + Send + Sync + 'static {
    fn classification(&self) -> Classification {
        classify_chain(self)
    }
}

#[cfg(feature = "anyhow")]
// Kept out of "other types implement" lists, which would change with features.
#[diagnostic::do_not_recommend]
impl Classified for ::anyhow::Error {
    fn classification(&self) -> Classification {
        let error: &(dyn Error + Send + Sync + 'static) = self.as_ref();
        classify_chain(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::class::Class;
    use std::fmt;
    use std::io;

    #[derive(Debug)]
    struct Context(&'static str, Option<Box<dyn Error + Send + Sync>>);

    impl fmt::Display for Context {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl Error for Context {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            self.1.as_deref().map(|e| e as &(dyn Error + 'static))
        }
    }

    fn boxed(e: impl Error + Send + Sync + 'static) -> Box<dyn Error + Send + Sync> {
        Box::new(e)
    }

    #[test]
    fn the_first_known_error_in_the_chain_decides() {
        let chain = boxed(Context(
            "loading",
            Some(boxed(Context(
                "fetching",
                Some(boxed(io::Error::from(io::ErrorKind::TimedOut))),
            ))),
        ));
        assert_eq!(chain.classification().class(), Class::Transient);
        let denied = boxed(Context(
            "saving",
            Some(boxed(io::Error::from(io::ErrorKind::PermissionDenied))),
        ));
        assert_eq!(denied.classification().class(), Class::Logical);
    }

    #[test]
    fn a_chain_of_unknown_errors_is_logical() {
        let chain = boxed(Context("outer", Some(boxed(Context("inner", None)))));
        assert_eq!(chain.classification().class(), Class::Logical);
        let text: Box<dyn Error + Send + Sync> = "plain text".into();
        assert_eq!(text.classification().class(), Class::Logical);
    }

    #[test]
    fn an_io_error_wrapping_a_known_error_takes_the_inner_class() {
        let timeout = io::Error::other(AttemptTimeout::new(std::time::Duration::from_secs(1)));
        assert_eq!(classify_chain(&timeout).class(), Class::Transient);
        assert_eq!(classify_chain(&timeout).code(), Some("attempt_timeout"));
    }

    #[cfg(feature = "anyhow")]
    #[test]
    fn anyhow_errors_walk_their_chain() {
        let error =
            anyhow::Error::new(io::Error::from(io::ErrorKind::ConnectionReset)).context("syncing");
        assert_eq!(error.classification().class(), Class::Transient);
        assert_eq!(
            anyhow::anyhow!("no idea").classification().class(),
            Class::Logical
        );
    }
}
