//! Classifiers: what decides, for an error, whether it is retried.
//!
//! Two traits meet here. [`Classify<E>`] is a classifier of errors of type
//! `E`, what `#[retry(on = ...)]` takes; closures `Fn(&E) -> bool` and
//! `Fn(&E) -> Class` (or `-> Classification`) are classifiers. [`Classified`]
//! is an error type's own classification, used when `on` is not given; the
//! core implements it for [`std::io::Error`] and, behind features, for
//! client crates' errors.

mod chain;
pub(crate) mod clients;
pub mod grpc;
pub mod http;
mod io;
pub mod mysql;
pub mod postgres;
pub mod redis;

pub use chain::classify_chain;

use crate::class::{Class, Classification};

/// A classifier of errors of type `E`.
///
/// Closures and functions `Fn(&E) -> bool` (true = transient, false =
/// logical), `Fn(&E) -> Class` and `Fn(&E) -> Classification` implement it,
/// so most users never name this trait:
///
/// ```
/// use reattempt::{Class, Classify};
/// use std::io;
///
/// let on = |e: &io::Error| e.kind() == io::ErrorKind::TimedOut;
/// let timed_out = io::Error::from(io::ErrorKind::TimedOut);
/// assert_eq!(on.classify(&timed_out).class(), Class::Transient);
/// ```
///
/// A classifier with state implements it directly:
///
/// ```
/// use reattempt::{Classification, Classify};
///
/// struct Codes(&'static [u16]);
///
/// impl Classify<u16> for Codes {
///     fn classify(&self, code: &u16) -> Classification {
///         if self.0.contains(code) {
///             Classification::transient().with_code(*code)
///         } else {
///             Classification::logical().with_code(*code)
///         }
///     }
/// }
///
/// assert!(Codes(&[503]).classify(&503).class().is_retryable());
/// ```
pub trait Classify<E: ?Sized> {
    /// The classification of `error`.
    fn classify(&self, error: &E) -> Classification;
}

impl<E: ?Sized, F, R> Classify<E> for F
where
    F: Fn(&E) -> R,
    R: IntoClassification,
{
    fn classify(&self, error: &E) -> Classification {
        self(error).into_classification()
    }
}

/// What a classifier closure may return: `bool` (true = transient, false =
/// logical), [`Class`] or [`Classification`].
///
/// ```
/// use reattempt::{Class, retry};
/// use std::io::{self, ErrorKind};
///
/// // `bool`: true is transient.
/// #[retry(max = 2, backoff = none, on = |e: &io::Error| e.kind() == ErrorKind::Interrupted)]
/// fn read_once() -> io::Result<()> {
///     Ok(())
/// }
///
/// // `Class`, to tell rate limits apart.
/// #[retry(max = 2, backoff = none, on = |e: &io::Error| match e.kind() {
///     ErrorKind::WouldBlock => Class::RateLimited,
///     _ => Class::Logical,
/// })]
/// fn read_twice() -> io::Result<()> {
///     Ok(())
/// }
/// # read_once().unwrap();
/// # read_twice().unwrap();
/// ```
#[diagnostic::on_unimplemented(
    message = "a classifier returns `bool`, `reattempt::Class` or `reattempt::Classification`, not `{Self}`",
    label = "this classifier returns `{Self}`",
    note = "`true` means transient (retried) and `false` logical; a `Class` or `Classification` says more"
)]
pub trait IntoClassification {
    /// The classification this value stands for.
    fn into_classification(self) -> Classification;
}

impl IntoClassification for bool {
    fn into_classification(self) -> Classification {
        Classification::new(if self {
            Class::Transient
        } else {
            Class::Logical
        })
    }
}

impl IntoClassification for Class {
    fn into_classification(self) -> Classification {
        Classification::new(self)
    }
}

impl IntoClassification for Classification {
    fn into_classification(self) -> Classification {
        self
    }
}

