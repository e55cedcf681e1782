//! `backoff = ...`: the curve of the waits between attempts, and the
//! defaults of the parts a built-in curve is given without.

use proc_macro2::Span;
use syn::parse::ParseStream;
use syn::spanned::Spanned;
use syn::{Expr, ExprClosure, Ident, Lit, Token, parenthesized, token};

use super::syntax::{at_end, eq, put};
use crate::duration::Dur;
use crate::hint;

/// `backoff = ...`
pub enum Backoff {
    Exp {
        base: Option<Dur>,
        factor: Option<f64>,
        max: Option<Dur>,
    },
    Fixed(Dur),
    Linear {
        base: Option<Dur>,
        step: Option<Dur>,
        max: Option<Dur>,
    },
    Fibonacci {
        base: Option<Dur>,
        max: Option<Dur>,
    },
    None,
    Closure(Box<ExprClosure>),
    Expr(Box<Expr>),
}

/// A built-in curve, with the parts it was given: a part not given takes
/// its default in the core (`backoff::DEFAULT_BASE` and the others), which
/// the expansion names rather than copies.
pub enum Curve<'a> {
    /// `exp` with no part given, as no `backoff` is: `Exponential::DEFAULT`.
    DefaultExp,
    Exp {
        base: Option<&'a Dur>,
        factor: Option<f64>,
        max: Option<&'a Dur>,
    },
    Fixed(&'a Dur),
    Linear {
        base: Option<&'a Dur>,
        step: Option<&'a Dur>,
        max: Option<&'a Dur>,
    },
    Fibonacci {
        base: Option<&'a Dur>,
        max: Option<&'a Dur>,
    },
    None,
}

/// A curve of the user's: a closure of the retry number, or a value.
pub enum Custom<'a> {
    Closure(&'a ExprClosure),
    Expr(&'a Expr),
}

impl Curve<'_> {
    /// The curve `backoff` names (no `backoff`: `exp`), or the custom one
    /// it gives.
    pub fn of(backoff: Option<&Backoff>) -> Result<Curve<'_>, Custom<'_>> {
        let Some(backoff) = backoff else {
            return Ok(Curve::DefaultExp);
        };
        Ok(match backoff {
            Backoff::Exp {
                base: None,
                factor: None,
                max: None,
            } => Curve::DefaultExp,
            Backoff::Exp { base, factor, max } => Curve::Exp {
                base: base.as_ref(),
                factor: *factor,
                max: max.as_ref(),
            },
            Backoff::Fixed(delay) => Curve::Fixed(delay),
            Backoff::Linear { base, step, max } => Curve::Linear {
                base: base.as_ref(),
                step: step.as_ref(),
                max: max.as_ref(),
            },
            Backoff::Fibonacci { base, max } => Curve::Fibonacci {
                base: base.as_ref(),
                max: max.as_ref(),
            },
            Backoff::None => Curve::None,
            Backoff::Closure(closure) => return Err(Custom::Closure(closure)),
            Backoff::Expr(expr) => return Err(Custom::Expr(expr)),
        })
    }

    /// Whether every delay the curve was given is a literal, so that it
    /// can be built in a constant.
    pub fn is_literal(&self) -> bool {
        let literal =
            |ds: &[Option<&Dur>]| ds.iter().flatten().all(|d| d.literal_value().is_some());
        match self {
            Curve::DefaultExp | Curve::None => true,
            Curve::Exp { base, max, .. } | Curve::Fibonacci { base, max } => {
                literal(&[*base, *max])
            }
            Curve::Fixed(delay) => literal(&[Some(*delay)]),
            Curve::Linear { base, step, max } => literal(&[*base, *step, *max]),
        }
    }
}

const BACKOFF_KINDS: &[&str] = &["exp", "fixed", "linear", "fibonacci", "none"];
const BACKOFF_ALLOWED: &str = "`exp`, `exp(base = 1s, factor = 2, max = 30s)`, `fixed(DUR)`, `linear(base = DUR, step = DUR, max = DUR)`, `fibonacci(base = DUR, max = DUR)`, `none`, or an expression implementing `reattempt::backoff::Backoff`";

pub(super) fn parse_backoff(input: ParseStream) -> syn::Result<Backoff> {
    if input.peek(Ident) && !input.peek2(Token![::]) && !input.peek2(token::Dot) {
        let fork = input.fork();
        let ident: Ident = fork.parse()?;
        let name = ident.to_string();
        let called = fork.peek(token::Paren);
        if called || at_end(&fork) {
            match (name.as_str(), called) {
                ("exp", false) => {
                    input.parse::<Ident>()?;
                    return Ok(Backoff::Exp {
                        base: None,
                        factor: None,
                        max: None,
                    });
                }
                ("none", false) => {
                    input.parse::<Ident>()?;
                    return Ok(Backoff::None);
                }
                ("none", true) => {
                    return Err(syn::Error::new(
                        ident.span(),
                        "`none` takes no delays: `backoff = none` retries at once; for a wait, `backoff = fixed(200ms)`",
                    ));
                }
                ("exp" | "fixed" | "linear" | "fibonacci", true) => {
                    input.parse::<Ident>()?;
                    let content;
                    parenthesized!(content in input);
                    return backoff_kind(&ident, &content);
                }
                ("fixed" | "linear" | "fibonacci", false) => {
                    return Err(syn::Error::new(
                        ident.span(),
                        format!("`{name}` needs its delays: {}", kind_usage(&name)),
                    ));
                }
                _ => {
                    let alias = match name.as_str() {
                        "exponential" | "expo" | "exponent" => Some("exp"),
                        "constant" | "const" | "fix" => Some("fixed"),
                        "fib" | "fibo" => Some("fibonacci"),
                        "zero" | "immediate" | "no" => Some("none"),
                        _ => hint::closest(&name, BACKOFF_KINDS),
                    };
                    if let Some(kind) = alias {
                        return Err(syn::Error::new(
                            ident.span(),
                            format!(
                                "unknown backoff `{name}`; did you mean `{kind}`?\nbackoff is one of {BACKOFF_ALLOWED}"
                            ),
                        ));
                    }
                }
            }
        }
    }
    let allowed = || format!("`backoff` is one of {BACKOFF_ALLOWED}");
    let expr: Expr = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), allowed()))?;
    match expr {
        Expr::Closure(closure) => Ok(Backoff::Closure(Box::new(closure))),
        Expr::Lit(lit) => Err(syn::Error::new(lit.span(), allowed())),
        other => Ok(Backoff::Expr(Box::new(other))),
    }
}

