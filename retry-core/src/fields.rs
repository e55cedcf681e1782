//! The arguments a function names in `fields(..)`, as its call's log
//! events and dead-letter records see them.

use core::fmt;

use tracing::Span;

/// The names and values of the arguments in `fields(..)`, for records.
pub type FieldVisitor<'v> = &'v mut dyn FnMut(&'static str, &dyn fmt::Debug);

/// No `fields(..)`: records carry no arguments. As a function, for the
/// rest of a sync call, which hands it on as `&dyn Fn` ([`NoFields`] is
/// the same for the expansion).
#[inline]
pub(crate) fn no_fields(_: FieldVisitor<'_>) {}

/// No `fields(..)`: log events go in no extra span.
#[inline]
pub(crate) fn no_span() -> Span {
    Span::none()
}

/// The arguments a function names in `fields(..)`, as its call's log
/// events and dead-letter records see them: closures that borrow them,
/// which copy as the references they hold.
pub trait Fields: Copy {
    /// The span the call's log events go in.
    fn span(&self) -> Span;
    /// Shows `visit` each argument's name and value, for records.
    fn visit(&self, visit: FieldVisitor<'_>);
}

/// No `fields(..)`: log events go in no extra span, records carry no
/// arguments.
#[derive(Clone, Copy, Debug)]
pub struct NoFields;

impl Fields for NoFields {
    #[inline]
    fn span(&self) -> Span {
        no_span()
    }

    #[inline]
    fn visit(&self, visit: FieldVisitor<'_>) {
        no_fields(visit);
    }
}

/// `fields(..)`: a closure that makes the span of its arguments, and one
/// that shows them to a visitor.
#[derive(Clone, Copy, Debug)]
pub struct Named<S, V> {
    span: S,
    visit: V,
}

impl<S: Fn() -> Span, V: Fn(FieldVisitor<'_>)> Named<S, V> {
    /// The arguments' span and their visitor.
    #[inline]
    pub fn new(span: S, visit: V) -> Named<S, V> {
        Named { span, visit }
    }
}

impl<S, V> Fields for Named<S, V>
where
    S: Fn() -> Span + Copy,
    V: Fn(FieldVisitor<'_>) + Copy,
{
    #[inline]
    fn span(&self) -> Span {
        (self.span)()
    }

    #[inline]
    fn visit(&self, visit: FieldVisitor<'_>) {
        (self.visit)(visit)
    }
}
