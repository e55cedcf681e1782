//! What each attempt does with the arguments it takes by value: a
//! compile error at a move that a second attempt could not repeat, and a
//! clone of its own for each argument that `clone(..)` names.

use std::borrow::Cow;

use proc_macro2::TokenStream;
use quote::quote_spanned;
use syn::Ident;
use syn::spanned::Spanned;

use crate::args::Args;
use crate::item::{self, Kind};
use crate::moves;

/// For each by-value argument, or field of one, that each attempt moves, a
/// check at the move that fails to compile, naming `clone(..)`, unless its
/// type is `Copy` or a `&mut` (which a call reborrows). The trait is local,
/// so that its message can name the argument.
pub(super) fn moved_checks(
    sig: &syn::Signature,
    body: &item::Body,
    kind: &Kind,
    args: &Args,
    private: &Ident,
) -> TokenStream {
    let cloned = args.clone.as_deref().unwrap_or_default();
    // A body ending in an async block was parsed already, to find it; only
    // the block's content runs once per attempt.
    let parsed = || match kind {
        Kind::AsyncBlock { block, retried, .. } => Some(moves::Parsed {
            each_attempt: Cow::Borrowed(&**retried),
            once: Some(&**block),
        }),
        Kind::Sync | Kind::Async => body.block().ok().map(|block| moves::Parsed {
            each_attempt: Cow::Owned(block),
            once: None,
        }),
    };
    moves::moved_arguments(sig, parsed, cloned)
        .into_iter()
        .map(|moves::Moved { name, fields, at }| {
            // As the user writes it: `r#type` stays raw in `clone(r#type)`.
            let name_text = name.to_string();
            let path: String = fields
                .iter()
                .map(|field| match field {
                    syn::Member::Named(ident) => format!(".{ident}"),
                    syn::Member::Unnamed(index) => format!(".{}", index.index),
                })
                .collect();
            // A by-value `self` cannot be cloned for each attempt by
            // `clone(..)`: it is borrowed instead.
            let (whole, remedy) = if name_text == "self" {
                (
                    "`self`".to_owned(),
                    "take `&self` (or `&mut self`) and clone what each attempt needs".to_owned(),
                )
            } else {
                (
                    format!("the argument `{name_text}`"),
                    format!(
                        "write `#[retry(clone({name_text}), ..)]` so that each attempt moves a clone of its own, or borrow it"
                    ),
                )
            };
            let moved = if fields.is_empty() {
                whole
            } else {
                format!("`{name_text}{path}` out of {whole}")
            };
            // All in the message: for this trait, which the expansion
            // defines, rustc 1.95 shows the message but not a label or
            // note (`tests-build` pins what it shows).
            let message = format!(
                "the body moves {moved}, but `#[retry]` runs the body once per attempt: {remedy}"
            );
            let mut used = name.clone();
            used.set_span(at);
            // The place's type picks, by autoref, what must be `Copy`. The
            // check's argument spans the place, as written, where rustc
            // reports the unmet bound.
            let end = fields.last().map_or(at, Spanned::span);
            let receiver = quote_spanned!(at=> (&&#private::Moved(&#used #(.#fields)*)));
            let method = quote_spanned!(end=> __retry_moved());
            let check = quote_spanned!(at=> __retry_reusable(#receiver.#method));
            // Diagnostic attributes are read only with call-site spans.
            let on_unimplemented = quote::quote! {
                #[diagnostic::on_unimplemented(message = #message)]
            };
            let do_not_recommend = quote::quote!(#[diagnostic::do_not_recommend]);
            code! {
                {
                    #[allow(unused_imports)]
                    use #private::{MovedAway as _, MovedReborrow as _};
                    #on_unimplemented
                    trait __RetryReusable {}
                    #do_not_recommend
                    impl<T: ::core::marker::Copy + ?::core::marker::Sized> __RetryReusable for T {}
                    fn __retry_reusable<T: __RetryReusable + ?::core::marker::Sized>(_: &T) {}
                    #check;
                }
            }
        })
        .collect()
}

/// The body of one attempt: the user's statements, with `let x = x.clone();`
/// for each `clone(x)` put first inside their braces (a block nested in
/// another would draw an `unused_braces` warning on one-line bodies).
pub(super) fn attempt_body(body: &item::Body, args: &Args) -> TokenStream {
    let clones = args
        .clone
        .iter()
        .flatten()
        // At the name in `clone(..)`: an argument that cannot be cloned is
        // reported there.
        .map(|name| quote_spanned!(name.span()=> let #name = ::core::clone::Clone::clone(&#name);));
    body.with_first(clones.collect())
}
