//! Parsing `#[retry(...)]` arguments. Every rule that one argument can check
//! on its own is checked here, with the error on that argument; rules that
//! relate arguments to each other or to the function are in `validate`.

use std::time::Duration;

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{Expr, ExprClosure, Ident, Lit, LitStr, Pat, Path, Token, parenthesized, token};

use crate::duration::Dur;
use crate::hint;

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

/// `max = ...`
pub enum Max {
    Limited(u32),
    Unbounded(Span),
}

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

/// A built-in curve with the parts not given filled in: what
/// `Exponential::new`, `Linear::new` and the others are called with.
pub enum Curve {
    /// `exp` with no part given, as no `backoff` is: `Exponential::DEFAULT`.
    DefaultExp,
    Exp {
        base: Dur,
        factor: f64,
        max: Dur,
    },
    Fixed(Dur),
    Linear {
        base: Dur,
        step: Dur,
        max: Dur,
    },
    Fibonacci {
        base: Dur,
        max: Dur,
    },
    None,
}

/// A curve of the user's: a closure of the retry number, or a value.
pub enum Custom<'a> {
    Closure(&'a ExprClosure),
    Expr(&'a Expr),
}

impl Curve {
    /// The curve `backoff` names (no `backoff`: `exp`), or the custom one
    /// it gives. A base defaults to 1 s, a cap to 30 s, `exp`'s factor to 2
    /// and `linear`'s step to its base.
    pub fn of(backoff: Option<&Backoff>) -> Result<Curve, Custom<'_>> {
        let or = |d: &Option<Dur>, n| {
            d.clone()
                .unwrap_or_else(|| Dur::default_literal(Duration::from_secs(n)))
        };
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
                base: or(base, 1),
                factor: factor.unwrap_or(2.0),
                max: or(max, 30),
            },
            Backoff::Fixed(delay) => Curve::Fixed(delay.clone()),
            Backoff::Linear { base, step, max } => {
                let base = or(base, 1);
                Curve::Linear {
                    step: step.clone().unwrap_or_else(|| base.clone()),
                    base,
                    max: or(max, 30),
                }
            }
            Backoff::Fibonacci { base, max } => Curve::Fibonacci {
                base: or(base, 1),
                max: or(max, 30),
            },
            Backoff::None => Curve::None,
            Backoff::Closure(closure) => return Err(Custom::Closure(closure)),
            Backoff::Expr(expr) => return Err(Custom::Expr(expr)),
        })
    }
}

/// `jitter` / `jitter = ...`
pub enum Jitter {
    None,
    Proportional(f64),
    Full,
    Equal,
    Decorrelated,
}

/// The bare `jitter` flag adds up to a quarter of the delay.
pub const DEFAULT_JITTER_RATIO: f64 = 0.25;

/// `preset = ...`: the three situations backend code meets most.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    Network,
    ExternalApi,
    Internal,
}

/// The hooks, each a function or closure of a `&Context`.
#[derive(Default)]
pub struct Hooks {
    pub before: Option<Expr>,
    pub after: Option<Expr>,
    pub on_retry: Option<Expr>,
    pub on_give_up: Option<Expr>,
}

impl Hooks {
    /// Whether any hook is given.
    pub fn any(&self) -> bool {
        [&self.before, &self.after, &self.on_retry, &self.on_give_up]
            .iter()
            .any(|hook| hook.is_some())
    }
}

/// `breaker = STATIC`, or `breaker = classic(STATIC)`.
pub struct Breaker {
    pub path: Expr,
    /// Whether first attempts fail fast too while it is open.
    pub classic: bool,
}

