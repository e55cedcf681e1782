//! What a retried function returns, seen as success or failure.

/// A return type `#[retry]` can look into: `Result<T, E>`.
#[diagnostic::on_unimplemented(
    message = "`#[retry]` needs a function that returns `Result<T, E>`, not `{Self}`",
    label = "this return type has no error to classify",
    note = "the body is retried when it returns `Err(e)` and `e` is transient"
)]
pub trait Outcome {
    /// The error type.
    type Error;

    /// The error, when this outcome is a failure.
    fn error(&self) -> Option<&Self::Error>;
}

impl<T, E> Outcome for Result<T, E> {
    type Error = E;

    #[inline]
    fn error(&self) -> Option<&E> {
        self.as_ref().err()
    }
}
