//! The arguments that take a function, a closure or an expression of the
//! user's, which the expansion calls: `if_result`, the hooks, `fallback`,
//! `on_alert`, `policy` and `sleep`.

use syn::parse::ParseStream;
use syn::spanned::Spanned;
use syn::{Expr, Token, token};

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

/// `fallback = FN`, or `fallback = async FN` for an `async fn`.
pub struct Fallback {
    pub function: Expr,
    /// Whether its answer is awaited: an `async fn`'s.
    pub awaited: bool,
}

pub(super) fn fallback(input: ParseStream) -> syn::Result<Fallback> {
    // `async` before a path; `async { .. }` and `async move` are
    // expressions, left to the function's own parse.
    let awaited =
        input.peek(Token![async]) && !input.peek2(token::Brace) && !input.peek2(Token![move]);
    if awaited {
        input.parse::<Token![async]>()?;
    }
    let function = function(
        input,
        "fallback",
        "a function of the last error that returns the function's return type, which may take the function's arguments after the error, by reference; `async FN` for an `async fn` on an async function; or a closure of the error",
    )?;
    Ok(Fallback { function, awaited })
}

pub(super) fn on_alert(input: ParseStream) -> syn::Result<Expr> {
    function(
        input,
        "on_alert",
        "a function or non-capturing closure `fn(&reattempt::Alert)`",
    )
}

pub(super) fn policy(input: ParseStream) -> syn::Result<Expr> {
    // Text is what a user who read the text form tries first: say how it
    // becomes a policy.
    if input.peek(syn::LitStr) {
        let text: syn::LitStr = input.parse()?;
        return Err(syn::Error::new(
            text.span(),
            "`policy` takes a `DynamicPolicy` or a `PolicyCell`, evaluated on every call, not text\nfor a fixed policy, write its settings as the attribute's arguments: `#[retry(max = 3)]`; text read at run time becomes a policy with `.parse()`, once, kept in a `static` `PolicyCell` named here: `POLICY.set(text.parse()?)` and `policy = POLICY`",
        ));
    }
    function(
        input,
        "policy",
        "an expression giving a `reattempt::dynamic::DynamicPolicy` or a `PolicyCell`, evaluated on every call",
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