/// All arguments, each at most once.
#[derive(Default)]
pub struct Args {
    pub on: Option<On>,
    pub max: Option<Max>,
    pub backoff: Option<Backoff>,
    pub jitter: Option<Jitter>,
    pub deadline: Option<Dur>,
    /// With its key, since it is refused on sync functions.
    pub attempt_timeout: Option<(Ident, Dur)>,
    pub honor_retry_after: Option<bool>,
    pub max_retry_after: Option<Dur>,
    pub if_result: Option<Expr>,
    pub hooks: Hooks,
    pub fields: Option<Vec<Ident>>,
    pub preset: Option<Preset>,
    pub clone: Option<Vec<Ident>>,
    pub name: Option<LitStr>,
    pub krate: Option<Path>,
    pub sleep: Option<Expr>,
    pub budget: Option<Expr>,
    pub breaker: Option<Breaker>,
    pub limit: Option<Expr>,
    pub dead_letter: Option<Expr>,
    pub alert_after: Option<u32>,
    pub on_alert: Option<Expr>,
    /// With its key, since it cannot go with a custom backoff.
    pub policy: Option<(Ident, Expr)>,
    pub nested_single: Option<bool>,
    /// `idempotent = false`: only failures that did not take effect are
    /// retried. `true` and `key` retry as usual.
    pub not_idempotent: Option<bool>,
}

