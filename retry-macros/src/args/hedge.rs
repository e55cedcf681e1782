//! `hedge = DUR` and `hedge(after = DUR, in_flight = N)`: when an attempt
//! is still running `after` it started, another starts beside it.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Ident, LitInt, Token, parenthesized, token};

use super::syntax::{at_end, positive};
use crate::duration::Dur;

/// The most attempts in flight at once that `in_flight` allows; the
/// core's `hedge::MAX_IN_FLIGHT`, which a test holds to this.
pub const MAX_IN_FLIGHT: u8 = 4;

const USAGE: &str = "`hedge` takes the time after which a slow attempt gets another beside it, `hedge = 50ms`, or `hedge(after = 50ms, in_flight = 3)` for up to 3 attempts at once";

/// When a call hedges.
pub struct Hedge {
    /// The key, where errors about hedging this function point.
    pub key: Ident,
    pub after: Dur,
    /// The most attempts in flight at once, the first included.
    pub in_flight: u8,
}

pub(super) fn parse(key: Ident, input: ParseStream) -> syn::Result<Hedge> {
    if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        let after = after(input)?;
        return Ok(Hedge {
            key,
            after,
            in_flight: 2,
        });
    }
    if !input.peek(token::Paren) {
        return Err(input.error(USAGE));
    }
    let content;
    let parens = parenthesized!(content in input);
    let mut after_given = None;
    let mut in_flight = None;
    while !content.is_empty() {
        let name = content
            .call(Ident::parse_any)
            .map_err(|e| syn::Error::new(e.span(), USAGE))?;
        content
            .parse::<Token![=]>()
            .map_err(|e| syn::Error::new(e.span(), format!("expected `=` after `{name}`")))?;
        let twice = || syn::Error::new(name.span(), format!("`{name}` is given twice"));
        match name.to_string().as_str() {
            "after" if after_given.is_some() => return Err(twice()),
            "after" => after_given = Some(after(&content)?),
            "in_flight" if in_flight.is_some() => return Err(twice()),
            "in_flight" => in_flight = Some(parse_in_flight(&content)?),
            other => {
                return Err(syn::Error::new(
                    name.span(),
                    format!("`hedge` takes `after` and `in_flight`, not `{other}`: {USAGE}"),
                ));
            }
        }
        if !content.is_empty() {
            content.parse::<Token![,]>().map_err(|e| {
                syn::Error::new(e.span(), "expected `,` between `hedge`'s arguments")
            })?;
        }
    }
    let Some(after) = after_given else {
        return Err(syn::Error::new(
            parens.span.join(),
            format!("`hedge(..)` needs `after`: {USAGE}"),
        ));
    };
    Ok(Hedge {
        key,
        after,
        in_flight: in_flight.unwrap_or(2),
    })
}

/// The delay before a hedge: a duration longer than zero.
fn after(input: ParseStream) -> syn::Result<Dur> {
    if at_end(input) {
        return Err(input.error(USAGE));
    }
    positive(input, "hedge")
}

fn parse_in_flight(input: ParseStream) -> syn::Result<u8> {
    let usage = format!(
        "`in_flight` is the most attempts running at once, the first included: from 2 to {MAX_IN_FLIGHT}"
    );
    let lit: LitInt = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), &usage))?;
    match lit.base10_parse::<u8>() {
        Ok(n) if (2..=MAX_IN_FLIGHT).contains(&n) && lit.suffix().is_empty() => Ok(n),
        _ => Err(syn::Error::new(lit.span(), usage)),
    }
}

impl Hedge {
    /// Where an error about hedging this function points.
    pub fn span(&self) -> Span {
        self.key.span()
    }
}
