//! The `#[retry]` attribute. Use it through the [`reattempt`](https://docs.rs/reattempt)
//! crate, which documents it; this crate's paths are not public API.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

/// `quote!` with mixed-site hygiene: the expansion's locals (`__retry_*`)
/// can neither see nor shadow the user's names, while paths still resolve
/// at the call site.
macro_rules! code {
    ($($tokens:tt)*) => {
        quote::quote_spanned!(proc_macro2::Span::mixed_site()=> $($tokens)*)
    };
}

mod args;
mod classified;
mod duration;
mod expand;
#[cfg(test)]
mod expansion_snapshots;
mod hint;
#[cfg(test)]
mod hostile_input;
mod item;
mod moves;
mod policy;
mod prelude;
mod preset;
mod shape;
mod spanned;
mod type_span;
mod validate;

use proc_macro::TokenStream;

/// Retries the function's body on transient errors. See the `reattempt` crate
/// for the arguments.
#[proc_macro_attribute]
pub fn retry(args: TokenStream, item: TokenStream) -> TokenStream {
    retry_impl(args.into(), item.into()).into()
}

/// Never loses the item: on any error the function is emitted unchanged
/// beside the error, so the rest of the crate still type-checks and IDEs
/// keep working.
fn retry_impl(
    args: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    let function = match item::parse(item.clone()) {
        Ok(Some(function)) => function,
        Ok(None) => return item,
        Err(error) => return with_error(item, error),
    };
    let args = match syn::parse2::<args::Args>(args) {
        Ok(args) => args,
        Err(error) => return with_error(item, error),
    };
    match expand::expand(args, function) {
        Ok(expanded) => expanded,
        Err(error) => with_error(item, error),
    }
}

/// Classifies an error type by its variants: each delegates to the error
/// it wraps, or takes a class of its own. See `reattempt::Classified`.
#[proc_macro_derive(Classified, attributes(classify))]
pub fn derive_classified(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    classified::derive(input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

fn with_error(mut item: proc_macro2::TokenStream, error: syn::Error) -> proc_macro2::TokenStream {
    item.extend(error.into_compile_error());
    item
}

#[cfg(test)]
mod tests {
    use proc_macro2::{TokenStream, TokenTree};

    /// How many times `marker` appears as an identifier in `tokens`, groups
    /// included.
    fn occurrences(tokens: TokenStream, marker: &str) -> usize {
        tokens
            .into_iter()
            .map(|token| match token {
                TokenTree::Ident(ident) => usize::from(ident == marker),
                TokenTree::Group(group) => occurrences(group.stream(), marker),
                _ => 0,
            })
            .sum()
    }

    /// Every kind of expansion writes the body's tokens once: with a copy
    /// of the body for a fast path, a closure or other unnameable type the
    /// body returns would have two types, and the user's code would be
    /// compiled twice.
    #[test]
    fn every_kind_of_expansion_writes_the_body_once() {
        let sync = "fn f(x: u64) -> std::io::Result<u64> { body_marker(x) }";
        let async_fn = "async fn f(x: u64) -> std::io::Result<u64> { body_marker(x).await }";
        let async_block = "fn f(x: u64) -> impl std::future::Future<Output = std::io::Result<u64>> { \
                           let y = x; async move { body_marker(y).await } }";
        let inner_attribute =
            "fn f(x: u64) -> std::io::Result<u64> { #![allow(unused)] body_marker(x) }";
        let cases: &[(&str, &str)] = &[
            // The early first attempt (`run_sync`), with the arguments that
            // change what it is given.
            ("", sync),
            ("max = 3, backoff = exp, jitter", sync),
            ("backoff = none", sync),
            ("preset = external_api", sync),
            ("", inner_attribute),
            ("deadline = 5s", sync),
            ("sleep = my_sleep", sync),
            ("dead_letter = SINK, idempotent = false", sync),
            // The sync loop: a hook, a classifier closure, `if_result`,
            // `fields`, a limit, a classic breaker, a dynamic policy.
            ("on_retry = log_it", sync),
            (
                "on = |e: &std::io::Error| e.kind() == std::io::ErrorKind::Other",
                sync,
            ),
            ("if_result = |v: &u64| *v == 0", sync),
            ("fields(x)", sync),
            ("limit = LIMIT", sync),
            ("breaker = classic(BREAKER)", sync),
            ("policy = dynamic()", sync),
            // The async loop, waiting in the next attempt or in the loop.
            ("", async_fn),
            ("sleep = my_async_sleep", async_fn),
            ("", async_block),
            ("deadline = 5s", async_fn),
            ("attempt_timeout = 1s", async_fn),
            ("on_retry = log_it", async_fn),
        ];
        for (args, function) in cases {
            let expanded = super::retry_impl(args.parse().unwrap(), function.parse().unwrap());
            let text = expanded.to_string();
            assert!(
                !text.contains("compile_error"),
                "#[retry({args})] {function} was refused: {text}"
            );
            assert_eq!(
                occurrences(expanded, "body_marker"),
                1,
                "#[retry({args})] {function} expands to {text}"
            );
        }
    }
}
