//! The statements an expansion makes before its loop: the function's
//! site, its policy (a constant where it can be one, else built on each
//! call), the classifier and sleeper it names, and the call state; and
//! which kind of loop the function gets.

use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;
use syn::spanned::Spanned;
use syn::{Ident, Type};

use crate::args::{Args, Backoff, Curve, Custom, Hooks, Idempotent, Jitter, Max, On};
use crate::const_policy;
use crate::duration::Dur;
use crate::spanned::private_call;

/// The statements before the loop: site, policy, classifier, sleeper, and
/// the call state. `is_async`: the outcome type of an async function, when
/// it is named. `early`: the function's first attempt runs before its call
/// is built when its policy is a constant (`first_attempt_early`).
pub(crate) fn prelude(
    args: &Args,
    fn_name: &Ident,
    private: &Ident,
    is_async: Option<&Option<Type>>,
    early: bool,
) -> Prelude {
    let cut_ret = is_async.and_then(Option::as_ref);
    let is_async = is_async.is_some();
    // A given name may be shared on purpose; a default one only by
    // mistake, which the site says at run time.
    let site = match &args.name {
        Some(name) => code!(#private::Site::given(#name)),
        None => {
            // One literal: a literal written in the template is parsed
            // from text each time the macro runs.
            let fn_name = format!("::{fn_name}");
            code!(#private::Site::new(::core::concat!(::core::module_path!(), #fn_name)))
        }
    };
    let dynamic = args.policy.as_ref().map(|(_, expr)| expr);
    let lazy = is_async && lazy_call(args);
    let waits_in_next = lazy && args.sleep.is_none();
    // A policy of literals without shared state is a type's constant where
    // the expansion names it at most twice: a sync function's early first
    // attempt, and the loop of a `LazyCall` that waits in `next` (its call
    // and its decision). A loop that names it at each step keeps a
    // `static`: there the constant cost an async function's release build
    // more (112.7 against 111.6 million instructions, before `next`).
    let named = match dynamic {
        None if early || waits_in_next => const_policy::named(args, private),
        _ => None,
    };
    let (policy, policy_ref, is_static) = match named {
        Some(named) => (code!(), named, true),
        None => built_policy(args, private, dynamic),
    };
    let policy = match dynamic {
        Some(dynamic) => {
            // Whether the function's attempts can be cut, so that a dynamic
            // `attempt_timeout` that cannot be honoured is said, not lost.
            let cuts = match cut_ret {
                Some(ret) => code!(#private::Probe::<#ret>::new().__retry_from_timeout().is_some()),
                None => code!(false),
            };
            code! {
                #policy
                let __retry_policy = &#private::dynamic_policy(__retry_policy, #dynamic, &__RETRY_SITE, #cuts);
            }
        }
        None => policy,
    };
    let on = match &args.on {
        Some(On::Expr(expr)) => code!(let __retry_on = #expr;),
        _ => code!(),
    };
    let sleeper = match (&args.sleep, is_async) {
        (Some(sleep), false) => code!(let __retry_sleep = #private::sync_sleeper(#sleep);),
        (Some(sleep), true) => {
            // At the sleeper: a bound on what it returns fails at the call,
            // not at the argument.
            let sleeper = private_call("async_sleeper", sleep.span(), code!(#sleep));
            code!(let __retry_sleep = #sleeper;)
        }
        (None, _) => code!(),
    };
    let prelude = code! {
        static __RETRY_SITE: #private::Site = #site;
        #policy
        #on
        #sleeper
    };
    Prelude {
        items: prelude,
        policy: policy_ref,
        is_static,
        lazy,
        waits_in_next,
    }
}

/// The call state, for the loops that build it before the first attempt
/// (not a sync function's early first attempt, which is why it is made
/// apart from [`prelude`]).
pub(crate) fn call_state(
    args: &Args,
    private: &Ident,
    policy: &TokenStream,
    is_async: bool,
    lazy: bool,
) -> TokenStream {
    // Each whole: parts made apart would each be a stream to join.
    let mut call = if lazy {
        code!(let mut __retry_call = #private::LazyCall::new(#policy, &__RETRY_SITE, #private::async_clock());)
    } else if is_async {
        // Boxed: the failure state would make the function's future larger.
        code!(let mut __retry_call = #private::Call::new(#policy, &__RETRY_SITE, #private::async_clock());)
    } else {
        code!(let mut __retry_call = #private::Call::new_inline(#policy, &__RETRY_SITE, #private::SystemClock);)
    };
    // Hooks see the time since the call started.
    if args.hooks.any() {
        call.extend(code!(__retry_call.start_clock();));
    }
    call
}

/// The statements before the loop.
pub(crate) struct Prelude {
    /// The site, the policy, the classifier and the sleeper.
    pub(crate) items: TokenStream,
    /// The call's policy, as `scope` and `decide` take it: a constant
    /// itself where there is one, not a local pointing at it, so that the
    /// core's checks of what the policy does not use fold away, in async
    /// functions too, whose locals live in the future and are read back
    /// from it.
    pub(crate) policy: TokenStream,
    /// Whether `policy` is a constant (a `ConstPolicy`'s, or
    /// `__RETRY_POLICY`).
    pub(crate) is_static: bool,
    /// Whether the call state is a `LazyCall` (see [`lazy_call`]).
    pub(crate) lazy: bool,
    /// Whether its attempts, made by `LazyCall::next`, wait out their
    /// retries' delays themselves: a `LazyCall` on tokio's timer (no
    /// `sleep = ..`, whose waits are the user's futures).
    pub(crate) waits_in_next: bool,
}

/// The policy built by its builder: a `static` when it is a constant (the
/// call then names the static itself: `is_static`), else a local. Returns
/// the statements, how the call names the policy, and `is_static`.
fn built_policy(
    args: &Args,
    private: &Ident,
    dynamic: Option<&syn::Expr>,
) -> (TokenStream, TokenStream, bool) {
    let BackoffCode {
        tokens: backoff,
        builtin,
        literal,
    } = backoff(args.backoff.as_ref(), private);
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
    match &args.max {
        Some(Max::Limited(n)) => policy.extend(code!(.max_attempts(#n))),
        Some(Max::Unbounded(_)) => policy.extend(code!(.unbounded())),
        None => {}
    }
    if let Some(jitter) = &args.jitter {
        let jitter = match *jitter {
            Jitter::None => None,
            Jitter::Proportional(ratio) => Some(code!(Proportional(#ratio))),
            Jitter::Full => Some(code!(Full)),
            Jitter::Equal => Some(code!(Equal)),
            Jitter::Decorrelated => Some(code!(Decorrelated)),
        };
        if let Some(jitter) = jitter {
            policy.extend(code!(.jitter(#private::Jitter::#jitter)));
        }
    }
    let mut is_const = literal && backoff_type.is_some();
    let mut duration = |method: TokenStream, value: &Dur| {
        is_const &= value.literal_value().is_some();
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
        ("limit", args.limit.as_ref()),
        ("dead_letter", args.dead_letter.as_ref()),
    ] {
        if let Some(shared) = shared {
            is_const &= matches!(shared, syn::Expr::Path(_));
            let method = Ident::new(method, Span::call_site());
            // The argument at the value: one of another type is reported
            // there.
            let argument = quote_spanned!(shared.span()=> (&#shared));
            policy.extend(code!(.#method #argument));
        }
    }
    if let Some(after) = args.alert_after {
        policy.extend(code!(.alert_after(#after)));
    }
    if let Some(hook) = &args.on_alert {
        is_const &= matches!(hook, syn::Expr::Path(_) | syn::Expr::Closure(_));
        policy.extend(code!(.on_alert(#hook)));
    }
    if args.nested_single == Some(true) {
        policy.extend(code!(.nested(#private::Nested::Single)));
    }
    if args.idempotent == Some(Idempotent::No) {
        policy.extend(code!(.idempotent(false)));
    }
    let is_static = backoff_type.is_some() && is_const && dynamic.is_none();
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
    (policy, policy_ref, is_static)
}

/// Whether a sync function runs its first attempt before it builds a call
/// (`first_attempt`), so that a success costs no call state and the retry
/// loop is out of line. The body is then one closure that the loop calls
/// again, alive for the whole call: anything else the user wrote that the
/// loop would run (a hook, a classifier closure, `if_result`, `fields(..)`)
/// could borrow an argument the body holds, so their functions keep the
/// loop inline. So do those of a limit or a breaker that refuses calls,
/// which act before the first attempt.
pub(crate) fn first_attempt_early(args: &Args) -> bool {
    let Hooks {
        before,
        after,
        on_retry,
        on_give_up,
    } = &args.hooks;
    [before, after, on_retry, on_give_up, &args.if_result]
        .iter()
        .all(|expr| expr.is_none())
        && args.fields.is_none()
        && !matches!(args.on, Some(On::Closure(_)))
        && args.limit.is_none()
        && args.breaker.as_ref().is_none_or(|breaker| !breaker.classic)
}

/// Whether an async function's call is built only when its first attempt
/// fails (`LazyCall`): when its loop calls nothing of the user's and no
/// timer cuts its attempts, the loop needs only the methods `LazyCall` has.
fn lazy_call(args: &Args) -> bool {
    first_attempt_early(args)
        && args.deadline.is_none()
        && args.attempt_timeout.is_none()
        && args.policy.is_none()
}

/// A `backoff` argument as code.
struct BackoffCode {
    tokens: TokenStream,
    /// The built-in curve (its `AnyBackoff` variant and type), if it is one.
    builtin: Option<(&'static str, &'static str)>,
    /// Whether it can be built in a constant.
    literal: bool,
}

fn backoff(backoff: Option<&Backoff>, private: &Ident) -> BackoffCode {
    let literal = |ds: &[&Dur]| ds.iter().all(|d| d.literal_value().is_some());
    let builtin = |variant, ty, tokens, literal| BackoffCode {
        tokens,
        builtin: Some((variant, ty)),
        literal,
    };
    let custom = |tokens| BackoffCode {
        tokens,
        builtin: None,
        literal: false,
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
            true,
        ),
        Ok(Curve::Exp { base, factor, max }) => {
            let (b, m) = (base.tokens(), max.tokens());
            builtin(
                "Exponential",
                "Exponential",
                code!(#private::Exponential::new(#b, #factor, #m)),
                literal(&[&base, &max]),
            )
        }
        Ok(Curve::Fixed(delay)) => {
            let d = delay.tokens();
            builtin(
                "Fixed",
                "Fixed",
                code!(#private::Fixed::new(#d)),
                literal(&[&delay]),
            )
        }
        Ok(Curve::Linear { base, step, max }) => {
            let (b, s, m) = (base.tokens(), step.tokens(), max.tokens());
            builtin(
                "Linear",
                "Linear",
                code!(#private::Linear::new(#b, #s, #m)),
                literal(&[&base, &step, &max]),
            )
        }
        Ok(Curve::Fibonacci { base, max }) => {
            let (b, m) = (base.tokens(), max.tokens());
            builtin(
                "Fibonacci",
                "Fibonacci",
                code!(#private::Fibonacci::new(#b, #m)),
                literal(&[&base, &max]),
            )
        }
        Ok(Curve::None) => builtin("None", "NoBackoff", code!(#private::NoBackoff), true),
    }
}
