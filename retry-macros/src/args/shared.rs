//! The arguments that name a `static` every call shares: `budget`,
//! `breaker`, `throttle`, `limit`, `dead_letter`.

use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Expr, Ident, parenthesized, token};

use super::syntax::function;

/// `breaker = STATIC`, or `breaker = classic(STATIC)`.
pub struct Breaker {
    pub path: Expr,
    /// Whether first attempts fail fast too while it is open.
    pub classic: bool,
}

const BREAKER_USAGE: &str = "a `static` `reattempt::RetryBreaker`: `breaker = PAYMENTS`, or `breaker = classic(PAYMENTS)` to fail first attempts fast too while it is open";
const BREAKER_DECLARE: &str = "static PAYMENTS: RetryBreaker = RetryBreaker::new(..);` and write `breaker = PAYMENTS`, or `breaker = classic(PAYMENTS)` to fail first attempts fast too";

/// `STATIC` or `classic(STATIC)`.
pub(super) fn breaker(input: ParseStream) -> syn::Result<Breaker> {
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

pub(super) fn budget(input: ParseStream) -> syn::Result<Expr> {
    shared(
        input,
        "budget",
        "a `static` `reattempt::RetryBudget`: `budget = BACKEND_RETRIES`",
        "static BACKEND_RETRIES: RetryBudget = RetryBudget::new(..);` and write `budget = BACKEND_RETRIES`",
    )
}

pub(super) fn throttle(input: ParseStream) -> syn::Result<Expr> {
    shared(
        input,
        "throttle",
        "a `static` `reattempt::AdaptiveThrottle`: `throttle = PRICES`",
        "static PRICES: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(120));` and write `throttle = PRICES`",
    )
}

pub(super) fn limit(input: ParseStream) -> syn::Result<Expr> {
    shared(
        input,
        "limit",
        "a `static` `reattempt::ConcurrencyLimit`: `limit = DATABASE`",
        "static DATABASE: ConcurrencyLimit = ConcurrencyLimit::new(..);` and write `limit = DATABASE`",
    )
}

pub(super) fn dead_letter(input: ParseStream) -> syn::Result<Expr> {
    shared(
        input,
        "dead_letter",
        "a `static` dead-letter sink, such as `static FAILURES: reattempt::dead_letter::JsonLines`",
        "static FAILURES: JsonLines = JsonLines::new(..);` and write `dead_letter = FAILURES`",
    )
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