pub(super) fn kind_usage(kind: &str) -> &'static str {
    match kind {
        "exp" => "`exp(base = 1s, factor = 2, max = 30s)`, each part optional",
        "fixed" => "`fixed(200ms)`",
        "linear" => "`linear(base = 100ms, step = 100ms, max = 5s)`, each part optional",
        _ => "`fibonacci(base = 100ms, max = 10s)`, each part optional",
    }
}

pub(super) fn backoff_kind(kind: &Ident, content: ParseStream) -> syn::Result<Backoff> {
    let name = kind.to_string();
    if name == "fixed" {
        if content.is_empty() {
            return Err(syn::Error::new(
                kind.span(),
                format!("`fixed` needs a delay: {}", kind_usage("fixed")),
            ));
        }
        let delay = Dur::parse(content, "fixed")?;
        if !content.is_empty() {
            return Err(content.error(format!("`fixed` takes one delay: {}", kind_usage("fixed"))));
        }
        return Ok(Backoff::Fixed(delay));
    }
    let allowed: &[&str] = match name.as_str() {
        "exp" => &["base", "factor", "max"],
        "linear" => &["base", "step", "max"],
        _ => &["base", "max"],
    };
    let mut base: Option<Dur> = None;
    let mut step: Option<Dur> = None;
    let mut max: Option<Dur> = None;
    let mut factor: Option<f64> = None;
    while !content.is_empty() {
        let key: Ident = content.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                format!("`{name}` takes its parts by name: {}", kind_usage(&name)),
            )
        })?;
        let key_name = key.to_string();
        if !allowed.contains(&key_name.as_str()) {
            let list = allowed
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(syn::Error::new(
                key.span(),
                format!(
                    "`{name}` takes {list}, not `{key_name}`: {}",
                    kind_usage(&name)
                ),
            ));
        }
        let qualified = format!("{name}({key_name})");
        match key_name.as_str() {
            "base" => put(&mut base, key, content, |input| {
                eq(input, &qualified)?;
                Dur::parse(input, &qualified)
            })?,
            "step" => put(&mut step, key, content, |input| {
                eq(input, &qualified)?;
                Dur::parse(input, &qualified)
            })?,
            "max" => put(&mut max, key, content, |input| {
                eq(input, &qualified)?;
                Dur::parse(input, &qualified)
            })?,
            _ => put(&mut factor, key, content, |input| {
                eq(input, &qualified)?;
                parse_factor(input)
            })?,
        }
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>()?;
    }
    if let (Some(base), Some(max)) = (&base, &max)
        && let (Some(low), Some(high)) = (base.literal_value(), max.literal_value())
        && high < low
    {
        return Err(syn::Error::new(
            max.span(),
            format!("`{name}(max)` is below its `base`: the cap must be at least the first delay"),
        ));
    }
    Ok(match name.as_str() {
        "exp" => Backoff::Exp { base, factor, max },
        "linear" => Backoff::Linear { base, step, max },
        _ => Backoff::Fibonacci { base, max },
    })
}

pub(super) fn parse_factor(input: ParseStream) -> syn::Result<f64> {
    let wrong = |span: Span| {
        syn::Error::new(
            span,
            "`exp(factor)` takes a number of at least 1, such as `factor = 2` or `factor = 1.5`",
        )
    };
    let lit: Lit = input.parse().map_err(|e| wrong(e.span()))?;
    let value: f64 = match &lit {
        Lit::Int(int) if int.suffix().is_empty() => {
            int.base10_parse().map_err(|_| wrong(int.span()))?
        }
        Lit::Float(float) if float.suffix().is_empty() => {
            float.base10_parse().map_err(|_| wrong(float.span()))?
        }
        _ => return Err(wrong(lit.span())),
    };
    if !value.is_finite() {
        return Err(syn::Error::new(
            lit.span(),
            "`exp(factor)` must be a finite number of at least 1: this one is too large for an `f64`",
        ));
    }
    if value < 1.0 {
        return Err(syn::Error::new(
            lit.span(),
            "`exp(factor)` must be at least 1: a factor below 1 would shrink the delays",
        ));
    }
    Ok(value)
}
