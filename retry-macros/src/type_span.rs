//! Where errors about a type the user wrote are reported: at its first
//! token, found without printing the type.

use proc_macro2::Span;
use syn::Type;
use syn::spanned::Spanned;

/// The span of `ty`'s first token, which is what syn's `Spanned::span`
/// gives on a stable compiler (where spans cannot be joined). `span`
/// prints the whole type to find that token, and the macro, which cargo
/// builds unoptimised, spent about a twentieth of its run doing so for the
/// return type and the error type of each function. The shapes read here
/// are those a return type takes; any other is printed as before.
/// `tests-build/tests/ui/fail/returns-no-result-of-every-shape.rs` pins
/// where each is reported.
pub fn first_token(ty: &Type) -> Span {
    match ty {
        Type::Path(path) => match (&path.qself, &path.path.leading_colon) {
            (Some(qself), _) => qself.lt_token.span,
            (None, Some(colon)) => colon.spans[0],
            (None, None) => match path.path.segments.first() {
                Some(segment) => segment.ident.span(),
                None => ty.span(),
            },
        },
        Type::Reference(reference) => reference.and_token.span,
        Type::ImplTrait(impl_trait) => impl_trait.impl_token.span,
        // A delimited first token is printed as a group spanning both
        // delimiters.
        Type::Tuple(tuple) => tuple.paren_token.span.join(),
        Type::Paren(paren) => paren.paren_token.span.join(),
        Type::Array(array) => array.bracket_token.span.join(),
        _ => ty.span(),
    }
}
