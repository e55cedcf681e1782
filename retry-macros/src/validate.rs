//! The rules that relate arguments to each other and to the function; each
//! error points at the argument that breaks it.

use syn::{FnArg, Ident, Pat, Type};

use crate::args::{Args, Backoff, Max};
use crate::item::{Function, Kind};

/// Every broken rule, combined into one error.
pub fn validate(args: &Args, function: &Function) -> syn::Result<()> {
    let mut errors: Option<syn::Error> = None;
    let mut fail = |error: syn::Error| match &mut errors {
        Some(all) => all.combine(error),
        None => errors = Some(error),
    };
    if let Some(Max::Unbounded(span)) = args.max
        && args.deadline.is_none()
    {
        fail(syn::Error::new(
            span,
            "`max = unbounded` needs a `deadline`: without one a call that keeps failing would retry forever\nadd `deadline = 30s` (or another duration), or give `max` a number",
        ));
    }
    if let Some((key, _)) = &args.attempt_timeout
        && matches!(function.kind, Kind::Sync)
    {
        fail(syn::Error::new(
            key.span(),
            "`attempt_timeout` works on async functions only: a sync body cannot be interrupted while it runs\nbound the whole call with `deadline = DUR` instead",
        ));
    }
    if let Some((key, _)) = &args.policy
        && matches!(args.backoff, Some(Backoff::Closure(_) | Backoff::Expr(_)))
    {
        fail(syn::Error::new(
            key.span(),
            "`policy` cannot be combined with a custom `backoff` expression: a dynamic policy chooses among the built-in curves\nuse `backoff = exp(..)`, `fixed(..)`, `linear(..)`, `fibonacci(..)` or `none`",
        ));
    }
    for name in args.clone.iter().flatten() {
        if let Err(error) = check_argument(name, function, "clone", true) {
            fail(error);
        }
    }
    for name in args.fields.iter().flatten() {
        if let Err(error) = check_argument(name, function, "fields", false) {
            fail(error);
        }
    }
    match errors {
        Some(errors) => Err(errors),
        None => Ok(()),
    }
}

/// `clone(x)` and `fields(x)` must name an argument; `clone` a by-value one.
fn check_argument(
    name: &Ident,
    function: &Function,
    what: &str,
    by_value: bool,
) -> syn::Result<()> {
    let sig = &function.sig;
    if name == "self" {
        let message = if by_value {
            "`clone(self)` is not supported: take `&self` (or `self: Arc<Self>` used by reference) so each attempt can borrow it"
        } else {
            "`fields(self)` is not supported: name the arguments to record"
        };
        return Err(syn::Error::new(name.span(), message));
    }
    let mut names = Vec::new();
    for input in &sig.inputs {
        let FnArg::Typed(typed) = input else { continue };
        let Pat::Ident(pat) = &*typed.pat else {
            continue;
        };
        if pat.ident == *name {
            if by_value && let Type::Reference(_) = &*typed.ty {
                return Err(syn::Error::new(
                    name.span(),
                    format!(
                        "`{name}` is a reference: each attempt reborrows it, so it needs no `clone`"
                    ),
                ));
            }
            return Ok(());
        }
        names.push(format!("`{}`", pat.ident));
    }
    let known = if names.is_empty() {
        "it takes no named arguments".to_owned()
    } else {
        format!("its arguments are {}", names.join(", "))
    };
    Err(syn::Error::new(
        name.span(),
        format!(
            "`{what}({name})` names no argument of `{}`; {known}",
            sig.ident
        ),
    ))
}
