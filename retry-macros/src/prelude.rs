//! The statements an expansion makes before its loop: the function's
//! site, its policy (a constant where it can be one, else built on each
//! call), the classifier and sleeper it names, and the call state.

use proc_macro2::TokenStream;
use syn::spanned::Spanned;
use syn::{Ident, Type};

use crate::args::{Args, On};
use crate::policy::built_policy;
use crate::shape::Shape;
use crate::spanned::private_call;

/// The statements before the loop: site, policy, classifier and sleeper.
/// `ret`: the outcome type, when it is named.
pub(crate) fn prelude(
    args: &Args,
    fn_name: &Ident,
    private: &Ident,
    shape: Shape,
    ret: Option<&Type>,
) -> Prelude {
    let is_async = shape.is_async();
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
    let (policy, policy_ref) = built_policy(args, private, dynamic);
    let policy = match dynamic {
        Some(dynamic) => {
            // Whether the function's attempts can be cut, so that a dynamic
            // `attempt_timeout` that cannot be honoured is said, not lost.
            let cuts = match ret.filter(|_| is_async) {
                Some(ret) => code!(#private::Probe::<#ret>::new().__retry_from_timeout().is_some()),
                None => code!(false),
            };
            // Borrowed, so that a `static` cell is named as it is; the
            // borrow spanned at the expression, so that a value of the
            // wrong type is the error there.
            let borrowed = quote::quote_spanned!(dynamic.span()=> &(#dynamic));
            code! {
                #policy
                let __retry_policy = &#private::dynamic_policy(__retry_policy, #borrowed, &__RETRY_SITE, #cuts);
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
    }
}

/// The call state of the loops that build it in the function (all but
/// `SyncEarly`, whose call the core builds, which is why it is made apart
/// from [`prelude`]).
pub(crate) fn call_state(
    args: &Args,
    private: &Ident,
    policy: &TokenStream,
    shape: Shape,
) -> TokenStream {
    // Each whole: parts made apart would each be a stream to join.
    let mut call = match shape {
        Shape::SyncEarly => return code!(),
        Shape::Async(_) | Shape::AsyncHedged => {
            code!(let mut __retry_call = #private::Call::new(#policy, &__RETRY_SITE, #private::async_clock());)
        }
        Shape::SyncLoop => {
            code!(let mut __retry_call = #private::Call::new(#policy, &__RETRY_SITE, #private::SystemClock);)
        }
    };
    // Hooks see the time since the call started.
    if args.hooks.any() {
        call.extend(code!(__retry_call.start_clock();));
    }
    // A success is counted as its outcome is returned, after `after`: a
    // call dropped (or unwound) during that hook was cancelled.
    if args.hooks.after.is_some() {
        call.extend(code!(__retry_call.count_success_on_return();));
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
}
