//! Code generation: a small loop around the body that asks the core what to
//! do after each attempt.
//!
//! Input:
//!
//! ```text
//! #[retry(max = 3, backoff = fixed(200ms))]
//! async fn fetch(url: &str) -> Result<String, Error> { body }
//! ```
//!
//! Output (paths shortened; locals have mixed-site hygiene):
//!
//! ```text
//! async fn fetch(url: &str) -> Result<String, Error> {
//!     static __RETRY_SITE: Site = Site::new(concat!(module_path!(), "::fetch"));
//!     let mut __retry_call = LazyCall::new(
//!         ConstPolicy::<FixedOf<200000000>, 3>::REF, &__RETRY_SITE, async_clock(),
//!     );
//!     loop {
//!         let __retry_out = __retry_call
//!             .next(attempt::<Result<String, Error>, _>(async { body }))
//!             .await;
//!         if !__retry_call.retries(ConstPolicy::<..>::REF, &__retry_out, classify, describe, judge) {
//!             return __retry_out;
//!         }
//!     }
//! }
//! ```
//!
//! `LazyCall` builds the call state at the first failure, and each attempt
//! made by `next` waits out the delay its retry decided before it runs, so
//! the loop has one await: each await is a state of the function's future
//! that rustc lays out and checks in every function.
//!
//! Elsewhere the loop waits on its own, after each retry's decision:
//!
//! ```text
//! loop {
//!     __retry_call.begin_attempt();
//!     let __retry_delay = {
//!         let __retry_out = __retry_call.scoped(attempt::<..>(async { body })).await;
//!         match __retry_call.decide(..) {
//!             Decision::Retry(delay) => delay,
//!             _ => return __retry_out,
//!         }
//!     };
//!     wait(&mut __retry_call, __retry_delay).await;
//! }
//! ```
//!
//! So does a `LazyCall` with `sleep = ..`, whose waits are the user's
//! futures. A function whose loop runs something of the user's (a hook,
//! say), holds a permit or cuts its attempts with a timer builds its call
//! at once, with `Call::new`, which has the methods that loop calls. Each
//! wrapper of an attempt (the frame's `scoped`, a timer, a permit) holds
//! it by value, so that an attempt that is cut, or dropped with a
//! cancelled call, is dropped before its permit passes on.
//!
//! A sync function runs its body as
//! `__retry_call.scope(&__RETRY_POLICY, || -> Ret { body })`
//! instead, keeps its call's failure state inline (`Call::new_inline`), and
//! sleeps on the thread. Where nothing else the user wrote runs in the loop
//! (see `first_attempt_early`), it runs its first attempt before any call
//! state is built, and the rest of the call in the core, out of line:
//!
//! ```text
//! let __retry_body = || -> Ret { body };
//! let __retry_out = run_sync(
//!     ConstPolicy::<FixedOf<200000000>, 3>::REF, &__RETRY_SITE, __retry_body,
//!     judge, classify, describe, thread_sleep,
//! );
//! __retry_out
//! ```
//!
//! There, and in the `LazyCall` loop above, a policy made only of literals
//! and without shared state is not a `static` of the function's own but a
//! constant of the core's `ConstPolicy`, named by its values
//! (`const_policy`). Other loops name their policy at each step, as a
//! `static __RETRY_POLICY: Policy<..>`.
//!
//! The body's tokens appear exactly once.

use std::borrow::Cow;

use proc_macro2::{Punct, Spacing, Span, TokenStream};
use quote::quote_spanned;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{AttrStyle, Ident, ReturnType, Type};

use crate::args::{Args, On};
use crate::item::{self, Function, Kind};
use crate::prelude::{Prelude, call_state, first_attempt_early, prelude};
use crate::spanned::{PRIVATE, call_at, own_sleep_awaited, private_call, private_path};
use crate::{moves, preset, type_span, validate};

