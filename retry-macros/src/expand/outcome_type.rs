//! The outcome type as the expansion names it: `impl Trait` erased, and
//! where its error type is written.

use proc_macro2::Span;
use syn::visit_mut::VisitMut;
use syn::{ReturnType, Type};

use crate::item::Kind;
use crate::type_span;

/// A type with `impl Trait` replaced by `_`, or `None` when nothing of it
/// can be named; and whether it is named whole, with nothing replaced.
pub(super) fn erased(ty: &Type) -> Option<(Type, bool)> {
    let mut ty = ty.clone();
    let mut eraser = ImplTraitEraser { erased: false };
    eraser.visit_type_mut(&mut ty);
    match ty {
        Type::Infer(_) => None,
        ty => Some((ty, !eraser.erased)),
    }
}

struct ImplTraitEraser {
    erased: bool,
}

impl VisitMut for ImplTraitEraser {
    fn visit_type_mut(&mut self, ty: &mut Type) {
        if let Type::ImplTrait(impl_trait) = ty {
            self.erased = true;
            *ty = Type::Infer(syn::TypeInfer {
                underscore_token: syn::Token![_](impl_trait.impl_token.span),
            });
        } else {
            syn::visit_mut::visit_type_mut(self, ty);
        }
    }
}

/// Where the error type is written: `E` in `-> Result<T, E>`, else the
/// whole return type (an alias such as `io::Result<T>` hides it).
pub(super) fn error_type_span(output: &ReturnType, kind: &Kind) -> Span {
    let ty = match (kind, output) {
        (Kind::AsyncBlock { output, .. }, _) => &**output,
        (_, ReturnType::Type(_, ty)) => &**ty,
        (_, ReturnType::Default) => return Span::call_site(),
    };
    if let Type::Path(path) = ty
        && let Some(last) = path.path.segments.last()
        && let syn::PathArguments::AngleBracketed(args) = &last.arguments
        && let Some(syn::GenericArgument::Type(error)) = args.args.iter().nth(1)
    {
        return type_span::first_token(error);
    }
    type_span::first_token(ty)
}
