//! The rules that relate arguments to each other and to the function; each
//! error points at the argument that breaks it.

use syn::spanned::Spanned;
use syn::{AttrStyle, FnArg, Ident, Pat, Type};

use crate::args::{Args, Backoff, Idempotent, Max};
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
            "`max = unbounded` needs a `deadline`: without one a call that keeps failing would retry forever\nadd `deadline = 30s` (or another duration), or give `max` a number; to retry for ever on purpose, write `max = forever`",
        ));
    }
    if let (Some(Max::Forever(span)), Some(_)) = (&args.max, &args.deadline) {
        fail(syn::Error::new(
            *span,
            "`max = forever` retries with no limit at all, so it takes no `deadline`\nto retry without a count limit until a deadline, write `max = unbounded`",
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
    if let Some(fallback) = &args.fallback
        && fallback.awaited
    {
        if matches!(function.kind, Kind::Sync) {
            fail(syn::Error::new_spanned(
                &fallback.function,
                "`fallback = async ..` awaits an `async fn`, which a sync function cannot do\ngive it a plain function: `fallback = cached_price`",
            ));
        } else if matches!(fallback.function, syn::Expr::Closure(_)) {
            fail(syn::Error::new_spanned(
                &fallback.function,
                "`fallback = async ..` names an `async fn`; a closure answers at once\nwrite the async part as an `async fn` and name it: `fallback = async from_replica`",
            ));
        }
    }
    if let Some((key, _)) = &args.policy
        && matches!(args.backoff, Some(Backoff::Closure(_) | Backoff::Expr(_)))
    {
        fail(syn::Error::new(
            key.span(),
            "`policy` cannot be combined with a custom `backoff` expression: a dynamic policy chooses among the built-in curves\nuse `backoff = exp(..)`, `fixed(..)`, `linear(..)`, `fibonacci(..)` or `none`",
        ));
    }
    // Another `#[retry]` below this one would be retried by it: attempts
    // multiplied, under one name in the logs and statistics.
    for attr in &function.attrs {
        if matches!(attr.style, AttrStyle::Outer) && is_retry(attr.path(), args) {
            fail(syn::Error::new_spanned(
                attr,
                "`#[retry]` is given twice: the first would retry the second, multiplying the attempts, under one name in the logs and statistics\nput every argument in one `#[retry(..)]`, or retry the inner part in a function of its own",
            ));
        }
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
    hedge_rules(args, function, &mut fail);
    match errors {
        Some(errors) => Err(errors),
        None => Ok(()),
    }
}

/// `hedge`: an async function whose attempts can run at once, sharing
/// its arguments, and which may take effect more than once.
fn hedge_rules(args: &Args, function: &Function, fail: &mut impl FnMut(syn::Error)) {
    let Some(hedge) = &args.hedge else {
        return;
    };
    let at = hedge.span();
    if matches!(function.kind, Kind::Sync) {
        fail(syn::Error::new(
            at,
            "`hedge` works on async functions only: it runs a second attempt while the first is still running, and a sync body cannot run beside itself\nmake the function `async`, or bound a slow call with `deadline = DUR`",
        ));
    }
    if args.idempotent == Some(Idempotent::No) {
        fail(syn::Error::new(
            at,
            "`hedge` starts another attempt while the first may still take effect, so it cannot go with `idempotent = false`\nwith `idempotent = key`, every attempt sends the call's one idempotency key, so the server applies the operation once",
        ));
    }
    // Attempts in flight together share the arguments: none may be
    // changed by one of them.
    for input in &function.sig.inputs {
        match input {
            FnArg::Receiver(receiver)
                if receiver.reference.is_some() && receiver.mutability.is_some() =>
            {
                fail(syn::Error::new_spanned(
                    receiver,
                    "a hedged call runs attempts at once, and they share `self`, so it cannot be `&mut self`: take `&self` (with a `Mutex` or an atomic inside for what attempts change)",
                ));
            }
            FnArg::Receiver(receiver) if receiver.mutability.is_some() => {
                fail(syn::Error::new_spanned(
                    receiver,
                    "a hedged call runs attempts at once, and they share `self`, so it cannot be `mut self`: take `self`, and write `let mut this = self.clone();` in the body for an attempt's own copy",
                ));
            }
            FnArg::Typed(typed) => {
                if let Type::Reference(reference) = &*typed.ty
                    && reference.mutability.is_some()
                {
                    fail(syn::Error::new_spanned(
                        reference,
                        "a hedged call runs attempts at once, and they share the arguments, so none can be `&mut`: take `&` (with a `Mutex` or an atomic inside for what attempts change)",
                    ));
                }
                if let Pat::Ident(pat) = &*typed.pat
                    && let Some(mutability) = pat.mutability
                {
                    let name = &pat.ident;
                    fail(syn::Error::new(
                        mutability.span(),
                        format!(
                            "a hedged call runs attempts at once, and they share the arguments, so none can be `mut`: drop `mut`, and write `let mut {name} = {name}.clone();` in the body for an attempt's own copy"
                        ),
                    ));
                }
            }
            FnArg::Receiver(_) => {}
        }
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

/// Whether an attribute's path names this attribute: `retry`, or `retry`
/// under this crate's name (`reattempt`, or the one `crate = ..` gives).
/// Another crate's `retry` attribute, written with its path, is not.
fn is_retry(path: &syn::Path, args: &Args) -> bool {
    let segments: Vec<&Ident> = path.segments.iter().map(|segment| &segment.ident).collect();
    match segments.as_slice() {
        [name] => *name == "retry",
        [.., krate, name] => {
            let ours = match args.krate.as_ref().and_then(|krate| krate.segments.last()) {
                Some(ours) => *krate == &ours.ident,
                None => *krate == "reattempt",
            };
            *name == "retry" && ours
        }
        [] => false,
    }
}

#[cfg(test)]
mod tests {
    use super::is_retry;
    use crate::args::Args;

    fn names_this_attribute(path: &str, args: &str) -> bool {
        let args: Args = syn::parse_str(args).expect("arguments parse");
        is_retry(&syn::parse_str(path).expect("a path"), &args)
    }

    #[test]
    fn another_retry_is_this_attribute_by_its_name_or_under_this_crate() {
        assert!(names_this_attribute("retry", ""));
        assert!(names_this_attribute("reattempt::retry", ""));
        assert!(names_this_attribute("::reattempt::retry", ""));
        assert!(names_this_attribute(
            "my_retries::retry",
            "crate = my_retries"
        ));
        assert!(!names_this_attribute(
            "reattempt::retry",
            "crate = my_retries"
        ));
        assert!(!names_this_attribute("flaky::retry", ""));
        assert!(!names_this_attribute("reattempt::attempt", ""));
        assert!(!names_this_attribute("retried", ""));
    }
}
