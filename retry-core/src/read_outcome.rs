//! How the expansion reads an outcome: its error's text and its value's
//! judgement, picked by method resolution on the error or value type.
//!
//! The expansion calls `ErrorProbe::<R>::new().__retry_describer()` and
//! `ValueProbe::<R>::new().__retry_judge()` when it can name the
//! function's outcome type `R` (the probes of `<R as Outcome>::Error` and
//! `<R as Outcome>::Value`, by aliases that the expansion names in fewer
//! tokens), and `Probe::of(e)` on the error or value itself inside a
//! closure when it cannot. Method resolution first finds the inherent
//! methods of `Probe<T>`, which apply when the error is `Display` or the
//! value [`ClassifiedValue`]; when their bounds do not hold, it derefs to
//! [`Fallback<T>`] and finds its methods, for an error that is `Debug` and
//! for any value. Inherent methods, not traits, so that the expansion
//! imports no trait into the user's body, where each trait in scope is one
//! more that rustc considers for every method call.
//!
//! Each gives a function item, the same for every function of that type,
//! and of no size: a function that passes it on to the failure path stores
//! nothing for it on its success path. A value that is never a failure
//! gets [`NoFailure`], which is not even a function: nothing is made for
//! its type, and the rest of the call is told there is no judgement.

use core::fmt;
use core::marker::PhantomData;
use core::ops::Deref;

use crate::class::Classification;
use crate::classify::ClassifiedValue;

/// The probe for the type `T`: its methods read a type that is `Display`
/// (an error) or [`ClassifiedValue`] (a value), or make an outcome type
/// that is `FromTimeout` from a timeout, and it derefs to [`Fallback<T>`]
/// for any other.
#[derive(Debug)]
pub struct Probe<T: ?Sized>(Fallback<T>);

/// What a [`Probe`] derefs to: its methods read an error by `Debug`,
/// judge any value a success, and make no outcome from a timeout.
#[derive(Debug)]
pub struct Fallback<T: ?Sized>(PhantomData<fn() -> *const T>);

/// What a [`Fallback`] derefs to, for the methods that pick by two bounds
/// in turn: its own apply when neither holds.
#[derive(Debug)]
pub struct LastResort<T: ?Sized>(PhantomData<fn() -> *const T>);

/// The probe of an outcome's error type.
pub type ErrorProbe<R> = Probe<<R as crate::outcome::Outcome>::Error>;

/// The probe of an outcome's value type.
pub type ValueProbe<R> = Probe<<R as crate::outcome::Outcome>::Value>;

impl<T: ?Sized> Probe<T> {
    /// The probe for `T`, named.
    #[inline]
    pub const fn new() -> Probe<T> {
        Probe(Fallback(PhantomData))
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

impl<T: ?Sized> Deref for Fallback<T> {
    type Target = LastResort<T>;

    #[inline]
    fn deref(&self) -> &LastResort<T> {
        const { &LastResort(PhantomData) }
    }
}

impl<T: ?Sized> Deref for Probe<T> {
    type Target = Fallback<T>;

    #[inline]
    fn deref(&self) -> &Fallback<T> {
        &self.0
    }
}

impl<T: fmt::Display + ?Sized> Probe<T> {
    /// An error that is `Display` is written with it: `Display::fmt`.
    pub fn __retry_describer(&self) -> impl Fn(&T, &mut fmt::Formatter<'_>) -> fmt::Result + Copy {
        <T as fmt::Display>::fmt
    }
}

impl<T: fmt::Debug + ?Sized> Fallback<T> {
    /// Any other error is written with `Debug`: `Debug::fmt`.
    pub fn __retry_describer(&self) -> impl Fn(&T, &mut fmt::Formatter<'_>) -> fmt::Result + Copy {
        <T as fmt::Debug>::fmt
    }
}

/// A judgement of values, as a closure called through a vtable.
pub type DynJudge<'a, T> = &'a dyn Fn(&T) -> Option<Classification>;

/// How the core judges a successful value: whether it is a failure, and
/// its classification if so. A closure judges; [`NoFailure`] stands for a
/// value type none of whose values is a failure.
pub trait JudgeValue<T: ?Sized> {
    /// The classification of `value` when it is a failure, else `None`.
    fn judge(&self, value: &T) -> Option<Classification>;

    /// The judgement as a closure the rest of a call can call without
    /// naming `T`; `None` when no value is a failure, so that no closure,
    /// and no vtable of one, is made for such a type.
    fn as_dyn(&self) -> Option<DynJudge<'_, T>>;
}

impl<T: ?Sized, F: Fn(&T) -> Option<Classification>> JudgeValue<T> for F {
    #[inline]
    fn judge(&self, value: &T) -> Option<Classification> {
        self(value)
    }

    #[inline]
    fn as_dyn(&self) -> Option<DynJudge<'_, T>> {
        Some(self)
    }
}

/// The judgement of a value type none of whose values is a failure.
#[derive(Clone, Copy, Debug)]
pub struct NoFailure;

// Inlined always: made for each value type, a function of its own would
// be optimised again for each outcome type, to return `None`.
impl<T: ?Sized> JudgeValue<T> for NoFailure {
    #[inline(always)]
    fn judge(&self, _value: &T) -> Option<Classification> {
        None
    }

    #[inline(always)]
    fn as_dyn(&self) -> Option<DynJudge<'_, T>> {
        None
    }
}

impl<T: ClassifiedValue + ?Sized> Probe<T> {
    /// A value that may be a failure is judged by its type:
    /// [`ClassifiedValue::failure`].
    pub fn __retry_judge(&self) -> impl Fn(&T) -> Option<Classification> + Copy {
        <T as ClassifiedValue>::failure
    }
}

impl<T: ?Sized> Fallback<T> {
    /// Any other value is never a failure: [`NoFailure`], which makes
    /// nothing of the value's type.
    pub fn __retry_judge(&self) -> NoFailure {
        NoFailure
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value type whose values are failures when they are odd.
    struct Reply(u32);

    impl ClassifiedValue for Reply {
        fn failure(&self) -> Option<Classification> {
            (self.0 % 2 == 1).then(Classification::transient)
        }
    }

    #[test]
    fn a_classified_value_is_judged_by_its_type_and_any_other_never_fails() {
        // As the expansion calls it.
        let probe = Probe::<Reply>::new();
        let judge = probe.__retry_judge();
        assert_eq!(judge.judge(&Reply(3)), Some(Classification::transient()));
        assert_eq!(judge.judge(&Reply(4)), None);
        let as_dyn = judge.as_dyn().expect("a value type that may fail");
        assert_eq!(as_dyn(&Reply(3)), Some(Classification::transient()));

        let judge = Probe::<u64>::new().__retry_judge();
        assert_eq!(JudgeValue::<u64>::judge(&judge, &7), None);
        // The rest of a call is told there is nothing to judge.
        assert!(JudgeValue::<u64>::as_dyn(&judge).is_none());
    }

    /// A value of this type is written with `Debug` only.
    #[derive(Debug)]
    struct DebugOnly;

    #[test]
    fn every_probe_gives_something_of_no_size() {
        // So that a function that hands them on stores nothing for them.
        let display = size_of_val(&Probe::<std::io::Error>::new().__retry_describer());
        let debug = size_of_val(&Probe::<DebugOnly>::new().__retry_describer());
        let judge = size_of_val(&Probe::<Reply>::new().__retry_judge());
        let never = size_of_val(&Probe::<u64>::new().__retry_judge());
        assert_eq!((display, debug, judge, never), (0, 0, 0, 0));
    }
}
