//! How the expansion reads an outcome: its error's text and its value's
//! judgement, picked by autoref on the error or value type.
//!
//! The expansion calls `(&ErrorProbe::<R>::new()).__retry_describer()` and
//! `(&ValueProbe::<R>::new()).__retry_judge()` when it can name the
//! function's outcome type `R` (the probes of `<R as Outcome>::Error` and
//! `<R as Outcome>::Value`, by aliases that the expansion names in fewer
//! tokens), and `(&Probe::of(e))` on the error or value itself inside a
//! closure when it cannot. Method resolution first finds the
//! impls on `Probe<T>` ([`DescribesDisplay`], [`JudgesValue`]), which apply
//! when the error is `Display` or the value [`ClassifiedValue`], and only
//! then borrows again to find those on `&Probe<T>` ([`DescribesDebug`],
//! [`AcceptsValue`]). Each gives a function item, the same for every
//! function of that type, and of no size: a function that passes it on to
//! the failure path stores nothing for it on its success path.

use core::fmt;
use core::marker::PhantomData;

use crate::class::Classification;
use crate::classify::ClassifiedValue;

/// The probe for the type `T`.
#[derive(Debug)]
pub struct Probe<T: ?Sized>(PhantomData<fn() -> *const T>);

/// The probe of an outcome's error type.
pub type ErrorProbe<R> = Probe<<R as crate::outcome::Outcome>::Error>;

/// The probe of an outcome's value type.
pub type ValueProbe<R> = Probe<<R as crate::outcome::Outcome>::Value>;

impl<T: ?Sized> Probe<T> {
    /// The probe for `T`, named.
    #[inline]
    pub const fn new() -> Probe<T> {
        Probe(PhantomData)
    }

    /// The probe for the type of `value`.
    #[inline]
    pub const fn of(_value: &T) -> Probe<T> {
        Probe::new()
    }
}

impl<T: ?Sized> Default for Probe<T> {
    fn default() -> Probe<T> {
        Probe::new()
    }
}

/// An error that is `Display`: written with it.
pub trait DescribesDisplay<T: ?Sized> {
    /// `Display::fmt`.
    fn __retry_describer(&self) -> impl Fn(&T, &mut fmt::Formatter<'_>) -> fmt::Result + Copy;
}

impl<T: fmt::Display + ?Sized> DescribesDisplay<T> for Probe<T> {
    fn __retry_describer(&self) -> impl Fn(&T, &mut fmt::Formatter<'_>) -> fmt::Result + Copy {
        <T as fmt::Display>::fmt
    }
}

/// Any other error: written with `Debug`.
pub trait DescribesDebug<T: ?Sized> {
    /// `Debug::fmt`.
    fn __retry_describer(&self) -> impl Fn(&T, &mut fmt::Formatter<'_>) -> fmt::Result + Copy;
}

impl<T: fmt::Debug + ?Sized> DescribesDebug<T> for &Probe<T> {
    fn __retry_describer(&self) -> impl Fn(&T, &mut fmt::Formatter<'_>) -> fmt::Result + Copy {
        <T as fmt::Debug>::fmt
    }
}

/// A value that may be a failure ([`ClassifiedValue`]): judged by it.
pub trait JudgesValue<T: ?Sized> {
    /// [`ClassifiedValue::failure`].
    fn __retry_judge(&self) -> impl Fn(&T) -> Option<Classification> + Copy;
}

impl<T: ClassifiedValue + ?Sized> JudgesValue<T> for Probe<T> {
    fn __retry_judge(&self) -> impl Fn(&T) -> Option<Classification> + Copy {
        <T as ClassifiedValue>::failure
    }
}

/// Any other value: never a failure.
pub trait AcceptsValue<T: ?Sized> {
    /// A judge that returns `None`.
    fn __retry_judge(&self) -> impl Fn(&T) -> Option<Classification> + Copy;
}

impl<T: ?Sized> AcceptsValue<T> for &Probe<T> {
    fn __retry_judge(&self) -> impl Fn(&T) -> Option<Classification> + Copy {
        |_| None
    }
}
