//! The pieces of syntax every argument's parser uses: one slot per
//! argument, `=`, a list of names, a duration, a function.

use std::time::Duration;

use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::spanned::Spanned;
use syn::{Expr, Ident, Token, parenthesized, token};

use crate::duration::Dur;

/// Parses an argument into its slot; a second occurrence is an error on
/// that occurrence's key. An `=` with nothing after it, or a name with no
/// value (`#[retry(max)]`), is the mistake its error points at: at the end
/// of the attribute, the parser's own error would point at the whole
/// attribute.
pub(super) fn put<T>(
    slot: &mut Option<T>,
    key: Ident,
    input: ParseStream,
    parse: impl FnOnce(ParseStream) -> syn::Result<T>,
) -> syn::Result<()> {
    if slot.is_some() {
        return Err(syn::Error::new(
            key.span(),
            format!("`{key}` is given twice; each argument may appear once"),
        ));
    }
    // `jitter` alone is an argument of its own; any other name alone gets
    // what its parser says of `name =` with nothing after it, which names
    // what may follow.
    if at_end(input) && key != "jitter" {
        use syn::parse::Parser;
        if let Err(error) = parse.parse2(quote::quote!(=)) {
            return Err(syn::Error::new(
                key.span(),
                format!("`{key}` needs a value: {error}"),
            ));
        }
        return Err(syn::Error::new(
            key.span(),
            format!("`{key}` needs a value"),
        ));
    }
    let fork = input.fork();
    let bare_eq = fork.parse::<Token![=]>().ok().filter(|_| at_end(&fork));
    let value = parse(input).map_err(|error| match bare_eq {
        Some(eq) => syn::Error::new(eq.span, error),
        None => error,
    })?;
    *slot = Some(value);
    Ok(())
}

pub(super) fn eq(input: ParseStream, key: &str) -> syn::Result<()> {
    input
        .parse::<Token![=]>()
        .map(drop)
        .map_err(|e| syn::Error::new(e.span(), format!("expected `=` after `{key}`")))
}

/// Whether the next tokens end the current argument.
pub(super) fn at_end(input: ParseStream) -> bool {
    input.is_empty() || input.peek(Token![,])
}

pub(super) fn parse_names(input: ParseStream, usage: &str) -> syn::Result<Vec<Ident>> {
    if !input.peek(token::Paren) {
        return Err(input.error(usage));
    }
    let content;
    parenthesized!(content in input);
    // Anything but names and commas gets the usage, where syn's own errors
    // ("expected ident", "expected `,`") would not say what is allowed.
    let mut names = Vec::new();
    while !content.is_empty() {
        let name = content.call(Ident::parse_any);
        names.push(name.map_err(|e| syn::Error::new(e.span(), usage))?);
        if !content.is_empty() {
            let comma = content.parse::<Token![,]>();
            comma.map_err(|e| syn::Error::new(e.span(), usage))?;
        }
    }
    if names.is_empty() {
        return Err(syn::Error::new(content.span(), usage));
    }
    Ok(names)
}

/// A duration that must be longer than zero.
pub(super) fn positive(input: ParseStream, what: &str) -> syn::Result<Dur> {
    let value = Dur::parse(input, what)?;
    if value.literal_value() == Some(Duration::ZERO) {
        return Err(syn::Error::new(
            value.span(),
            format!("`{what}` must be longer than zero"),
        ));
    }
    Ok(value)
}

/// A function or closure argument; a literal, or no expression, is an
/// error saying what fits.
pub(super) fn function(input: ParseStream, what: &str, usage: &str) -> syn::Result<Expr> {
    let expr: Expr = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), format!("`{what}` takes {usage}")))?;
    if let Expr::Lit(lit) = &expr {
        return Err(syn::Error::new(
            lit.span(),
            format!("`{what}` takes {usage}, not a literal"),
        ));
    }
    Ok(expr)
}

/// `key = VALUE` into its slot.
pub(super) fn put_value<T>(
    slot: &mut Option<T>,
    key: Ident,
    input: ParseStream,
    parse: impl FnOnce(ParseStream) -> syn::Result<T>,
) -> syn::Result<()> {
    let name = key.to_string();
    put(slot, key, input, |input| {
        eq(input, &name)?;
        parse(input)
    })
}