/// An error type's own classification, used by `#[retry]` when no
/// `on = ...` is given (and by `on = transient`).
///
/// Implemented for [`std::io::Error`] (by [`std::io::ErrorKind`]) and,
/// with the `http` feature, for `http::StatusCode`. Derive it for your own
/// error type with `#[derive(reattempt::Classified)]`, which delegates each
/// variant to the error it wraps or gives it the class it names, or
/// implement it by hand to make `#[retry]` work on it without `on`:
///
/// ```
/// use reattempt::{Classification, Classified};
///
/// #[derive(Debug)]
/// enum FetchError {
///     Status(u16),
///     Parse(String),
/// }
///
/// impl Classified for FetchError {
///     fn classification(&self) -> Classification {
///         match self {
///             FetchError::Status(code) => reattempt::http::status(*code),
///             FetchError::Parse(_) => Classification::validation(),
///         }
///     }
/// }
///
/// assert!(FetchError::Status(503).classification().class().is_retryable());
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no default retry classification",
    label = "`#[retry]` cannot tell which `{Self}` errors are worth retrying",
    note = "pass a classifier, for example `#[retry(on = |e: &{Self}| ...)]` returning `bool` or `reattempt::Class`, or `#[retry(on = matches(Pattern))]`",
    note = "an error of a client crate is classified by a feature of `reattempt`: `reqwest`, `sqlx-postgres` or `sqlx-mysql`, `redis`, `tokio-postgres`, `anyhow`, `http`; turn it on, for example `reattempt = {{ version = \"..\", features = [\"reqwest\"] }}`",
    note = "a type of your own crate can derive `reattempt::Classified` or implement it; another crate's error can be wrapped in a variant of your own error type with a class, `#[classify(transient)]`, or a function, `#[classify(with = path::to::fn)]`"
)]
pub trait Classified {
    /// The classification of this error.
    fn classification(&self) -> Classification;
}

/// A successful value that can still be a failure, such as an HTTP response
/// with an error status: `#[retry]` judges an `Ok` value of such a type as
/// it judges errors, unless `if_result` is given.
///
/// Implemented, with their features, for `reqwest::Response` and
/// `http::Response<B>`: a status of 400 or more is a failure, classified by
/// the HTTP table with its `Retry-After` header read.
///
/// ```
/// use reattempt::{Classification, ClassifiedValue};
///
/// struct Reply {
///     status: u16,
/// }
///
/// impl ClassifiedValue for Reply {
///     fn failure(&self) -> Option<Classification> {
///         (self.status >= 400).then(|| reattempt::http::status(self.status))
///     }
/// }
/// ```
pub trait ClassifiedValue {
    /// The classification of this value when it is a failure, `None` when it
    /// is a success.
    fn failure(&self) -> Option<Classification>;
}

/// The classifier that asks the error type itself ([`Classified`]): what
/// `#[retry]` uses without `on`, and what `on = transient` names.
///
/// ```
/// use reattempt::{Class, Classify, ByType};
/// use std::io;
///
/// let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
/// assert_eq!(ByType.classify(&refused).class(), Class::Transient);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ByType;

impl<E: Classified + ?Sized> Classify<E> for ByType {
    fn classify(&self, error: &E) -> Classification {
        error.classification()
    }
}

#[diagnostic::do_not_recommend]
impl<E: Classified + ?Sized> Classified for &E {
    fn classification(&self) -> Classification {
        (**self).classification()
    }
}

#[diagnostic::do_not_recommend]
impl<E: Classified + ?Sized> Classified for Box<E> {
    fn classification(&self) -> Classification {
        (**self).classification()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bool_closures_map_true_to_transient_and_false_to_logical() {
        let on = |n: &u32| *n > 1;
        assert_eq!(on.classify(&2).class(), Class::Transient);
        assert_eq!(on.classify(&1).class(), Class::Logical);
    }

    #[test]
    fn class_and_classification_closures_pass_through() {
        let by_class = |_: &()| Class::Validation;
        assert_eq!(by_class.classify(&()).class(), Class::Validation);
        let full = |_: &()| Classification::rate_limited().with_code("429");
        assert_eq!(full.classify(&()).code(), Some("429"));
    }

    #[test]
    fn functions_are_classifiers() {
        fn never(_: &str) -> bool {
            false
        }
        assert_eq!(never.classify("x").class(), Class::Logical);
    }
}
