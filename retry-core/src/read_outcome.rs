//! How the expansion reads an outcome whose type it can name: its error's
//! text and its value's judgement, picked by autoref on the type, once per
//! outcome type, instead of by a closure that each annotated function
//! compiles.
//!
//! The expansion calls `(&OutcomeOf::<R>::new()).__retry_describer()` and
//! `(&OutcomeOf::<R>::new()).__retry_judge()`. Method resolution first
//! finds the impls on `OutcomeOf<R>` ([`DescribesDisplay`], [`JudgesValue`]),
//! which apply when the error is `Display` or the value
//! [`ClassifiedValue`], and only then borrows again to find those on
//! `&OutcomeOf<R>` ([`DescribesDebug`], [`AcceptsValue`]). Each gives a
//! function item, the same for every function of that outcome type, and of
//! no size: a function that passes it on to the failure path stores
//! nothing for it on its success path.

use core::fmt;
use core::marker::PhantomData;

use crate::class::Classification;
use crate::classify::ClassifiedValue;
use crate::outcome::Outcome;

/// The probe for the outcome type `R`.
#[derive(Debug)]
pub struct OutcomeOf<R: ?Sized>(PhantomData<fn() -> *const R>);

impl<R: ?Sized> OutcomeOf<R> {
    /// The probe for `R`.
    #[inline]
    pub const fn new() -> OutcomeOf<R> {
        OutcomeOf(PhantomData)
    }
}

impl<R: ?Sized> Default for OutcomeOf<R> {
    fn default() -> OutcomeOf<R> {
        OutcomeOf::new()
    }
}

/// An error that is `Display`: written with it.
pub trait DescribesDisplay<E> {
    /// `Display::fmt`.
    fn __retry_describer(&self) -> impl Fn(&E, &mut fmt::Formatter<'_>) -> fmt::Result + Copy;
}

impl<R: Outcome + ?Sized> DescribesDisplay<R::Error> for OutcomeOf<R>
where
    R::Error: fmt::Display,
{
    #[inline(always)]
    fn __retry_describer(
        &self,
    ) -> impl Fn(&R::Error, &mut fmt::Formatter<'_>) -> fmt::Result + Copy {
        <R::Error as fmt::Display>::fmt
    }
}

/// Any other error: written with `Debug`.
pub trait DescribesDebug<E> {
    /// `Debug::fmt`.
    fn __retry_describer(&self) -> impl Fn(&E, &mut fmt::Formatter<'_>) -> fmt::Result + Copy;
}

impl<R: Outcome + ?Sized> DescribesDebug<R::Error> for &OutcomeOf<R>
where
    R::Error: fmt::Debug,
{
    #[inline(always)]
    fn __retry_describer(
        &self,
    ) -> impl Fn(&R::Error, &mut fmt::Formatter<'_>) -> fmt::Result + Copy {
        <R::Error as fmt::Debug>::fmt
    }
}

/// A value that may be a failure ([`ClassifiedValue`]): judged by it.
pub trait JudgesValue<V: ?Sized> {
    /// [`ClassifiedValue::failure`].
    fn __retry_judge(&self) -> impl Fn(&V) -> Option<Classification> + Copy;
}

impl<R: Outcome + ?Sized> JudgesValue<R::Value> for OutcomeOf<R>
where
    R::Value: ClassifiedValue,
{
    #[inline(always)]
    fn __retry_judge(&self) -> impl Fn(&R::Value) -> Option<Classification> + Copy {
        <R::Value as ClassifiedValue>::failure
    }
}

/// Any other value: never a failure.
pub trait AcceptsValue<V: ?Sized> {
    /// A judge that returns `None`.
    fn __retry_judge(&self) -> impl Fn(&V) -> Option<Classification> + Copy;
}

impl<R: Outcome + ?Sized> AcceptsValue<R::Value> for &OutcomeOf<R> {
    #[inline(always)]
    fn __retry_judge(&self) -> impl Fn(&R::Value) -> Option<Classification> + Copy {
        |_| None
    }
}
