//! The arguments that take a literal or a path: `name`, `alert_after`,
//! `max_retry_after` and `crate`.

use std::time::Duration;

use proc_macro2::Span;
use syn::parse::ParseStream;
use syn::{Lit, LitStr, Path};

use crate::duration::Dur;

pub(super) fn name(input: ParseStream) -> syn::Result<LitStr> {
    let name: LitStr = input.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            "`name` takes a string literal: `name = \"fetch_user\"`",
        )
    })?;
    if name.value().is_empty() {
        return Err(syn::Error::new(name.span(), "`name` cannot be empty"));
    }
    Ok(name)
}

pub(super) fn alert_after(input: ParseStream) -> syn::Result<u32> {
    let usage = "`alert_after` takes how many times in a row the same failure raises an alert, at least 1: `alert_after = 5`";
    let lit: Lit = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), usage))?;
    match &lit {
        Lit::Int(int) if int.suffix().is_empty() => match int.base10_parse::<u32>() {
            Ok(0) | Err(_) => Err(syn::Error::new(int.span(), usage)),
            Ok(n) => Ok(n),
        },
        _ => Err(syn::Error::new(lit.span(), usage)),
    }
}

pub(super) fn max_retry_after(input: ParseStream) -> syn::Result<Dur> {
    let value = Dur::parse(input, "max_retry_after")?;
    if value.literal_value() == Some(Duration::ZERO) {
        return Err(syn::Error::new(
            value.span(),
            "`max_retry_after` must be longer than zero: at `0s` every delay a server asks for would end the call at once; to always use the backoff instead, write `retry_after = ignore`",
        ));
    }
    Ok(value)
}

pub(super) fn krate(input: ParseStream) -> syn::Result<Path> {
    let wrong = |span: Span| {
        syn::Error::new(
            span,
            "`crate` takes the path of the `reattempt` crate: `crate = my_reattempt` or `crate = \"my_reattempt\"`",
        )
    };
    if input.peek(LitStr) {
        let lit: LitStr = input.parse()?;
        return lit
            .parse_with(Path::parse_mod_style)
            .map_err(|_| wrong(lit.span()));
    }
    if input.peek(Lit) {
        let lit: Lit = input.parse()?;
        return Err(wrong(lit.span()));
    }
    input
        .call(Path::parse_mod_style)
        .map_err(|e| wrong(e.span()))
}
