//! `jitter` / `jitter = ...`: how the waits are randomised.

use syn::parse::ParseStream;
use syn::{Ident, Lit, parenthesized, token};

use super::syntax::{at_end, eq};
use crate::hint;

/// `jitter` / `jitter = ...`
pub enum Jitter {
    None,
    /// The bare `jitter` flag: the core's `Jitter::DEFAULT`.
    Default,
    Proportional(f64),
    Full,
    Equal,
    Decorrelated,
}

const JITTER_ALLOWED: &str = "`jitter` (up to a quarter of the delay added), `jitter = none`, `jitter = proportional(0.25)`, `jitter = full`, `jitter = equal` or `jitter = decorrelated`";

pub(super) fn parse_jitter(input: ParseStream) -> syn::Result<Jitter> {
    if at_end(input) {
        return Ok(Jitter::Default);
    }
    eq(input, "jitter")?;
    let ident: Ident = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), format!("jitter is one of {JITTER_ALLOWED}")))?;
    let name = ident.to_string();
    match name.as_str() {
        "none" => Ok(Jitter::None),
        "full" => Ok(Jitter::Full),
        "equal" => Ok(Jitter::Equal),
        "decorrelated" => Ok(Jitter::Decorrelated),
        "proportional" => {
            if !input.peek(token::Paren) {
                return Err(syn::Error::new(
                    ident.span(),
                    "`proportional` needs its ratio: `jitter = proportional(0.25)`",
                ));
            }
            let content;
            parenthesized!(content in input);
            let lit: Lit = content.parse()?;
            let ratio: Option<f64> = match &lit {
                Lit::Float(f) if f.suffix().is_empty() => f.base10_parse().ok(),
                Lit::Int(i) if i.suffix().is_empty() => i.base10_parse().ok(),
                _ => None,
            };
            match ratio {
                Some(r) if (0.0..=1.0).contains(&r) && content.is_empty() => {
                    Ok(Jitter::Proportional(r))
                }
                _ => Err(syn::Error::new(
                    lit.span(),
                    "`proportional` takes a ratio from 0 to 1: `proportional(0.25)` adds up to a quarter of the delay",
                )),
            }
        }
        _ => {
            let near = hint::closest(
                &name,
                &["none", "proportional", "full", "equal", "decorrelated"],
            );
            let near = near
                .map(|n| format!("; did you mean `{n}`?"))
                .unwrap_or_default();
            Err(syn::Error::new(
                ident.span(),
                format!("unknown jitter `{name}`{near}\njitter is one of {JITTER_ALLOWED}"),
            ))
        }
    }
}
