//! `max = ...`: how many attempts a call makes.

use proc_macro2::Span;
use syn::parse::ParseStream;
use syn::{Ident, Lit, Token};

/// `max = ...`
pub enum Max {
    Limited(u32),
    /// No count limit, bounded by a `deadline` (which `validate` asks for).
    Unbounded(Span),
    /// No count limit and no deadline, written out: a call retries for
    /// ever.
    Forever(Span),
}

pub(super) fn parse_max(input: ParseStream) -> syn::Result<Max> {
    if input.peek(Ident) {
        let ident: Ident = input.parse()?;
        if ident == "unbounded" {
            return Ok(Max::Unbounded(ident.span()));
        }
        if ident == "forever" {
            return Ok(Max::Forever(ident.span()));
        }
        return Err(syn::Error::new(
            ident.span(),
            "`max` takes a number of attempts (`max = 5`), `unbounded` (with a `deadline`) or `forever` (no limit at all)",
        ));
    }
    if input.peek(Token![-]) {
        let minus: Token![-] = input.parse()?;
        let rest: Lit = input.parse()?;
        return Err(syn::Error::new_spanned(
            quote::quote!(#minus #rest),
            "`max` counts attempts, the first call included, so it is at least 1 (`max = 1` means no retry)",
        ));
    }
    let lit: Lit = input.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            "`max` takes a number of attempts (`max = 5`), `unbounded` (with a `deadline`) or `forever` (no limit at all)",
        )
    })?;
    let Lit::Int(int) = &lit else {
        return Err(syn::Error::new(
            lit.span(),
            "`max` takes a whole number of attempts, such as `max = 5`, `unbounded` (with a `deadline`) or `forever` (no limit at all)",
        ));
    };
    if !int.suffix().is_empty() {
        return Err(syn::Error::new(
            int.span(),
            format!(
                "`max` counts attempts and takes no unit or suffix: `max = {}`",
                int.base10_digits()
            ),
        ));
    }
    let n: u32 = int
        .base10_parse()
        .map_err(|_| syn::Error::new(int.span(), format!("`max` must be at most {}", u32::MAX)))?;
    if n == 0 {
        return Err(syn::Error::new(
            int.span(),
            "`max` counts attempts, the first call included, so it is at least 1 (`max = 1` means no retry)",
        ));
    }
    Ok(Max::Limited(n))
}
