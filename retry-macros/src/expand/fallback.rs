//! `fallback = ..`: what follows a give-up, where the fallback's answer
//! takes the place of the outcome.

use proc_macro2::{Punct, Spacing, TokenStream};
use syn::Ident;
use syn::spanned::Spanned;

use super::Parts;
use crate::args::{Args, Fallback};
use crate::spanned::{parenthesized, private_path};

impl Parts<'_> {
    /// How the loop ends a call that gave up, after `on_give_up`: it
    /// returns its outcome, or, under `fallback = ..`, breaks out of the
    /// loop with it for [`then_fallback`](Self::then_fallback). The
    /// fallback is not called in the loop: there the outcome was borrowed
    /// by the decision, and a borrowed local of an async function is kept
    /// in its future across every later await, the fallback's included.
    pub(super) fn gave_up(&self, args: &Args) -> TokenStream {
        let outcome = &self.outcome;
        match args.fallback {
            Some(_) => code!(break '__retry_loop #outcome;),
            None => code!(return #outcome;),
        }
    }

    /// The loop, followed under `fallback = ..` by the fallback's answer
    /// to the outcome it broke out with.
    pub(super) fn then_fallback(&self, args: &Args, looped: TokenStream) -> TokenStream {
        if args.fallback.is_none() {
            return looped;
        }
        let outcome = &self.outcome;
        let answered = self.with_fallback(args, code!());
        code! {
            let #outcome = '__retry_loop: #looped;
            #answered
            #outcome
        }
    }

    /// What follows a give-up: `hooks` (`on_give_up`, where they were not
    /// called already), then, under
    /// `fallback = ..`, the fallback's answer in place of the outcome, when
    /// the outcome is an error and a dynamic policy did not turn it off.
    pub(super) fn with_fallback(&self, args: &Args, hooks: TokenStream) -> TokenStream {
        let Some(Fallback {
            function: fallback,
            awaited,
        }) = &args.fallback
        else {
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
        // Only `async FN` is awaited: a plain function's answer costs the
        // function's future no state of its own.
        let awaited = *awaited && self.shape.is_async() && !is_closure;
        let method = match (is_closure, awaited) {
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
        let method = Ident::new(method, span);
        let error_of = Ident::new("error_of", span);
        // The receiver holds the outcome type and the arguments, so that
        // the types the fallback must fit are known before it is matched.
        let receiver = parenthesized(span, code!(__retry_like));
        let arguments = parenthesized(span, code!(__retry_error, #fallback));
        let answer = code!(#receiver.#method #arguments);
        let fields = self.fields(args);
        // Each `match` ends before any await: the temporary it matches on
        // would be kept in an async function's future across the await,
        // and it holds an outcome.
        let answered = if awaited {
            // An `async fn`'s answer is awaited, and only it is kept in the
            // function's future; a plain function given so answers now.
            let mut dot = Punct::new('.', Spacing::Alone);
            dot.set_span(span);
            let awaited = Ident::new("await", span);
            code! {
                let __retry_later = match #answer {
                    #private::fallback::Answered::Now(__retry_answer) => {
                        __retry_call.fell_back(#fields);
                        break '__retry_fallback __retry_answer;
                    }
                    #private::fallback::Answered::Later(__retry_later) => __retry_later,
                };
                let __retry_answer = __retry_later #dot #awaited;
            }
        } else {
            code!(let __retry_answer = #answer;)
        };
        code! {
            #hooks
            let #outcome = '__retry_fallback: {
                if !__retry_call.falls_back() {
                    break '__retry_fallback #outcome;
                }
                let (__retry_error, __retry_like) = match #module::#error_of(#outcome, #given) {
                    ::core::result::Result::Err(#outcome) => break '__retry_fallback #outcome,
                    ::core::result::Result::Ok(__retry_parts) => __retry_parts,
                };
                #answered
                __retry_call.fell_back(#fields);
                __retry_answer
            };
        }
    }
}