impl Parse for Args {
    fn parse(input: ParseStream) -> syn::Result<Args> {
        let mut args = Args::default();
        while !input.is_empty() {
            let key = input
                .call(Ident::parse_any)
                .map_err(|e| syn::Error::new(e.span(), hint::expected_key()))?;
            match key.to_string().as_str() {
                "on" => put(&mut args.on, key, input, |input| {
                    eq(input, "on")?;
                    parse_on(input)
                })?,
                "max" => put(&mut args.max, key, input, |input| {
                    eq(input, "max")?;
                    parse_max(input)
                })?,
                "backoff" => put(&mut args.backoff, key, input, |input| {
                    eq(input, "backoff")?;
                    parse_backoff(input)
                })?,
                "jitter" => put(&mut args.jitter, key, input, parse_jitter)?,
                "deadline" => put(&mut args.deadline, key, input, |input| {
                    eq(input, "deadline")?;
                    positive(input, "deadline")
                })?,
                "attempt_timeout" => {
                    let key_span = key.clone();
                    put(&mut args.attempt_timeout, key, input, |input| {
                        eq(input, "attempt_timeout")?;
                        Ok((key_span, positive(input, "attempt_timeout")?))
                    })?
                }
                "retry_after" => put(&mut args.honor_retry_after, key, input, |input| {
                    eq(input, "retry_after")?;
                    let wrong = |span| {
                        syn::Error::new(
                            span,
                            "`retry_after` is `honor` (wait as long as the server asks, up to `max_retry_after`) or `ignore` (always use the backoff)",
                        )
                    };
                    let value: Ident = input.parse().map_err(|e| wrong(e.span()))?;
                    match value.to_string().as_str() {
                        "honor" | "honour" => Ok(true),
                        "ignore" => Ok(false),
                        _ => Err(wrong(value.span())),
                    }
                })?,
                "max_retry_after" => put(&mut args.max_retry_after, key, input, |input| {
                    eq(input, "max_retry_after")?;
                    let value = Dur::parse(input, "max_retry_after")?;
                    if value.literal_value() == Some(Duration::ZERO) {
                        return Err(syn::Error::new(
                            value.span(),
                            "`max_retry_after` must be longer than zero: at `0s` every delay a server asks for would end the call at once; to always use the backoff instead, write `retry_after = ignore`",
                        ));
                    }
                    Ok(value)
                })?,
                "if_result" => put(&mut args.if_result, key, input, |input| {
                    eq(input, "if_result")?;
                    function(
                        input,
                        "if_result",
                        "a predicate `Fn(&T) -> bool` on the returned value: `if_result = |job: &Option<Job>| job.is_none()` retries while it returns true",
                    )
                })?,
                "before" | "after" | "on_retry" | "on_give_up" => {
                    let name = key.to_string();
                    let slot = match name.as_str() {
                        "before" => &mut args.hooks.before,
                        "after" => &mut args.hooks.after,
                        "on_retry" => &mut args.hooks.on_retry,
                        _ => &mut args.hooks.on_give_up,
                    };
                    put(slot, key, input, |input| {
                        eq(input, &name)?;
                        function(
                            input,
                            &name,
                            "a hook: a function or closure taking `&reattempt::hooks::Context<'_, R>`, where `R` is the return type",
                        )
                    })?
                }
                "fields" => put(&mut args.fields, key, input, |input| {
                    parse_names(
                        input,
                        "`fields` lists the arguments recorded in the call's logs: `fields(user_id, order)`",
                    )
                })?,
                "preset" => put(&mut args.preset, key, input, |input| {
                    eq(input, "preset")?;
                    let allowed = "`preset` is `network`, `external_api` or `internal`";
                    let name: Ident = input
                        .parse()
                        .map_err(|e| syn::Error::new(e.span(), allowed))?;
                    match name.to_string().as_str() {
                        "network" => Ok(Preset::Network),
                        "external_api" => Ok(Preset::ExternalApi),
                        "internal" => Ok(Preset::Internal),
                        other => {
                            let near =
                                hint::closest(other, &["network", "external_api", "internal"])
                                    .map(|n| format!("; did you mean `{n}`?"))
                                    .unwrap_or_default();
                            Err(syn::Error::new(
                                name.span(),
                                format!("unknown preset `{other}`{near}\n{allowed}"),
                            ))
                        }
                    }
                })?,
                "budget" => put(&mut args.budget, key, input, |input| {
                    eq(input, "budget")?;
                    shared(
                        input,
                        "budget",
                        "a `static` `reattempt::RetryBudget`: `budget = BACKEND_RETRIES`",
                        "static BACKEND_RETRIES: RetryBudget = RetryBudget::new(..);` and write `budget = BACKEND_RETRIES`",
                    )
                })?,
                "breaker" => put(&mut args.breaker, key, input, |input| {
                    eq(input, "breaker")?;
                    parse_breaker(input)
                })?,
                "limit" => put(&mut args.limit, key, input, |input| {
                    eq(input, "limit")?;
                    shared(
                        input,
                        "limit",
                        "a `static` `reattempt::ConcurrencyLimit`: `limit = DATABASE`",
                        "static DATABASE: ConcurrencyLimit = ConcurrencyLimit::new(..);` and write `limit = DATABASE`",
                    )
                })?,
                "dead_letter" => put(&mut args.dead_letter, key, input, |input| {
                    eq(input, "dead_letter")?;
                    shared(
                        input,
                        "dead_letter",
                        "a `static` dead-letter sink, such as `static FAILURES: reattempt::dead_letter::JsonLines`",
                        "static FAILURES: JsonLines = JsonLines::new(..);` and write `dead_letter = FAILURES`",
                    )
                })?,
                "alert_after" => put(&mut args.alert_after, key, input, |input| {
                    eq(input, "alert_after")?;
                    let usage = "`alert_after` takes how many times in a row the same failure raises an alert, at least 1: `alert_after = 5`";
                    let lit: Lit = input
                        .parse()
                        .map_err(|e| syn::Error::new(e.span(), usage))?;
                    match &lit {
                        Lit::Int(int) if int.suffix().is_empty() => match int.base10_parse::<u32>()
                        {
                            Ok(0) | Err(_) => Err(syn::Error::new(int.span(), usage)),
                            Ok(n) => Ok(n),
                        },
                        _ => Err(syn::Error::new(lit.span(), usage)),
                    }
                })?,
                "on_alert" => put(&mut args.on_alert, key, input, |input| {
                    eq(input, "on_alert")?;
                    function(
                        input,
                        "on_alert",
                        "a function or non-capturing closure `fn(&reattempt::Alert)`",
                    )
                })?,
                "policy" => {
                    let key_span = key.clone();
                    put(&mut args.policy, key, input, |input| {
                        eq(input, "policy")?;
                        let expr = function(
                            input,
                            "policy",
                            "an expression giving a `reattempt::dynamic::DynamicPolicy`, evaluated on every call",
                        )?;
                        Ok((key_span, expr))
                    })?
                }
                "nested" => put(&mut args.nested_single, key, input, |input| {
                    eq(input, "nested")?;
                    let usage = "`nested` is `allow` (retry inside another retried call too) or `single` (one attempt while an outer retry is active)";
                    let value: Ident = input
                        .parse()
                        .map_err(|e| syn::Error::new(e.span(), usage))?;
                    match value.to_string().as_str() {
                        "allow" => Ok(false),
                        "single" => Ok(true),
                        _ => Err(syn::Error::new(value.span(), usage)),
                    }
                })?,
                "idempotent" => put(&mut args.not_idempotent, key, input, |input| {
                    eq(input, "idempotent")?;
                    let usage = "`idempotent` is `true` (the default: the operation may happen twice), `false` (it must not: only failures that did not take effect are retried) or `key` (it sends the call's idempotency key, so the server deduplicates it)";
                    if input.peek(Ident) {
                        let value: Ident = input.parse()?;
                        return match value.to_string().as_str() {
                            "key" => Ok(false),
                            _ => Err(syn::Error::new(value.span(), usage)),
                        };
                    }
                    let value: syn::LitBool = input
                        .parse()
                        .map_err(|e| syn::Error::new(e.span(), usage))?;
                    Ok(!value.value)
                })?,
                "clone" => put(&mut args.clone, key, input, |input| {
                    parse_names(
                        input,
                        "`clone` lists the arguments each attempt gets a clone of: `clone(request, body)`",
                    )
                })?,
                "name" => put(&mut args.name, key, input, |input| {
                    eq(input, "name")?;
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
                })?,
                "crate" => put(&mut args.krate, key, input, |input| {
                    eq(input, "crate")?;
                    parse_crate(input)
                })?,
                "sleep" => put(&mut args.sleep, key, input, |input| {
                    eq(input, "sleep")?;
                    let usage = "`sleep` takes a function or closure: `Fn(Duration)` on a sync function, `Fn(Duration) -> impl Future<Output = ()>` on an async one";
                    let sleep: Expr = input
                        .parse()
                        .map_err(|e| syn::Error::new(e.span(), usage))?;
                    if let Expr::Lit(lit) = &sleep {
                        return Err(syn::Error::new(lit.span(), usage));
                    }
                    Ok(sleep)
                })?,
                other => return Err(syn::Error::new(key.span(), hint::unknown_key(other))),
            }
            if input.is_empty() {
                break;
            }
            if input.peek(token::Paren) {
                // `jitter = full(0.5)`, `nested = single(2)`: a value that
                // takes no arguments, given some.
                let group: proc_macro2::Group = input.parse()?;
                return Err(syn::Error::new(
                    group.span(),
                    "this value takes no arguments in parentheses; `#[retry]` arguments are separated by `,`",
                ));
            }
            input.parse::<Token![,]>().map_err(|e| {
                syn::Error::new(e.span(), "expected `,` between `#[retry]` arguments")
            })?;
        }
        Ok(args)
    }
}