/// The expanded function, or the errors that keep it from being expanded.
pub fn expand(mut args: Args, function: Function) -> syn::Result<TokenStream> {
    validate::validate(&args, &function)?;
    let external_api = preset::apply(&mut args);
    let Function {
        attrs,
        head,
        sig,
        body,
        kind,
    } = function;
    // The run-time support, named through an alias that `private_import` imports:
    // one ident where the path is used. An ident, not a token stream: the
    // macro's cost is mostly in the token streams it joins.
    let private = Ident::new(PRIVATE, Span::mixed_site());

    let return_span = match &sig.output {
        ReturnType::Type(_, ty) => type_span::first_token(ty),
        ReturnType::Default => sig.ident.span(),
    };
    let erased_ret = match &kind {
        Kind::AsyncBlock { output, .. } => erased(output),
        Kind::Sync | Kind::Async => match &sig.output {
            ReturnType::Type(_, ty) => erased(ty),
            ReturnType::Default => Some((syn::parse_quote!(()), true)),
        },
    };
    // An outcome type named whole is read by probing its error and value
    // types by name, with what the core makes once per type; any other, or
    // one that `if_result` judges (it may not be an outcome at all), by
    // probing the error or value itself in a closure of the function's own.
    let named = match &erased_ret {
        Some((_, whole)) => *whole && args.if_result.is_none(),
        None => false,
    };
    let ret = erased_ret.map(|(ty, _)| ty);
    let is_async = !matches!(kind, Kind::Sync);
    // Whether a sync function's first attempt may run before its call is
    // built, when its policy is a constant.
    let early = !is_async && first_attempt_early(&args);
    let import = private_import(args.krate.as_ref(), &private);
    let moved = moved_checks(&sig, &body, &kind, &args, &private);
    let Prelude {
        items,
        policy: policy_ref,
        is_static,
        lazy,
        waits_in_next,
    } = prelude(&args, &sig.ident, &private, is_async.then_some(&ret), early);
    let error_span = error_type_span(&sig.output, &kind);
    let parts = Parts {
        private: &private,
        // Type errors about the outcome land on the return type, not on the
        // attribute. The return type's own span (not one of the expansion),
        // so that the compiler does not trace such errors back to the
        // attribute; the user's body is never in this name's scope.
        outcome: Ident::new("__retry_out", return_span),
        return_span,
        ret: &ret,
        named,
        is_async,
        waits_in_next,
        classify: classifier(&args, &private, error_span, external_api),
        classified_at: match args.on {
            None | Some(On::Transient) if !external_api => Some(error_span),
            _ => None,
        },
        policy: policy_ref,
    };
    // The call state, for the loops that build it before the first attempt.
    let prelude = || {
        let call = call_state(&args, &private, &parts.policy, is_async, lazy);
        code!(#moved #items #call)
    };

    let inner_attrs = attrs
        .iter()
        .filter(|attr| matches!(attr.style, AttrStyle::Inner(_)));
    let body = match kind {
        Kind::Sync => {
            let block = attempt_body(&body, &args);
            let annotation = match &ret {
                Some(ret) => code!(-> #ret),
                None => code!(),
            };
            let policy = &parts.policy;
            if is_static && early {
                // Arguments the closure can copy are copied: the success
                // path then makes no pointer to them, where a borrowing
                // closure stored one (2 instructions of 50).
                let capture = moves::all_copied(&sig).then(|| code!(move));
                let looped =
                    parts.early_first_attempt(&args, code!(#capture || #annotation #block));
                code!({ #(#inner_attrs)* #import #moved #items #looped })
            } else {
                let scope = match parts.instead(&args) {
                    Some(instead) => code! {
                        __retry_call.scope_within(#policy, #instead, || #annotation #block)
                    },
                    None => code!(__retry_call.scope(#policy, || #annotation #block)),
                };
                let looped = parts.retry_loop(&args, scope);
                let prelude = prelude();
                code!({ #(#inner_attrs)* #import #prelude #looped })
            }
        }
        Kind::Async => {
            let block = attempt_body(&body, &args);
            let looped = parts.retry_loop(&args, parts.async_attempt(&args, block));
            let prelude = prelude();
            code!({ #(#inner_attrs)* #import #prelude #looped })
        }
        Kind::AsyncBlock {
            block: mut whole,
            retried,
            ..
        } => {
            let Some(tail) = item::tail_async_block_mut(&mut whole) else {
                return Err(syn::Error::new(
                    return_span,
                    "expected the body to end in an `async move { .. }` block",
                ));
            };
            let block = attempt_body(&item::Body::of(&retried), &args);
            let looped = parts.retry_loop(&args, parts.async_attempt(&args, block));
            let prelude = prelude();
            tail.block = syn::parse_quote!({ #import #prelude #looped });
            code!({ #(#inner_attrs)* #whole })
        }
    };
    Ok(code!(#head #body))
}

/// The core's private module, imported once for the whole body under a
/// name of the expansion's own, which the expansion's paths name in fewer
/// tokens than the crate's path. No trait is imported: what picks how the
/// expansion reads the user's types (an error's text, a value's judgement,
/// a field, a timeout, a hook's return) are inherent methods of probe
/// types, so the user's method calls have no trait of ours in scope to
/// consider. Every expansion names the module (its error's describer at
/// least), so the import needs no `allow(unused_imports)`, which cost a
/// check 0.04 million instructions per function.
fn private_import(krate: Option<&syn::Path>, private: &Ident) -> TokenStream {
    // The crate's path written into the import, not made apart and joined.
    match krate {
        Some(krate) => code!(use #krate::__private as #private;),
        None => code!(use ::reattempt::__private as #private;),
    }
}

/// What names the outcome type for a closure that judges its values.
#[derive(Clone, Copy)]
enum Source {
    /// The body's closure, bound before the early first attempt.
    Body,
    /// The attempt's outcome, which `decide` reads.
    Outcome,
}

/// What every part of the loop needs to know.
struct Parts<'a> {
    private: &'a Ident,
    outcome: Ident,
    return_span: Span,
    ret: &'a Option<Type>,
    /// Whether the outcome type is named whole, so that its error's text
    /// and its value's judgement are probed by type, not in closures.
    named: bool,
    is_async: bool,
    /// Whether a `LazyCall` waits on tokio's timer (no `sleep = ..`): each
    /// attempt, made by `next`, then waits out its retry's delay first, and
    /// the loop has one await.
    waits_in_next: bool,
    classify: TokenStream,
    /// Where the call that takes the classifier is made: at the error type
    /// for its own classification, which a type without one fails twice
    /// (the function, and the call's bound on it), so that the compiler
    /// reports the two as one; else at the attribute.
    classified_at: Option<Span>,
    /// The call's policy, as `scope` and `decide` take it.
    policy: TokenStream,
}

impl Parts<'_> {
    /// The loop: run an attempt, let the core judge it, call the hooks, then
    /// return or wait.
    fn retry_loop(&self, args: &Args, attempt: TokenStream) -> TokenStream {
        let Parts {
            private,
            outcome,
            policy,
            ..
        } = self;
        let fallible = self.fallible(args);
        // `&` at the return type, as the outcome is: a token, where a
        // stream of its own would be joined to the loop's.
        let mut amp = Punct::new('&', Spacing::Alone);
        amp.set_span(self.return_span);
        let borrowed = code!(#amp #outcome);
        if self.waits_in_next {
            // Nothing of the user's runs in this loop, nor `fields(..)`
            // (`lazy_call`), and each attempt waits out its retry's delay
            // itself.
            let retries = Ident::new("retries", self.return_span);
            let classify = &self.classify;
            let describe = self.describe();
            let judge_value = self.judge_value(args, Source::Outcome);
            let retries = call_at(
                self.classified_at,
                &retries,
                code!(#policy, #borrowed, #classify, #describe, #judge_value),
            );
            return code! {
                loop {
                    let #outcome = #attempt;
                    #fallible
                    if !#retries {
                        return #outcome;
                    }
                }
            };
        }
        let judge = self.judge(args);
        let decide = Ident::new("decide", self.return_span);
        let before = self.hook(&args.hooks.before, false);
        let after = self.hook(&args.hooks.after, true);
        let on_retry = self.hook(&args.hooks.on_retry, true);
        let on_give_up = self.hook(&args.hooks.on_give_up, true);
        let sleep = match (&args.sleep, self.is_async) {
            (None, false) => code!(#private::thread_sleep(__retry_delay)),
            (None, true) => code!(#private::wait(&mut __retry_call, __retry_delay).await),
            (Some(_), false) => code!(__retry_sleep(__retry_delay)),
            (Some(sleep), true) => own_sleep_awaited(sleep.span()),
        };
        // `breaker = classic(..)`: an open breaker refuses the call before
        // its first attempt. Like `timed`, the refusal is spanned at the
        // return type, which is what must be able to stand for it.
        let refusal = args.breaker.as_ref().filter(|b| b.classic).map(|_| {
            let (span, fields) = self.span_and_fields(args);
            let refused = Ident::new("refused", self.return_span);
            let ret = self.ret.as_ref().map(|ret| code!(::<#ret, _, _>));
            code! {
                if __retry_call.refuses() {
                    let #outcome = __retry_call.#refused #ret(#span, #fields);
                    #on_give_up
                    return #outcome;
                }
            }
        });
        let decision = call_at(
            self.classified_at,
            &decide,
            code!(#policy, #borrowed, #judge),
        );
        // Without hooks after the attempt, only a retry goes on.
        let decided = if after.is_empty() && on_retry.is_empty() && on_give_up.is_empty() {
            code! {
                match #decision {
                    #private::Decision::Retry(__retry_delay) => __retry_delay,
                    _ => return #outcome,
                }
            }
        } else {
            code! {
                let __retry_decision = #decision;
                #after
                match __retry_decision {
                    #private::Decision::Return => return #outcome,
                    #private::Decision::GiveUp(_) => {
                        #on_give_up
                        return #outcome;
                    }
                    #private::Decision::Retry(__retry_delay) => {
                        #on_retry
                        __retry_delay
                    }
                }
            }
        };
        // The outcome goes out of scope before the wait, so that nothing
        // of a failed attempt is held across it (nor kept in the future's
        // state), except where it may stand for the next attempt.
        let (last, decided) = match self.last_kept(args) {
            Some(last) => (
                last,
                code! {
                    let __retry_delay = { #decided };
                    __retry_last.keep(#outcome);
                    __retry_delay
                },
            ),
            None => (code!(), decided),
        };
        code! {
            #refusal
            #last
            loop {
                __retry_call.begin_attempt();
                #before
                let __retry_delay = {
                    let #outcome = #attempt;
                    #fallible
                    #decided
                };
                #sleep;
            }
        }
    }

    /// A sync call that runs its first attempt before its call is built,
    /// and the rest in the core (see [`first_attempt_early`]): `body` is
    /// the body's closure, which every attempt calls.
    fn early_first_attempt(&self, args: &Args, body: TokenStream) -> TokenStream {
        let Parts {
            private,
            outcome,
            classify,
            policy,
            ..
        } = self;
        let judge_value = self.judge_value(args, Source::Body);
        let describe = self.describe();
        let fallible = self.fallible(args);
        // The describer and the sleeper by value: each coercion to a
        // `&dyn Fn` is checked again in each function. The classifier is
        // one, so that an error type without a classification is reported
        // once, at the type.
        let sleep = match &args.sleep {
            // A closure of its own, which returns nothing whatever the
            // sleeper does: one that returns something is reported once,
            // by `sync_sleeper`, not again by the loop's bound.
            Some(_) => code!(&|__retry_d| {
                __retry_sleep(__retry_d);
            }),
            None => code!(#private::thread_sleep),
        };
        // What stands for an attempt that a wait ran past the deadline:
        // probed only where there is a deadline.
        let late = match (&args.deadline, self.ret) {
            (Some(_), Some(ret)) => code!(#private::Probe::<#ret>::new().__retry_from_timeout()),
            _ => code!(#private::NoDeadline),
        };
        // The body's closure is bound first, so that the outcome's type is
        // known when the closures that read it pick their methods.
        code! {
            let __retry_body = #body;
            let #outcome = #private::run_sync(
                #policy,
                &__RETRY_SITE,
                __retry_body,
                #judge_value,
                &#classify,
                #describe,
                #sleep,
                #late,
            );
            #fallible
            #outcome
        }
    }

    /// Without `if_result`, the check that the outcome is a `Result`, at
    /// the return type; none where the attempt makes it
    /// ([`async_attempt`](Self::async_attempt)).
    fn fallible(&self, args: &Args) -> TokenStream {
        let outcome = &self.outcome;
        match &args.if_result {
            Some(_) => code!(),
            None if self.is_async && self.ret.is_some() => code!(),
            None => {
                let check = private_path("assert_fallible", self.return_span);
                quote_spanned!(self.return_span=> #check(&#outcome);)
            }
        }
    }

    /// An async attempt: pinned to the return type, seen by
    /// `reattempt::attempt()`, and timed when `attempt_timeout` is given.
    /// Without `if_result`, the function that pins it also takes only a
    /// `Result`, and is spanned at the return type to say so there: one
    /// call fewer for rustc to check in each function.
    fn async_attempt(&self, args: &Args, block: TokenStream) -> TokenStream {
        let Parts { private, .. } = self;
        let future = match (self.ret, &args.if_result) {
            (Some(ret), None) => {
                let pin = private_path("fallible_attempt", self.return_span);
                code!(#pin::<#ret, _>(async #block))
            }
            (Some(ret), Some(_)) => code!(#private::attempt::<#ret, _>(async #block)),
            (None, _) => code!(async #block),
        };
        // The timeout goes inside the permit, so that it counts from the
        // moment the attempt runs, not from when it queued for a permit. A
        // deadline alone cuts the attempt when the outcome type can stand
        // for a timeout, and lets it run otherwise; so may a dynamic
        // policy's deadline or timeout. `Some(None)`: `attempt_timeout`,
        // which needs the outcome to stand for a timeout; `Some(Some(ret))`:
        // a deadline, which cuts only where `ret` can.
        let cut = match (&args.attempt_timeout, self.ret) {
            (Some(_), _) => Some(None),
            (None, Some(ret)) if args.deadline.is_some() || args.policy.is_some() => {
                Some(Some(ret))
            }
            _ => None,
        };
        // Each wrapper (a timer, a permit) holds the attempt by value, so
        // that an attempt that is cut, or dropped with a cancelled call, is
        // dropped inside the permit that it holds.
        let scoped = if self.waits_in_next {
            code!(__retry_call.next(#future))
        } else {
            code!(__retry_call.scoped(#future))
        };
        // Timers come from the function's sleeper, so that they work on
        // whatever executor runs it.
        let timer = match &args.sleep {
            Some(_) => code!(&__retry_sleep),
            None => code!(#private::timer),
        };
        // With a sleeper of the user's, the call of `cut`, which takes it
        // as a timer, and the await of that call are made at the sleeper:
        // one that returns no future fails their bounds there, where
        // `async_sleeper` already said so, and rustc reports it once.
        // `timed` and its await stay at the return type (see below).
        let sleeper = args.sleep.as_ref().map(Spanned::span);
        let wait_at = match (sleeper, &cut) {
            (Some(sleeper), Some(Some(_))) => sleeper,
            _ => self.return_span,
        };
        let wait = quote_spanned!(wait_at=> .await);
        let timed = cut.map(|ret| match ret {
            None => {
                // At the return type: a type that cannot stand for a
                // timeout fails the call's bound and that of its future,
                // reported as one there.
                let timed = Ident::new("timed", self.return_span);
                call_at(Some(self.return_span), &timed, code!(#scoped, #timer))
            }
            Some(ret) => {
                // After a wait that ran past the deadline, a retry does not
                // start: a limit's wait for a permit sees to it where there
                // is one, else this.
                let late = match args.limit {
                    None if self.keeps_last(args) => code!(__retry_last.late()),
                    _ => code!(#private::NoLast),
                };
                let cut = Ident::new("cut", Span::mixed_site());
                call_at(
                    sleeper,
                    &cut,
                    code!(#scoped, #timer, #private::Probe::<#ret>::new().__retry_from_timeout(), #late),
                )
            }
        });
        // The deadline also ends the wait for a permit, where it can.
        let instead = self.instead(args);
        match (&args.limit, timed, instead) {
            (Some(_), Some(timed), Some(instead)) => code! {
                __retry_call.limited_within(__retry_call.limited(#timed), #timer, #instead) #wait
            },
            (Some(_), Some(timed), None) => code!(__retry_call.limited(#timed) #wait),
            // Without a timer there is no deadline to end the wait.
            (Some(_), None, _) => code!(__retry_call.limited(#scoped).await),
            (None, Some(timed), _) => code!(#timed #wait),
            (None, None, _) => code!(#scoped.await),
        }
    }

    /// For a function with a deadline (its own, or one a dynamic policy
    /// may set), what stands for an attempt that the deadline finds
    /// waiting for its permit of a `limit`, or that the wait before it ran
    /// past the deadline: a timeout, or the last attempt's outcome, kept in
    /// `__retry_last` ([`Self::last_kept`]).
    fn instead(&self, args: &Args) -> Option<TokenStream> {
        self.keeps_last(args).then(|| code!(__retry_last.instead()))
    }

    /// Whether the loop keeps its last failed attempt's outcome, to stand
    /// for an attempt that the deadline comes before.
    fn keeps_last(&self, args: &Args) -> bool {
        let deadline = args.deadline.is_some() || args.policy.is_some();
        self.ret.is_some() && deadline && !self.waits_in_next
    }

    /// Where the loop keeps it: made before the loop, of a type picked by
    /// the outcome type (nothing where a timeout stands for the attempt,
    /// nor where an async function's future would not be `Send` with it).
    fn last_kept(&self, args: &Args) -> Option<TokenStream> {
        let private = self.private;
        let ret = self.ret.as_ref().filter(|_| self.keeps_last(args))?;
        let slot = if self.is_async {
            code!(__retry_last)
        } else {
            code!(__retry_last_sync)
        };
        Some(code!(let mut __retry_last = #private::Probe::<#ret>::new().#slot();))
    }

    /// How the core reads an outcome, as `decide`'s arguments: classifier,
    /// error text, the judgement of values (`if_result`, or the value type's
    /// own) and the span of `fields(..)`.
    fn judge(&self, args: &Args) -> TokenStream {
        let classify = &self.classify;
        let judge_value = self.judge_value(args, Source::Outcome);
        let (span, fields) = self.span_and_fields(args);
        let describe = self.describe();
        code! {
            #classify,
            #describe,
            #judge_value,
            #span,
            #fields
        }
    }

    /// The error's text for the logs: its `Display`, else its `Debug`.
    fn describe(&self) -> TokenStream {
        let private = self.private;
        // An error type that is neither is reported at the return type.
        let describer = Ident::new("__retry_describer", self.return_span);
        match self.ret {
            Some(ret) if self.named => code! {
                #private::ErrorProbe::<#ret>::new().#describer()
            },
            _ => code! {
                |__retry_e, __retry_f| #private::Probe::of(__retry_e).#describer()(__retry_e, __retry_f)
            },
        }
    }

    /// The judgement of a successful value: `if_result`, or the value
    /// type's own. A closure is given its argument's type by `source`:
    /// the early first attempt's body (`Source::Body`), else the outcome.
    fn judge_value(&self, args: &Args, source: Source) -> TokenStream {
        let private = self.private;
        // A named type (never with `if_result`) is probed by name: no closure.
        if let Some(ret) = self.ret.as_ref().filter(|_| self.named) {
            return code! {
                #private::ValueProbe::<#ret>::new().__retry_judge()
            };
        }
        let closure = match &args.if_result {
            Some(predicate) => {
                // At the predicate: one of another value type is reported
                // there.
                let call = private_call(
                    "reject_with",
                    predicate.span(),
                    code!(__retry_v, #predicate),
                );
                code!(|__retry_v| #call)
            }
            None => code! {
                |__retry_v| #private::JudgeValue::judge(&#private::Probe::of(__retry_v).__retry_judge(), __retry_v)
            },
        };
        match source {
            Source::Body => code!(#private::judge_of_body(&__retry_body, #closure)),
            Source::Outcome => {
                let outcome = &self.outcome;
                code!(#private::judge_of(&#outcome, #closure))
            }
        }
    }

    /// The span the call's events go in, and the visitor of the arguments
    /// named in `fields(..)`.
    fn span_and_fields(&self, args: &Args) -> (TokenStream, TokenStream) {
        let private = self.private;
        match &args.fields {
            Some(fields) => {
                let names = fields.iter().map(ToString::to_string);
                // An argument that is neither text nor `Debug` is reported
                // at its name in `fields(..)`.
                let probes: Vec<_> = fields
                    .iter()
                    .map(|field| Ident::new("__retry_field", field.span()))
                    .collect();
                (
                    code! {
                        || {
                            #private::tracing::error_span!(target: "reattempt", "retry", #(#fields = ?#private::FieldOf::new(&#fields).#probes()),*)
                        }
                    },
                    code! {
                        |__retry_visit: #private::FieldVisitor<'_>| {
                            #(__retry_visit(#names, &#private::FieldOf::new(&#fields).#probes());)*
                        }
                    },
                )
            }
            None => (code!(#private::no_span), code!(#private::no_fields)),
        }
    }

    /// A hook call; on an async function a returned future is awaited.
    fn hook(&self, hook: &Option<syn::Expr>, after_attempt: bool) -> TokenStream {
        let Some(hook) = hook else {
            return code!();
        };
        let Parts {
            private, outcome, ..
        } = self;
        let seen = if after_attempt {
            code!(::core::option::Option::Some(&#outcome))
        } else {
            match self.ret {
                Some(ret) => code!(::core::option::Option::None::<&#ret>),
                None => code!(::core::option::Option::None),
            }
        };
        // At the hook: one of the wrong type is reported there.
        let arguments = code!(&__retry_call.context(#seen), #hook);
        if self.is_async {
            let call = private_call("call_hook", hook.span(), arguments);
            // A hook that returns neither `()` nor a future is reported at
            // the hook.
            let probe = Ident::new("__retry_hook", hook.span());
            code! {
                #private::HookReturn::new(#call).#probe().await;
            }
        } else {
            let call = private_call("call_sync_hook", hook.span(), arguments);
            code!(#call;)
        }
    }
}

/// The classifier handed to `Call::decide`: a function of the error.
/// Without `on` it is the error type's own classification, named at the
/// error type so that a type without one is reported there.
fn classifier(args: &Args, private: &Ident, error_span: Span, external_api: bool) -> TokenStream {
    match &args.on {
        None | Some(On::Transient) => {
            // Every token of the call at the error type's own span, so that a
            // type without a classification is reported there, once.
            let by_type = private_path("classify_by_type", error_span);
            if external_api {
                let error = Ident::new("__retry_error", error_span);
                let classify = quote_spanned!(error_span=> #by_type(#error));
                code!(|#error| #private::external_api(#classify))
            } else {
                // The function itself: a closure around it is one more body
                // for the compiler to check.
                by_type
            }
        }
        Some(On::Matches(pat)) => {
            code!(|__retry_e| #private::into_class(::core::matches!(__retry_e, #pat)))
        }
        Some(On::Closure(closure)) => {
            // At the closure's own span, so that a closure returning the
            // wrong type is reported there.
            let span = syn::spanned::Spanned::span(closure);
            let with = private_path("classify_with", span);
            quote_spanned!(span=> |__retry_e| #with(__retry_e, #closure))
        }
        Some(On::Expr(expr)) => {
            // The error handed to it at the classifier, keeping the
            // closure's hygiene: a classifier of another error type is
            // reported there.
            let error = Ident::new("__retry_e", Span::mixed_site().located_at(expr.span()));
            code!(|__retry_e| #private::Classify::classify(&__retry_on, #error))
        }
    }
}

/// For each by-value argument, or field of one, that each attempt moves, a
/// check at the move that fails to compile, naming `clone(..)`, unless its
/// type is `Copy` or a `&mut` (which a call reborrows). The trait is local,
/// so that its message can name the argument.
fn moved_checks(
    sig: &syn::Signature,
    body: &item::Body,
    kind: &Kind,
    args: &Args,
    private: &Ident,
) -> TokenStream {
    let cloned = args.clone.as_deref().unwrap_or_default();
    // A body ending in an async block was parsed already, to find it; only
    // the block's content runs once per attempt.
    let parsed = || match kind {
        Kind::AsyncBlock { block, retried, .. } => Some(moves::Parsed {
            each_attempt: Cow::Borrowed(&**retried),
            once: Some(&**block),
        }),
        Kind::Sync | Kind::Async => body.block().ok().map(|block| moves::Parsed {
            each_attempt: Cow::Owned(block),
            once: None,
        }),
    };
    moves::moved_arguments(sig, parsed, cloned)
        .into_iter()
        .map(|moves::Moved { name, fields, at }| {
            // As the user writes it: `r#type` stays raw in `clone(r#type)`.
            let name_text = name.to_string();
            let path: String = fields
                .iter()
                .map(|field| match field {
                    syn::Member::Named(ident) => format!(".{ident}"),
                    syn::Member::Unnamed(index) => format!(".{}", index.index),
                })
                .collect();
            // A by-value `self` cannot be cloned for each attempt by
            // `clone(..)`: it is borrowed instead.
            let (whole, remedy) = if name_text == "self" {
                (
                    "`self`".to_owned(),
                    "take `&self` (or `&mut self`) and clone what each attempt needs".to_owned(),
                )
            } else {
                (
                    format!("the argument `{name_text}`"),
                    format!(
                        "write `#[retry(clone({name_text}), ..)]` so that each attempt moves a clone of its own, or borrow it"
                    ),
                )
            };
            let moved = if fields.is_empty() {
                whole
            } else {
                format!("`{name_text}{path}` out of {whole}")
            };
            // All in the message: for this trait, which the expansion
            // defines, rustc 1.95 shows the message but not a label or
            // note (`tests-build` pins what it shows).
            let message = format!(
                "the body moves {moved}, but `#[retry]` runs the body once per attempt: {remedy}"
            );
            let mut used = name.clone();
            used.set_span(at);
            // The place's type picks, by autoref, what must be `Copy`. The
            // check's argument spans the place, as written, where rustc
            // reports the unmet bound.
            let end = fields.last().map_or(at, Spanned::span);
            let receiver = quote_spanned!(at=> (&&#private::Moved(&#used #(.#fields)*)));
            let method = quote_spanned!(end=> __retry_moved());
            let check = quote_spanned!(at=> __retry_reusable(#receiver.#method));
            // Diagnostic attributes are read only with call-site spans.
            let on_unimplemented = quote::quote! {
                #[diagnostic::on_unimplemented(message = #message)]
            };
            let do_not_recommend = quote::quote!(#[diagnostic::do_not_recommend]);
            code! {
                {
                    #[allow(unused_imports)]
                    use #private::{MovedAway as _, MovedReborrow as _};
                    #on_unimplemented
                    trait __RetryReusable {}
                    #do_not_recommend
                    impl<T: ::core::marker::Copy + ?::core::marker::Sized> __RetryReusable for T {}
                    fn __retry_reusable<T: __RetryReusable + ?::core::marker::Sized>(_: &T) {}
                    #check;
                }
            }
        })
        .collect()
}

/// The body of one attempt: the user's statements, with `let x = x.clone();`
/// for each `clone(x)` put first inside their braces (a block nested in
/// another would draw an `unused_braces` warning on one-line bodies).
fn attempt_body(body: &item::Body, args: &Args) -> TokenStream {
    let clones = args
        .clone
        .iter()
        .flatten()
        // At the name in `clone(..)`: an argument that cannot be cloned is
        // reported there.
        .map(|name| quote_spanned!(name.span()=> let #name = ::core::clone::Clone::clone(&#name);));
    body.with_first(clones.collect())
}

/// A type with `impl Trait` replaced by `_`, or `None` when nothing of it
/// can be named; and whether it is named whole, with nothing replaced.
fn erased(ty: &Type) -> Option<(Type, bool)> {
    let mut ty = ty.clone();
    let mut eraser = ImplTraitEraser { erased: false };
    eraser.visit_type_mut(&mut ty);
    match ty {
        Type::Infer(_) => None,
        ty => Some((ty, !eraser.erased)),
    }
}

struct ImplTraitEraser {
    erased: bool,
}

impl VisitMut for ImplTraitEraser {
    fn visit_type_mut(&mut self, ty: &mut Type) {
        if let Type::ImplTrait(impl_trait) = ty {
            self.erased = true;
            *ty = Type::Infer(syn::TypeInfer {
                underscore_token: syn::Token![_](impl_trait.impl_token.span),
            });
        } else {
            syn::visit_mut::visit_type_mut(self, ty);
        }
    }
}

/// Where the error type is written: `E` in `-> Result<T, E>`, else the
/// whole return type (an alias such as `io::Result<T>` hides it).
fn error_type_span(output: &ReturnType, kind: &Kind) -> Span {
    let ty = match (kind, output) {
        (Kind::AsyncBlock { output, .. }, _) => &**output,
        (_, ReturnType::Type(_, ty)) => &**ty,
        (_, ReturnType::Default) => return Span::call_site(),
    };
    if let Type::Path(path) = ty
        && let Some(last) = path.path.segments.last()
        && let syn::PathArguments::AngleBracketed(args) = &last.arguments
        && let Some(syn::GenericArgument::Type(error)) = args.args.iter().nth(1)
    {
        return type_span::first_token(error);
    }
    type_span::first_token(ty)
}
