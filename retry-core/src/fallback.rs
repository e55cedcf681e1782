//! What answers a call that gave up for good (`fallback = ..`): a
//! function of the last error, and of the function's arguments by
//! reference when its signature asks for them. Which of the two a
//! fallback is, the compiler picks from its signature ([`Fallback`]'s
//! marker), so that one that fits neither is one error at the argument.

use core::future::{Future, Pending};
use core::marker::PhantomData;

use tracing::Span;

use crate::call_id::CallIdCell;
use crate::fields::Fields;
use crate::log;
use crate::site::Site;
use crate::spans::Spans;

/// A fallback that takes the last error alone.
#[derive(Debug)]
pub enum ErrorOnly {}

/// A fallback that also takes the function's arguments by reference.
#[derive(Debug)]
pub enum WithArguments {}

/// An async function's fallback that returns a future of `Fut`, where
/// `M` says what it takes: the future's type is part of the marker, as
/// nothing else would name it.
#[derive(Debug)]
pub struct Awaited<M, Fut>(PhantomData<(M, Fut)>);

/// A function that answers a call of a sync function that gave up with
/// error `E`, given the function's arguments `A` (a tuple of references),
/// with the function's outcome `R`.
#[diagnostic::on_unimplemented(
    message = "`fallback = ..` does not fit this function",
    label = "expected a function `fn({E}) -> {R}`, which may take the function's arguments after the error",
    note = "a fallback takes the last error, then, if it asks for them, the function's arguments by reference and in order: here `{A}`",
    note = "on an async function, an `async fn` is written `fallback = async FN`"
)]
pub trait Fallback<E, A, R, M> {
    /// The answer to a call that gave up with `error`.
    fn answer(self, error: E, arguments: A) -> R;
}

/// What an async function's fallback answered: the outcome now (a plain
/// function), or a future of it (an `async fn`). A plain function's
/// `Later` is a future of no size, so that the function's own future
/// keeps nothing more for an answer it never awaits.
#[derive(Debug)]
pub enum Answered<R, F> {
    /// The outcome.
    Now(R),
    /// A future of the outcome, to await.
    Later(F),
}

/// [`Fallback`] for an async function's `fallback = async FN`, which may
/// be an `async fn`.
#[diagnostic::on_unimplemented(
    message = "`fallback = ..` does not fit this function",
    label = "expected a function `fn({E}) -> {R}`, or an `async fn` of the error that returns `{R}`; either may take the function's arguments after the error",
    note = "a fallback takes the last error, then, if it asks for them, the function's arguments by reference and in order: here `{A}`"
)]
pub trait AsyncFallback<E, A, R, M> {
    /// The future an `async fn` answers with.
    type Later: Future<Output = R>;
    /// The answer to a call that gave up with `error`.
    fn answer(self, error: E, arguments: A) -> Answered<R, Self::Later>;
}

impl<F: FnOnce(E) -> R, E, A, R> Fallback<E, A, R, ErrorOnly> for F {
    #[inline]
    fn answer(self, error: E, _: A) -> R {
        self(error)
    }
}

impl<F: FnOnce(E) -> R, E, A, R> AsyncFallback<E, A, R, ErrorOnly> for F {
    type Later = Pending<R>;

    #[inline]
    fn answer(self, error: E, _: A) -> Answered<R, Pending<R>> {
        Answered::Now(self(error))
    }
}

impl<F, Fut, E, A, R> AsyncFallback<E, A, R, Awaited<ErrorOnly, Fut>> for F
where
    F: FnOnce(E) -> Fut,
    Fut: Future<Output = R>,
{
    type Later = Fut;

    #[inline]
    fn answer(self, error: E, _: A) -> Answered<R, Fut> {
        Answered::Later(self(error))
    }
}

macro_rules! with_arguments {
    ($($argument:ident),+) => {
        impl<F, E, R, $($argument),+> Fallback<E, ($($argument,)+), R, WithArguments> for F
        where
            F: FnOnce(E, $($argument),+) -> R,
        {
            #[inline]
            #[allow(non_snake_case, reason = "the arguments are named by their types")]
            fn answer(self, error: E, ($($argument,)+): ($($argument,)+)) -> R {
                self(error, $($argument),+)
            }
        }

        impl<F, E, R, $($argument),+> AsyncFallback<E, ($($argument,)+), R, WithArguments> for F
        where
            F: FnOnce(E, $($argument),+) -> R,
        {
            type Later = Pending<R>;

            #[inline]
            #[allow(non_snake_case, reason = "the arguments are named by their types")]
            fn answer(self, error: E, ($($argument,)+): ($($argument,)+)) -> Answered<R, Pending<R>> {
                Answered::Now(self(error, $($argument),+))
            }
        }

        impl<F, Fut, E, R, $($argument),+> AsyncFallback<E, ($($argument,)+), R, Awaited<WithArguments, Fut>> for F
        where
            F: FnOnce(E, $($argument),+) -> Fut,
            Fut: Future<Output = R>,
        {
            type Later = Fut;

            #[inline]
            #[allow(non_snake_case, reason = "the arguments are named by their types")]
            fn answer(self, error: E, ($($argument,)+): ($($argument,)+)) -> Answered<R, Fut> {
                Answered::Later(self(error, $($argument),+))
            }
        }
    };
}

