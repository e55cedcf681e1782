//! `fallback = ..`: what follows a give-up, where the fallback's answer
//! takes the place of the outcome.

use proc_macro2::{Punct, Spacing, TokenStream};
use syn::Ident;
use syn::spanned::Spanned;

use super::Parts;
use crate::args::Args;
use crate::spanned::{parenthesized, private_path};

impl Parts<'_> {
    /// What follows a give-up: `hooks` (`on_give_up`), then, under
    /// `fallback = ..`, the fallback's answer in place of the outcome, when
    /// the outcome is an error and a dynamic policy did not turn it off.
    pub(super) fn with_fallback(&self, args: &Args, hooks: TokenStream) -> TokenStream {
        let Some(fallback) = &args.fallback else {
            return hooks;
        };
        let Parts {
            private, outcome, ..
        } = self;
        // Spanned whole at the fallback, so that one that does not fit is
        // one error there.
        let span = fallback.span();
        let module = private_path("fallback", span);
        let is_closure = matches!(fallback, syn::Expr::Closure(_));
        let method = match (is_closure, self.shape.is_async()) {
            (true, _) => "answer_by_closure",
            (false, true) => "answer_async",
            (false, false) => "answer",
        };
        let given = if is_closure {
            code!(())
        } else {
            let arguments = &self.arguments;
            code!((#(&#arguments,)*))
        };
        let awaited = if self.shape.is_async() && !is_closure {
            let mut dot = Punct::new('.', Spacing::Alone);
            dot.set_span(span);
            let awaited = Ident::new("await", span);
            code!(#dot #awaited)
        } else {
            code!()
        };
        let method = Ident::new(method, span);
        let error_of = Ident::new("error_of", span);
        // The receiver holds the outcome type and the arguments, so that
        // the types the fallback must fit are known before it is matched.
        let receiver = parenthesized(span, code!(__retry_like));
        let arguments = parenthesized(span, code!(__retry_error, #fallback));
        let answer = code!(#receiver.#method #arguments #awaited);
        let fields = self.fields(args);
        code! {
            #hooks
            let #outcome = if __retry_call.falls_back() {
                let __retry_like = #private::fallback::like(&#outcome, #given);
                match #module::#error_of(#outcome) {
                    ::core::result::Result::Err(#outcome) => #outcome,
                    ::core::result::Result::Ok(__retry_error) => {
                        let __retry_answer = #answer;
                        __retry_call.fell_back(#fields);
                        __retry_answer
                    }
                }
            } else {
                #outcome
            };
        }
    }
}
