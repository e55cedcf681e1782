//! `on = ...`: which failures are retried.

use syn::parse::ParseStream;
use syn::spanned::Spanned;
use syn::{Expr, ExprClosure, Ident, Pat, parenthesized, token};

use super::syntax::at_end;

/// `on = ...`
pub enum On {
    /// `on = transient`: the error type's own classification.
    Transient,
    /// `on = matches(Pattern)`.
    Matches(Box<Pat>),
    /// `on = |e| ...`, called where the error's type is known.
    Closure(Box<ExprClosure>),
    /// Any other classifier expression, evaluated once per call.
    Expr(Box<Expr>),
}

pub(super) fn parse_on(input: ParseStream) -> syn::Result<On> {
    if input.peek(Ident) {
        let fork = input.fork();
        let ident: Ident = fork.parse()?;
        if ident == "transient" && at_end(&fork) {
            input.parse::<Ident>()?;
            return Ok(On::Transient);
        }
        if ident == "matches" && fork.peek(token::Paren) {
            input.parse::<Ident>()?;
            let content;
            let parens = parenthesized!(content in input);
            let expected = "`matches(..)` takes a pattern of the error type: `matches(MyError::Timeout | MyError::Io(_))`";
            if content.is_empty() {
                return Err(syn::Error::new(parens.span.join(), expected));
            }
            let pat = Pat::parse_multi_with_leading_vert(&content)
                .map_err(|e| syn::Error::new(e.span(), expected))?;
            if !content.is_empty() {
                return Err(content.error("expected one pattern: `matches(A | B(_))`"));
            }
            return Ok(On::Matches(Box::new(pat)));
        }
    }
    let usage = "`on` takes a classifier: a closure `|e: &E| ...` returning `bool` or `reattempt::Class`, a function, a `reattempt::Classify` value, `matches(Pattern)` or `transient`";
    let expr: Expr = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), usage))?;
    match expr {
        Expr::Closure(closure) => Ok(On::Closure(Box::new(closure))),
        Expr::Lit(lit) => Err(syn::Error::new(lit.span(), usage)),
        other => Ok(On::Expr(Box::new(other))),
    }
}
