//! The function's policy as its builder makes it, `Policy::new(curve)`
//! and one method per argument: a `static` where it is a constant, else a
//! local built on each call.

use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;
use syn::Ident;
use syn::spanned::Spanned;

use crate::args::{After, Args, Backoff, Curve, Custom, Hedge, Idempotent, Jitter, Max};
use crate::duration::Dur;
use crate::preset;
use crate::shape::constant_parts;
use crate::spanned::private_call;

/// The policy built by its builder: a `static` when it is a constant (the
/// call then names the static itself), else a local. Returns the
/// statements and how the call names the policy.
pub(crate) fn built_policy(
    args: &Args,
    private: &Ident,
    dynamic: Option<&syn::Expr>,
) -> (TokenStream, TokenStream) {
    let preset = preset::constant(args, private);
    let BackoffCode {
        tokens: backoff,
        builtin,
    } = match (&args.backoff, &preset) {
        // The preset's curve, where the function names none of its own.
        (None, Some(preset)) => BackoffCode {
            tokens: code!(#preset.backoff),
            builtin: Some(("Exponential", "Exponential")),
        },
        _ => backoff(args.backoff.as_ref(), private),
    };
    // A dynamic policy picks among the built-in curves, so the static one
    // is held as one of them too.
    let (backoff, backoff_type) = match (dynamic, builtin) {
        (Some(_), Some((variant, _))) => {
            let variant = Ident::new(variant, Span::call_site());
            (
                code!(#private::AnyBackoff::#variant(#backoff)),
                Some(code!(#private::AnyBackoff)),
            )
        }
        (_, builtin) => {
            let ty = builtin.map(|(_, ty)| {
                let ty = Ident::new(ty, Span::call_site());
                code!(#private::#ty)
            });
            (backoff, ty)
        }
    };
    let mut policy = code!(#private::Policy::new(#backoff));
    match (&args.max, &preset) {
        (Some(Max::Limited(n)), _) => policy.extend(code!(.max_attempts(#n))),
        (Some(Max::Unbounded(_) | Max::Forever(_)), _) => policy.extend(code!(.unbounded())),
        (None, Some(preset)) => policy.extend(code!(.max_attempts(#preset.max_attempts))),
        (None, None) => {}
    }
    match (&args.jitter, &preset) {
        (Some(jitter), _) => {
            let jitter = match *jitter {
                Jitter::None => None,
                Jitter::Default => Some(code!(DEFAULT)),
                Jitter::Proportional(ratio) => Some(code!(Proportional(#ratio))),
                Jitter::Full => Some(code!(Full)),
                Jitter::Equal => Some(code!(Equal)),
                Jitter::Decorrelated => Some(code!(Decorrelated)),
            };
            if let Some(jitter) = jitter {
                policy.extend(code!(.jitter(#private::Jitter::#jitter)));
            }
        }
        (None, Some(preset)) => policy.extend(code!(.jitter(#preset.jitter))),
        (None, None) => {}
    }
    let duration = |method: TokenStream, value: &Dur| {
        let value = value.tokens();
        code!(.#method(#value))
    };
    if let Some(deadline) = &args.deadline {
        policy.extend(duration(code!(deadline), deadline));
    }
    if let Some((_, timeout)) = &args.attempt_timeout {
        policy.extend(duration(code!(attempt_timeout), timeout));
    }
    if let Some(max) = &args.max_retry_after {
        policy.extend(duration(code!(max_retry_after), max));
    }
    if let Some(honor) = args.honor_retry_after {
        policy.extend(code!(.honor_retry_after(#honor)));
    }
    // Shared state is named by reference; a `static` keeps the policy a
    // constant, anything else makes it a local.
    for (method, shared) in [
        ("budget", args.budget.as_ref()),
        (
            "breaker",
            args.breaker.as_ref().map(|breaker| &breaker.path),
        ),
        ("throttle", args.throttle.as_ref()),
        ("limit", args.limit.as_ref()),
        ("dead_letter", args.dead_letter.as_ref()),
    ] {
        if let Some(shared) = shared {
            let method = Ident::new(method, Span::call_site());
            // The argument at the value: one of another type is reported
            // there.
            let argument = quote_spanned!(shared.span()=> (&#shared));
            policy.extend(code!(.#method #argument));
        }
    }
    if let Some(hedge) = &args.hedge {
        let hedge = hedge_code(hedge, private);
        policy.extend(code!(.hedge(#hedge)));
    }
    if let Some(after) = args.alert_after {
        policy.extend(code!(.alert_after(#after)));
    }
    if let Some(hook) = &args.on_alert {
        policy.extend(code!(.on_alert(#hook)));
    }
    if args.nested_single == Some(true) {
        policy.extend(code!(.nested(#private::Nested::Single)));
    }
    match args.idempotent {
        Some(Idempotent::No) => policy.extend(code!(.idempotent(#private::Idempotent::No))),
        Some(Idempotent::Key) => policy.extend(code!(.idempotent(#private::Idempotent::Key))),
        Some(Idempotent::Yes) | None => {}
    }
    let is_const = constant_parts(args);
    let is_static = is_const && dynamic.is_none();
    // A constant policy is named as its static, with no local for it.
    let (policy, policy_ref) = match backoff_type {
        Some(ty) if is_static => (
            code!(static __RETRY_POLICY: #private::Policy<#ty> = #policy;),
            code!((&__RETRY_POLICY)),
        ),
        Some(ty) if is_const => (
            code! {
                static __RETRY_POLICY: #private::Policy<#ty> = #policy;
                let __retry_policy = &__RETRY_POLICY;
            },
            code!(__retry_policy),
        ),
        _ => (code!(let __retry_policy = &#policy;), code!(__retry_policy)),
    };
    // A hedged function's latencies, which its hedge reads as a
    // percentile, or may once a dynamic policy asks for one.
    let policy = match &args.hedge {
        Some(_) => code! {
            static __RETRY_LATENCIES: #private::LatencySketch = #private::LatencySketch::new();
            #policy
        },
        None => policy,
    };
    (policy, policy_ref)
}

/// The function's `hedge` as the core's `Hedge`, over the latency sketch
/// that [`built_policy`] makes beside the policy.
fn hedge_code(hedge: &Hedge, private: &Ident) -> TokenStream {
    match &hedge.after {
        After::Fixed(after) => {
            let after = after.tokens();
            code!(#private::Hedge::new(&__RETRY_LATENCIES, #after))
        }
        After::Percentile { percentile, min } => {
            let min = match min {
                Some(min) => {
                    let min = min.tokens();
                    code!(::core::option::Option::Some(#min))
                }
                None => code!(::core::option::Option::None),
            };
            code!(#private::Hedge::percentile(&__RETRY_LATENCIES, #percentile, #min))
        }
    }
}

/// A `backoff` argument as code.
struct BackoffCode {
    tokens: TokenStream,
    /// The built-in curve (its `AnyBackoff` variant and type), if it is one.
    builtin: Option<(&'static str, &'static str)>,
}

fn backoff(backoff: Option<&Backoff>, private: &Ident) -> BackoffCode {
    let builtin = |variant, ty, tokens| BackoffCode {
        tokens,
        builtin: Some((variant, ty)),
    };
    let custom = |tokens| BackoffCode {
        tokens,
        builtin: None,
    };
    // A part not given is the core's default, by name.
    let part = |given: Option<&Dur>, default: &str| match given {
        Some(given) => given.tokens(),
        None => {
            let default = Ident::new(default, Span::call_site());
            code!(#private::#default)
        }
    };
    match Curve::of(backoff) {
        Err(Custom::Closure(closure)) => {
            custom(private_call("backoff_fn", closure.span(), code!(#closure)))
        }
        Err(Custom::Expr(expr)) => custom(private_call("backoff_of", expr.span(), code!(#expr))),
        Ok(Curve::DefaultExp) => builtin(
            "Exponential",
            "Exponential",
            code!(#private::Exponential::DEFAULT),
        ),
        Ok(Curve::Exp { base, factor, max }) => {
            let (b, m) = (part(base, "DEFAULT_BASE"), part(max, "DEFAULT_CAP"));
            let f = match factor {
                Some(factor) => code!(#factor),
                None => code!(#private::DEFAULT_FACTOR),
            };
            builtin(
                "Exponential",
                "Exponential",
                code!(#private::Exponential::new(#b, #f, #m)),
            )
        }
        Ok(Curve::Fixed(delay)) => {
            let d = delay.tokens();
            builtin("Fixed", "Fixed", code!(#private::Fixed::new(#d)))
        }
        Ok(Curve::Linear { base, step, max }) => {
            let (b, m) = (part(base, "DEFAULT_BASE"), part(max, "DEFAULT_CAP"));
            // The step defaults to the base.
            let s = step.map_or_else(|| b.clone(), Dur::tokens);
            builtin("Linear", "Linear", code!(#private::Linear::new(#b, #s, #m)))
        }
        Ok(Curve::Fibonacci { base, max }) => {
            let (b, m) = (part(base, "DEFAULT_BASE"), part(max, "DEFAULT_CAP"));
            builtin(
                "Fibonacci",
                "Fibonacci",
                code!(#private::Fibonacci::new(#b, #m)),
            )
        }
        Ok(Curve::None) => builtin("None", "NoBackoff", code!(#private::NoBackoff)),
    }
}
