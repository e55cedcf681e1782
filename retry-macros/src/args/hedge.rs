//! `hedge = DUR` and `hedge(after = DUR, in_flight = N)`: when an attempt
//! is still running `after` it started, another starts beside it.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Ident, LitInt, Token, parenthesized, token};

use super::syntax::{at_end, positive};
use crate::duration::Dur;

/// The most attempts in flight at once that `in_flight` allows: the
/// expansion writes a slot for each.
pub const MAX_IN_FLIGHT: u8 = 4;

const USAGE: &str = "`hedge` takes the time after which a slow attempt gets another beside it, `hedge = 50ms`, or a percentile of the function's recent attempt latencies, `hedge = p95`; or `hedge(after = 50ms, in_flight = 3)` for up to 3 attempts at once, `hedge(after = p95, min = 20ms)` for a delay of at least 20 ms, and 20 ms until enough latencies are known";

/// When a call hedges.
pub struct Hedge {
    /// The key, where errors about hedging this function point.
    pub key: Ident,
    pub after: After,
    /// The most attempts in flight at once, the first included.
    pub in_flight: u8,
}

/// How long an attempt runs before another starts beside it.
pub enum After {
    Fixed(Dur),
    /// A percentile (50 to 99) of the function's recent attempt latencies,
    /// at least `min`, and `min` until enough are known.
    Percentile {
        percentile: u8,
        min: Option<Dur>,
    },
}

pub(super) fn parse(key: Ident, input: ParseStream) -> syn::Result<Hedge> {
    if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        let after = match percentile(input)? {
            Some(percentile) => After::Percentile {
                percentile,
                min: None,
            },
            None => After::Fixed(after(input)?),
        };
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
    let mut min = None;
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
            "after" => {
                after_given = Some(match percentile(&content)? {
                    Some(percentile) => After::Percentile {
                        percentile,
                        min: None,
                    },
                    None => After::Fixed(after(&content)?),
                });
            }
            "min" if min.is_some() => return Err(twice()),
            "min" => min = Some((name.clone(), positive(&content, "min")?)),
            "in_flight" if in_flight.is_some() => return Err(twice()),
            "in_flight" => in_flight = Some(parse_in_flight(&content)?),
            other => {
                return Err(syn::Error::new(
                    name.span(),
                    format!("`hedge` takes `after`, `in_flight` and `min`, not `{other}`: {USAGE}"),
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
    let after = match (after, min) {
        (after, None) => after,
        (After::Fixed(_), Some((min, _))) => {
            return Err(syn::Error::new(
                min.span(),
                "`min` goes with a percentile, `hedge(after = p95, min = 20ms)`: with a fixed `after` it has nothing to bound",
            ));
        }
        (After::Percentile { percentile, .. }, Some((_, min))) => After::Percentile {
            percentile,
            min: Some(min),
        },
    };
    Ok(Hedge {
        key,
        after,
        in_flight: in_flight.unwrap_or(2),
    })
}

/// `pNN`, a percentile from 50 to 99, when that is what comes next.
fn percentile(input: ParseStream) -> syn::Result<Option<u8>> {
    let fork = input.fork();
    let Ok(word) = fork.call(Ident::parse_any) else {
        return Ok(None);
    };
    let text = word.to_string();
    let Some(digits) = text.strip_prefix('p') else {
        return Ok(None);
    };
    input.call(Ident::parse_any)?;
    match digits.parse::<u8>() {
        Ok(percentile) if (50..=99).contains(&percentile) => Ok(Some(percentile)),
        _ => Err(syn::Error::new(
            word.span(),
            format!(
                "unknown percentile `{text}`: `after` takes a duration such as `50ms`, or a percentile of the function's recent attempt latencies from `p50` to `p99`, such as `p95`"
            ),
        )),
    }
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
