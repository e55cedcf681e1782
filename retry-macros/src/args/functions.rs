//! The arguments that take a function, a closure or an expression of the
//! user's, which the expansion calls: `if_result`, the hooks, `fallback`,
//! `on_alert`, `policy` and `sleep`.

use syn::Expr;
use syn::parse::ParseStream;
use syn::spanned::Spanned;

use super::syntax::function;

pub(super) fn if_result(input: ParseStream) -> syn::Result<Expr> {
    function(
        input,
        "if_result",
        "a predicate `Fn(&T) -> bool` on the returned value: `if_result = |job: &Option<Job>| job.is_none()` retries while it returns true",
    )
}

/// `before`, `after`, `on_retry` or `on_give_up`.
pub(super) fn hook(input: ParseStream, name: &str) -> syn::Result<Expr> {
    function(
        input,
        name,
        "a hook: a function or closure taking `&reattempt::hooks::Context<'_, R>`, where `R` is the return type",
    )
}

pub(super) fn fallback(input: ParseStream) -> syn::Result<Expr> {
    function(
        input,
        "fallback",
        "a function of the last error that returns the function's return type, which may take the function's arguments after the error, by reference; or a closure of the error",
    )
}

pub(super) fn on_alert(input: ParseStream) -> syn::Result<Expr> {
    function(
        input,
        "on_alert",
        "a function or non-capturing closure `fn(&reattempt::Alert)`",
    )
}

pub(super) fn policy(input: ParseStream) -> syn::Result<Expr> {
    function(
        input,
        "policy",
        "an expression giving a `reattempt::dynamic::DynamicPolicy`, evaluated on every call",
    )
}

pub(super) fn sleep(input: ParseStream) -> syn::Result<Expr> {
    let usage = "`sleep` takes a function or closure: `Fn(Duration)` on a sync function, `Fn(Duration) -> impl Future<Output = ()>` on an async one";
    let sleep: Expr = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), usage))?;
    if let Expr::Lit(lit) = &sleep {
        return Err(syn::Error::new(lit.span(), usage));
    }
    Ok(sleep)
}
