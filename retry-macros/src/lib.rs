//! The `#[retry]` attribute. Use it through the [`reattempt`](https://docs.rs/reattempt)
//! crate, which documents it; this crate's paths are not public API.

#![deny(missing_docs)]

mod args;
mod const_policy;
mod duration;
mod expand;
mod hint;
mod item;
mod moves;
mod preset;
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

fn with_error(mut item: proc_macro2::TokenStream, error: syn::Error) -> proc_macro2::TokenStream {
    item.extend(error.into_compile_error());
    item
}
