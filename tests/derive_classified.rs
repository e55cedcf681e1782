//! `#[derive(Classified)]`: an application's error type classifies itself,
//! each variant delegating to the error it wraps or taking a class.

mod common;

use std::error::Error;
use std::io::{self, ErrorKind};
use std::time::Duration;

use common::capture_logs as capture;
use reattempt::dead_letter::Memory;
use reattempt::{Applied, Class, Classification, Classified, retry};

#[derive(Debug, thiserror::Error, Classified)]
enum AppError {
    #[error(transparent)]
    Io(#[from] io::Error),
    #[error("request {url} failed")]
    #[classify(transparent)]
    Request { source: io::Error, url: String },
    #[error("bad input: {0}")]
    #[classify(validation, code = "parse")]
    Parse(String),
    #[error("the queue is full")]
    #[classify(rate_limited, not_applied)]
    QueueFull,
    #[error("status {0}")]
    #[classify(with = status)]
    Status(u16),
    #[error(transparent)]
    Boxed(Box<dyn Error + Send + Sync>),
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn status(code: &u16) -> Classification {
    reattempt::http::status(*code)
}

/// A second derived enum, wrapped by the first.
#[derive(Debug, thiserror::Error, Classified)]
enum StoreError {
    #[error("store io")]
    Io(#[source] io::Error),
    #[error("{key} is gone")]
    #[classify(logical, code = "gone")]
    Gone { key: String },
    #[error("locked")]
    #[classify(with = |held| *held > 0)]
    Locked(u32),
}

fn io(kind: ErrorKind) -> io::Error {
    kind.into()
}

/// What a classification says, its server delay and `Applied` included.
fn parts(c: Classification) -> (Class, Option<String>, Option<Duration>, Applied) {
    (
        c.class(),
        c.code().map(str::to_owned),
        c.retry_after(),
        c.applied(),
    )
}

#[test]
fn a_wrapped_error_is_classified_as_its_own_type_classifies_it() {
    for kind in [
        ErrorKind::ConnectionRefused,
        ErrorKind::ConnectionReset,
        ErrorKind::TimedOut,
        ErrorKind::NotFound,
        ErrorKind::InvalidInput,
    ] {
        let own = parts(io(kind).classification());
        assert_eq!(
            parts(AppError::Io(io(kind)).classification()),
            own,
            "{kind:?}"
        );
        let request = AppError::Request {
            source: io(kind),
            url: "http://127.0.0.1:1/".into(),
        };
        assert_eq!(parts(request.classification()), own, "{kind:?}");
        let boxed = AppError::Boxed(Box::new(io(kind)));
        assert_eq!(parts(boxed.classification()), own, "{kind:?}");
        let nested = AppError::Store(StoreError::Io(io(kind)));
        assert_eq!(parts(nested.classification()), own, "{kind:?}");
    }
    // `Applied` carries through: a refused connection did not take effect,
    // a reset one may have.
    let refused = AppError::Io(io(ErrorKind::ConnectionRefused));
    assert_eq!(refused.classification().applied(), Applied::No);
    let reset = AppError::Io(io(ErrorKind::ConnectionReset));
    assert_eq!(reset.classification().applied(), Applied::Maybe);
}

#[test]
fn a_variant_takes_the_class_and_code_it_names() {
    assert_eq!(
        parts(AppError::Parse("x".into()).classification()),
        (Class::Validation, Some("parse".into()), None, Applied::No)
    );
    let full = AppError::QueueFull.classification();
    assert_eq!(
        (full.class(), full.applied()),
        (Class::RateLimited, Applied::No)
    );
    let gone = AppError::Store(StoreError::Gone { key: "k".into() }).classification();
    assert_eq!((gone.class(), gone.code()), (Class::Logical, Some("gone")));
}

#[test]
fn a_function_classifies_the_field_it_is_given() {
    for code in [404, 429, 503, 400] {
        assert_eq!(
            parts(AppError::Status(code).classification()),
            parts(reattempt::http::status(code))
        );
    }
    // A closure returning `bool`: true is transient.
    let locked = AppError::Store(StoreError::Locked(1)).classification();
    assert_eq!(locked.class(), Class::Transient);
}

/// A generic enum: the wrapped type needs a classification only where the
/// enum is classified.
#[derive(Debug, Classified)]
enum Wrapped<'a, E: std::fmt::Debug> {
    Inner(E),
    Borrowed(&'a io::Error),
    #[classify(logical)]
    Other,
}

#[test]
fn generic_and_borrowing_enums_delegate_through_their_parameters() {
    let inner: Wrapped<'_, io::Error> = Wrapped::Inner(io(ErrorKind::TimedOut));
    assert_eq!(inner.classification().class(), Class::Transient);
    let error = io(ErrorKind::PermissionDenied);
    let borrowed: Wrapped<'_, io::Error> = Wrapped::Borrowed(&error);
    assert_eq!(borrowed.classification().class(), Class::Logical);
    let nested: Wrapped<'_, AppError> = Wrapped::Inner(AppError::QueueFull);
    assert_eq!(nested.classification().class(), Class::RateLimited);
    assert_eq!(
        Wrapped::<'_, io::Error>::Other.classification().class(),
        Class::Logical
    );
}

/// Structs: a newtype delegates; a struct with a class has it.
#[derive(Debug, Classified)]
struct Newtype(io::Error);

#[derive(Debug, Classified)]
#[classify(transparent)]
struct WithContext {
    #[classify(source)]
    cause: io::Error,
    attempt_of: &'static str,
}

#[derive(Debug, Classified)]
#[classify(validation, code = "empty")]
struct Empty;

/// An enum with no variant has no value to classify, and derives all the
/// same (an error type that cannot happen).
#[derive(Debug, Classified)]
enum Never {}

fn never_happens(never: &Never) -> Classification {
    never.classification()
}

/// The facade under another name.
mod renamed {
    use reattempt as retrying;

    #[derive(Debug, retrying::Classified)]
    #[classify(crate = retrying)]
    pub enum Error {
        #[classify(transient)]
        Busy,
    }
}

#[test]
fn structs_and_a_renamed_crate_are_classified() {
    assert_eq!(
        Newtype(io(ErrorKind::ConnectionReset))
            .classification()
            .class(),
        Class::Transient
    );
    let with_context = WithContext {
        cause: io(ErrorKind::NotFound),
        attempt_of: "load",
    };
    assert_eq!(with_context.classification().class(), Class::Logical);
    let _ = with_context.attempt_of;
    let empty = Empty.classification();
    assert_eq!(
        (empty.class(), empty.code()),
        (Class::Validation, Some("empty"))
    );
    assert_eq!(
        renamed::Error::Busy.classification().class(),
        Class::Transient
    );
    let _: fn(&Never) -> Classification = never_happens;
}

static REVIEW: Memory = Memory::new();

#[retry(max = 3, backoff = none, dead_letter = REVIEW)]
fn load(errors: &mut Vec<AppError>) -> Result<(), AppError> {
    Err(errors.remove(0))
}

/// `#[retry]` needs no `on`: a transient variant is retried, a validation
/// one ends the call, and its class and code are in the logs and the
/// dead-letter record.
#[test]
fn retry_uses_the_derived_classification_in_its_logs_and_records() {
    let mut errors = vec![
        AppError::Io(io(ErrorKind::ConnectionRefused)),
        AppError::Parse("x".into()),
        AppError::QueueFull,
    ];
    let (events, _) = capture(|| {
        let error = load(&mut errors).unwrap_err();
        assert!(matches!(error, AppError::Parse(_)), "{error:?}");
    });
    assert_eq!(errors.len(), 1, "two attempts, the second not retried");
    let fields: Vec<_> = events
        .iter()
        .map(|event| {
            let fields = &event["fields"];
            (fields["class"].clone(), fields["code"].clone())
        })
        .collect();
    assert_eq!(
        fields,
        [
            (
                serde_json::json!("transient"),
                serde_json::json!("ConnectionRefused")
            ),
            (serde_json::json!("validation"), serde_json::json!("parse")),
        ],
        "{events:#?}"
    );
    let records = REVIEW.take();
    assert_eq!(records.len(), 1);
    assert_eq!(
        (records[0].class, records[0].code.as_deref()),
        (Class::Validation, Some("parse"))
    );
    assert_eq!(records[0].attempts, 2);
}

#[derive(Debug, Classified)]
enum TransferError {
    Io(io::Error),
    #[classify(transient, not_applied)]
    Busy,
}

#[retry(max = 4, backoff = none, idempotent = false)]
fn transfer(errors: &mut Vec<TransferError>) -> Result<(), TransferError> {
    Err(errors.remove(0))
}

/// `not_applied` lets `idempotent = false` retry a variant; a wrapped
/// error that may have taken effect ends the call.
#[test]
fn what_must_not_run_twice_follows_the_derived_applied() {
    let mut errors = vec![
        TransferError::Busy,
        TransferError::Io(io(ErrorKind::ConnectionReset)),
        TransferError::Busy,
    ];
    let error = transfer(&mut errors).unwrap_err();
    assert!(matches!(error, TransferError::Io(_)), "{error:?}");
    assert_eq!(
        errors.len(),
        1,
        "the reset ended the call at the second attempt"
    );
}