/// Parses an argument into its slot; a second occurrence is an error on
/// that occurrence's key. An `=` with nothing after it, or a name with no
/// value (`#[retry(max)]`), is the mistake its error points at: at the end
/// of the attribute, the parser's own error would point at the whole
/// attribute.
fn put<T>(
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

fn eq(input: ParseStream, key: &str) -> syn::Result<()> {
    input
        .parse::<Token![=]>()
        .map(drop)
        .map_err(|e| syn::Error::new(e.span(), format!("expected `=` after `{key}`")))
}

/// Whether the next tokens end the current argument.
fn at_end(input: ParseStream) -> bool {
    input.is_empty() || input.peek(Token![,])
}

fn parse_on(input: ParseStream) -> syn::Result<On> {
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

fn parse_max(input: ParseStream) -> syn::Result<Max> {
    if input.peek(Ident) {
        let ident: Ident = input.parse()?;
        if ident == "unbounded" {
            return Ok(Max::Unbounded(ident.span()));
        }
        return Err(syn::Error::new(
            ident.span(),
            "`max` takes a number of attempts (`max = 5`) or `unbounded`",
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
            "`max` takes a number of attempts (`max = 5`) or `unbounded`",
        )
    })?;
    let Lit::Int(int) = &lit else {
        return Err(syn::Error::new(
            lit.span(),
            "`max` takes a whole number of attempts, such as `max = 5`, or `unbounded`",
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

const BACKOFF_KINDS: &[&str] = &["exp", "fixed", "linear", "fibonacci", "none"];
const BACKOFF_ALLOWED: &str = "`exp`, `exp(base = 1s, factor = 2, max = 30s)`, `fixed(DUR)`, `linear(base = DUR, step = DUR, max = DUR)`, `fibonacci(base = DUR, max = DUR)`, `none`, or an expression implementing `reattempt::backoff::Backoff`";

fn parse_backoff(input: ParseStream) -> syn::Result<Backoff> {
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

fn kind_usage(kind: &str) -> &'static str {
    match kind {
        "exp" => "`exp(base = 1s, factor = 2, max = 30s)`, each part optional",
        "fixed" => "`fixed(200ms)`",
        "linear" => "`linear(base = 100ms, step = 100ms, max = 5s)`, each part optional",
        _ => "`fibonacci(base = 100ms, max = 10s)`, each part optional",
    }
}

fn backoff_kind(kind: &Ident, content: ParseStream) -> syn::Result<Backoff> {
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

fn parse_factor(input: ParseStream) -> syn::Result<f64> {
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

const JITTER_ALLOWED: &str = "`jitter` (up to a quarter of the delay added), `jitter = none`, `jitter = proportional(0.25)`, `jitter = full`, `jitter = equal` or `jitter = decorrelated`";

fn parse_jitter(input: ParseStream) -> syn::Result<Jitter> {
    if at_end(input) {
        return Ok(Jitter::Proportional(DEFAULT_JITTER_RATIO));
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

fn parse_names(input: ParseStream, usage: &str) -> syn::Result<Vec<Ident>> {
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
fn positive(input: ParseStream, what: &str) -> syn::Result<Dur> {
    let value = Dur::parse(input, what)?;
    if value.literal_value() == Some(Duration::ZERO) {
        return Err(syn::Error::new(
            value.span(),
            format!("`{what}` must be longer than zero"),
        ));
    }
    Ok(value)
}

const BREAKER_USAGE: &str = "a `static` `reattempt::RetryBreaker`: `breaker = PAYMENTS`, or `breaker = classic(PAYMENTS)` to fail first attempts fast too while it is open";
const BREAKER_DECLARE: &str = "static PAYMENTS: RetryBreaker = RetryBreaker::new(..);` and write `breaker = PAYMENTS`, or `breaker = classic(PAYMENTS)` to fail first attempts fast too";

/// `STATIC` or `classic(STATIC)`.
fn parse_breaker(input: ParseStream) -> syn::Result<Breaker> {
    let fork = input.fork();
    let is_classic = fork
        .call(Ident::parse_any)
        .is_ok_and(|mode| mode == "classic")
        && fork.peek(token::Paren);
    if is_classic {
        let classic = input.call(Ident::parse_any)?;
        let inner;
        parenthesized!(inner in input);
        let usage = "`classic(..)` takes the breaker's `static`: `breaker = classic(PAYMENTS)`";
        if inner.is_empty() {
            return Err(syn::Error::new(classic.span(), usage));
        }
        let path = function(&inner, "classic(..)", "the breaker's `static`")?;
        if !inner.is_empty() {
            return Err(inner.error(usage));
        }
        let path = must_be_static(path, "breaker", BREAKER_DECLARE)?;
        return Ok(Breaker {
            path,
            classic: true,
        });
    }
    let path = shared(input, "breaker", BREAKER_USAGE, BREAKER_DECLARE)?;
    Ok(Breaker {
        path,
        classic: false,
    })
}

/// A shared piece (budget, limit, dead-letter sink): shared by every call,
/// so it must outlive them all. A value built in the attribute would be a
/// temporary of each call; that is an error saying to declare a `static`.
fn shared(input: ParseStream, what: &str, usage: &str, declare: &str) -> syn::Result<Expr> {
    let expr = function(input, what, usage)?;
    must_be_static(expr, what, declare)
}

/// A shared argument names its `static`.
fn must_be_static(expr: Expr, what: &str, declare: &str) -> syn::Result<Expr> {
    if matches!(expr, Expr::Call(_) | Expr::Struct(_)) {
        return Err(syn::Error::new_spanned(
            &expr,
            format!(
                "`{what}` is shared by every call, so it must be a `static`, not a value built here: declare `{declare}"
            ),
        ));
    }
    Ok(expr)
}

/// A function or closure argument; a literal, or no expression, is an
/// error saying what fits.
fn function(input: ParseStream, what: &str, usage: &str) -> syn::Result<Expr> {
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

fn parse_crate(input: ParseStream) -> syn::Result<Path> {
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
