//! Paths and calls spanned at what the user wrote, so that an error about
//! it is reported there rather than at the attribute.

use proc_macro2::{Delimiter, Group, Punct, Spacing, Span, TokenStream, TokenTree};
use syn::Ident;

/// The name the expansion imports the core's private module under
/// (`expand::private_import`).
pub(crate) const PRIVATE: &str = "__retry_private";

/// `__retry_private::name` with every token at `span`, so that an error
/// about the item it names is reported there. Made token by token: making
/// the path and then setting each token's span took the unoptimised macro
/// a trip through the compiler to read the tokens back.
pub(crate) fn private_path(name: &str, span: Span) -> TokenStream {
    let mut joint = Punct::new(':', Spacing::Joint);
    joint.set_span(span);
    let mut alone = Punct::new(':', Spacing::Alone);
    alone.set_span(span);
    [
        TokenTree::Ident(Ident::new(PRIVATE, span)),
        TokenTree::Punct(joint),
        TokenTree::Punct(alone),
        TokenTree::Ident(Ident::new(name, span)),
    ]
    .into_iter()
    .collect()
}

/// `__retry_call.method(arguments)`, spanned whole at `span` when there is
/// one: where a bound the call puts on its arguments fails twice (on an
/// argument and on the call), so that the compiler reports the two as one
/// error there. The receiver and the arguments are put in groups of that
/// span, as the call's span runs from the first to the last; the names
/// inside keep the expansion's hygiene.
pub(crate) fn call_at(span: Option<Span>, method: &Ident, arguments: TokenStream) -> TokenStream {
    let Some(span) = span else {
        return code!(__retry_call.#method(#arguments));
    };
    let receiver = parenthesized(span, code!(__retry_call));
    let arguments = parenthesized(span, arguments);
    code!(#receiver.#method #arguments)
}

/// `__retry_private::name(arguments)`, spanned whole at `span`: where a
/// bound of the function on what the user wrote fails at the call rather
/// than at an argument (a bound on what a closure returns, say), so that
/// it is reported at `span`.
pub(crate) fn private_call(name: &str, span: Span, arguments: TokenStream) -> TokenStream {
    let mut call = private_path(name, span);
    call.extend([TokenTree::Group(parenthesized(span, arguments))]);
    call
}

/// `(__retry_sleep)(__retry_delay).await`, a wait on an async function's
/// own sleeper, spanned whole at the sleeper: a sleeper that returns no
/// future fails here where `async_sleeper` already said so, and the
/// compiler reports that once.
pub(crate) fn own_sleep_awaited(sleeper: Span) -> TokenStream {
    let function = parenthesized(sleeper, code!(__retry_sleep));
    let arguments = parenthesized(sleeper, code!(__retry_delay));
    let mut dot = Punct::new('.', Spacing::Alone);
    dot.set_span(sleeper);
    [
        TokenTree::Group(function),
        TokenTree::Group(arguments),
        TokenTree::Punct(dot),
        TokenTree::Ident(Ident::new("await", sleeper)),
    ]
    .into_iter()
    .collect()
}

/// `(tokens)`, its parentheses at `span`: what a call's span runs to, or
/// from, while the names inside keep the expansion's hygiene.
pub(crate) fn parenthesized(span: Span, tokens: TokenStream) -> Group {
    let mut group = Group::new(Delimiter::Parenthesis, tokens);
    group.set_span(span);
    group
}