with_arguments!(A1);
with_arguments!(A1, A2);
with_arguments!(A1, A2, A3);
with_arguments!(A1, A2, A3, A4);
with_arguments!(A1, A2, A3, A4, A5);
with_arguments!(A1, A2, A3, A4, A5, A6);
with_arguments!(A1, A2, A3, A4, A5, A6, A7);
with_arguments!(A1, A2, A3, A4, A5, A6, A7, A8);

/// An outcome a fallback can answer: one with an error to hand it.
#[diagnostic::on_unimplemented(
    message = "`fallback = ..` needs a function that returns `Result<T, E>`, not `{Self}`",
    label = "a fallback is handed the last error, and this return type has none",
    note = "to answer a value that `if_result` rejected, return it in a `Result` and handle it there"
)]
pub trait Answerable: Sized {
    /// What the fallback is handed.
    type Error;
    /// The outcome's error, or the outcome when it has none: a value that
    /// was judged a failure is returned as it is.
    fn error_of(self) -> Result<Self::Error, Self>;
}

impl<T, E> Answerable for Result<T, E> {
    type Error = E;

    #[inline]
    fn error_of(self) -> Result<E, Self> {
        match self {
            Err(error) => Ok(error),
            ok => Err(ok),
        }
    }
}

/// The last outcome's error, to hand to the fallback with what makes the
/// answer ([`Like`]: the outcome type and the `arguments`), or the
/// outcome. The outcome is taken by value, never borrowed: a borrowed
/// local of an async function is kept in its future across every await
/// that follows, the fallback's included.
#[inline]
pub fn error_of<R: Answerable, A>(outcome: R, arguments: A) -> Result<(R::Error, Like<R, A>), R> {
    match outcome.error_of() {
        Ok(error) => Ok((error, Like(PhantomData, arguments))),
        Err(outcome) => Err(outcome),
    }
}

/// The function's outcome type, which the answer must be, and its
/// arguments, by reference: the receiver of the calls that make the
/// answer, so that both types are known before the fallback is matched
/// against them.
#[derive(Debug)]
pub struct Like<R, A>(PhantomData<R>, A);

impl<R, A> Like<R, A> {
    /// The answer of a sync function's fallback named by its path, which
    /// may take the arguments.
    #[inline]
    pub fn answer<F, E, M>(self, error: E, fallback: F) -> R
    where
        F: Fallback<E, A, R, M>,
    {
        fallback.answer(error, self.1)
    }

    /// The answer of an async function's fallback named by its path: now,
    /// or a future to await.
    #[inline]
    pub fn answer_async<F, E, M>(self, error: E, fallback: F) -> Answered<R, F::Later>
    where
        F: AsyncFallback<E, A, R, M>,
    {
        fallback.answer(error, self.1)
    }

    /// The answer of a fallback written as a closure, which takes the
    /// error alone (it sees the arguments where it is written) and answers
    /// at once: bound as a closure, so that its argument's type is
    /// inferred.
    #[inline]
    pub fn answer_by_closure<E>(self, error: E, fallback: impl FnOnce(E) -> R) -> R {
        fallback(error)
    }
}

/// A sync call that gave up after its first attempt ran early, ended, as
/// its fallback sees it: the call state is gone, and the fallback is
/// called where the body's closure no longer borrows the arguments.
#[derive(Debug)]
pub struct Ended {
    pub(crate) site: &'static Site,
    pub(crate) call_id: CallIdCell,
    pub(crate) spans: Option<Box<Spans>>,
    pub(crate) falls_back: bool,
}

impl Ended {
    /// Whether the fallback answers: a dynamic policy may turn it off.
    #[inline]
    pub fn falls_back(&self) -> bool {
        self.falls_back
    }

    /// The fallback answered, as a call with its state says it.
    #[cold]
    #[inline(never)]
    pub fn fell_back(&self, fields: impl Fields) {
        answered(self.site, &self.call_id, self.spans.as_deref(), &|| {
            fields.span()
        });
    }
}

/// A fallback answered the call of `site` whose id is `call_id`: counted,
/// said on its span and logged.
pub(crate) fn answered(
    site: &'static Site,
    call_id: &CallIdCell,
    spans: Option<&Spans>,
    span: &dyn Fn() -> Span,
) {
    site.fell_back();
    if let Some(spans) = spans {
        spans.fell_back();
    }
    if log::wanted(tracing::Level::INFO) {
        log::fell_back(site.name(), call_id, span);
    }
}
