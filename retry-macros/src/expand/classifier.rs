//! The classifier the core calls on each error: the error type's own
//! classification, or what `on = ..` gives.

use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;
use syn::Ident;
use syn::spanned::Spanned;

use crate::args::{Args, On};
use crate::spanned::private_path;

/// The classifier handed to `Call::decide`: a function of the error.
/// Without `on` it is the error type's own classification, named at the
/// error type so that a type without one is reported there.
pub(super) fn classifier(
    args: &Args,
    private: &Ident,
    error_span: Span,
    external_api: bool,
) -> TokenStream {
    match &args.on {
        None | Some(On::Transient) => {
            // Every token of the call at the error type's own span, so that a
            // type without a classification is reported there, once.
            let by_type = private_path("classify_by_type", error_span);
            if external_api {
                let error = Ident::new("__retry_error", error_span);
                let classify = quote_spanned!(error_span=> #by_type(#error));
                code!(|#error| #private::external_api(#classify))
            } else {
                // The function itself: a closure around it is one more body
                // for the compiler to check.
                by_type
            }
        }
        Some(On::Matches(pat)) => {
            code!(|__retry_e| #private::into_class(::core::matches!(__retry_e, #pat)))
        }
        Some(On::Closure(closure)) => {
            // At the closure's own span, so that a closure returning the
            // wrong type is reported there.
            let span = syn::spanned::Spanned::span(closure);
            let with = private_path("classify_with", span);
            quote_spanned!(span=> |__retry_e| #with(__retry_e, #closure))
        }
        Some(On::Expr(expr)) => {
            // The error handed to it at the classifier, keeping the
            // closure's hygiene: a classifier of another error type is
            // reported there.
            let error = Ident::new("__retry_e", Span::mixed_site().located_at(expr.span()));
            code!(|__retry_e| #private::Classify::classify(&__retry_on, #error))
        }
    }
}
