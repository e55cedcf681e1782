//! The loop around the attempts: run one, let the core judge it, call the
//! hooks, then return or wait; and `SyncEarly`'s first attempt, which hands
//! the rest of the call to the core.

use proc_macro2::{Punct, Spacing, Span, TokenStream};
use quote::quote_spanned;
use syn::Ident;
use syn::spanned::Spanned;

use super::Parts;
use super::judge::Source;
use crate::args::Args;
use crate::shape::{Shape, Wait};
use crate::spanned::{call_at, own_sleep_awaited, private_call, private_path};

impl Parts<'_> {
    /// The loop: run an attempt, let the core judge it, call the hooks, then
    /// return or wait.
    pub(super) fn retry_loop(&self, args: &Args, attempt: TokenStream) -> TokenStream {
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
        if let (Shape::AsyncHedged, Some(hedge)) = (self.shape, &args.hedge) {
            return self.hedged_loop(args, hedge, attempt);
        }
        let judge = self.judge(args);
        let decide = Ident::new("decide", self.return_span);
        let before = self.hook(&args.hooks.before, false);
        let after = self.hook(&args.hooks.after, true);
        let on_retry = self.hook(&args.hooks.on_retry, true);
        let on_give_up = self.hook(&args.hooks.on_give_up, true);
        // Waiting in the next attempt, the attempt opens its own span after
        // the wait.
        let in_next_attempt = self.shape == Shape::Async(Wait::InNextAttempt);
        let begin_attempt = if in_next_attempt {
            code!()
        } else {
            code!(__retry_call.begin_attempt();)
        };
        let sleep = match (&args.sleep, self.shape.is_async()) {
            _ if in_next_attempt => code!(__retry_call.wait_next(__retry_delay)),
            (None, true) => code!(#private::wait(&mut __retry_call, __retry_delay).await),
            (Some(sleep), true) => own_sleep_awaited(sleep.span()),
            (None, false) => code!(#private::thread_sleep(__retry_delay)),
            (Some(_), false) => code!(__retry_sleep(__retry_delay)),
        };
        let refusal = self.refusal(args, &self.with_fallback(args, on_give_up.clone()));
        let decision = call_at(
            self.classified_at,
            &decide,
            code!(#policy, #borrowed, #judge),
        );
        // Without hooks after the attempt, only a retry goes on.
        let decided = if after.is_empty() && on_retry.is_empty() && on_give_up.is_empty() {
            // Under `fallback = ..`, a give-up breaks out to it.
            let gave_up = args
                .fallback
                .as_ref()
                .map(|_| code!(#private::Decision::GiveUp(_) => break '__retry_loop #outcome,));
            code! {
                match #decision {
                    #private::Decision::Retry(__retry_delay) => __retry_delay,
                    #gave_up
                    _ => return #outcome,
                }
            }
        } else {
            let taken = self.decision_taken(args, &after, &on_retry, &on_give_up);
            code! {
                let __retry_decision = #decision;
                #taken
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
        let looped = code! {
            loop {
                #begin_attempt
                #before
                let __retry_delay = {
                    let #outcome = #attempt;
                    #fallible
                    #decided
                };
                #sleep;
            }
        };
        let looped = self.then_fallback(args, looped);
        code! {
            #refusal
            #last
            #looped
        }
    }

    /// What follows `__retry_decision`, with the hooks after an attempt:
    /// `after`, then a return, or `on_give_up` and a return, or
    /// `on_retry` and the delay.
    pub(super) fn decision_taken(
        &self,
        args: &Args,
        after: &TokenStream,
        on_retry: &TokenStream,
        on_give_up: &TokenStream,
    ) -> TokenStream {
        let Parts {
            private, outcome, ..
        } = self;
        let gave_up = self.gave_up(args);
        // Under `after`, a success is counted as it is returned
        // (`count_success_on_return`, made with the call).
        let returned = if after.is_empty() {
            code!(return #outcome)
        } else {
            code!({
                __retry_call.returns();
                return #outcome;
            })
        };
        code! {
            #after
            match __retry_decision {
                #private::Decision::Return => #returned,
                #private::Decision::GiveUp(_) => {
                    #on_give_up
                    #gave_up
                }
                #private::Decision::Retry(__retry_delay) => {
                    #on_retry
                    __retry_delay
                }
            }
        }
    }

    /// Under `breaker = classic(..)` and `throttle = ..`, what refuses the
    /// call before its first attempt while the breaker is open or the
    /// throttle rejects it, calling `on_give_up`. Like `timed`, the
    /// refusal is spanned at the return type, which is what must be able
    /// to stand for it.
    pub(super) fn refusal(&self, args: &Args, on_give_up: &TokenStream) -> Option<TokenStream> {
        let refuses = args.breaker.as_ref().is_some_and(|b| b.classic);
        let throttles = args.throttle.is_some();
        let check = |asks: &str, answers: &str| {
            let outcome = &self.outcome;
            let fields = self.fields(args);
            let asks = Ident::new(asks, Span::call_site());
            let answers = Ident::new(answers, self.return_span);
            let ret = self.ret.as_ref().map(|ret| code!(::<#ret>));
            code! {
                if __retry_call.#asks() {
                    let #outcome = __retry_call.#answers #ret(#fields);
                    #on_give_up
                    return #outcome;
                }
            }
        };
        let breaker = refuses.then(|| check("refuses", "refused"));
        let throttle = throttles.then(|| check("throttles", "throttled"));
        (refuses || throttles).then(|| code!(#breaker #throttle))
    }

    /// A sync call that runs its first attempt before its call is built,
    /// and the rest in the core ([`Shape::SyncEarly`]): `body` is the
    /// body's closure, which every attempt calls.
    pub(super) fn early_first_attempt(&self, args: &Args, body: TokenStream) -> TokenStream {
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
        // How the rest of the call waits: on the thread without a deadline
        // for most functions, named as the core's constant.
        let late = match (&args.deadline, self.ret) {
            // What stands for an attempt that a wait ran past the deadline:
            // probed only where there is a deadline.
            (Some(_), Some(ret)) => {
                Some(code!(#private::Probe::<#ret>::new().__retry_from_timeout()))
            }
            _ => None,
        };
        let waits = match (&args.sleep, late) {
            (None, None) => code!(#private::THREAD_WAITS),
            (sleep, late) => {
                let sleep = match sleep {
                    // A closure of its own, which returns nothing whatever
                    // the sleeper does: one that returns something is
                    // reported once, by `sync_sleeper`, not again by the
                    // loop's bound.
                    Some(_) => code!(&|__retry_d| {
                        __retry_sleep(__retry_d);
                    }),
                    None => code!(#private::thread_sleep),
                };
                let late = late.unwrap_or_else(|| code!(#private::NoDeadline));
                code!(#private::Waits::new(#sleep, #late))
            }
        };
        let waits = match &args.fallback {
            Some(_) => code!(#waits.ending(&mut __retry_ended)),
            None => waits,
        };
        // Under `fallback = ..`, a call that gives up leaves what its
        // fallback needs in `__retry_ended`, and the fallback answers after
        // the call, where the body's closure borrows nothing any more.
        let (ended, ended_slot, answered) = match &args.fallback {
            Some(_) => {
                let answered = self.with_fallback(args, code!());
                (
                    code!(let mut __retry_ended = ::core::option::Option::None;),
                    code!(::core::option::Option::Some(&mut __retry_ended)),
                    code! {
                        // The call's end, under the name the fallback's
                        // code gives the call.
                        let #outcome = match __retry_ended {
                            ::core::option::Option::Some(__retry_call) => {
                                #answered
                                #outcome
                            }
                            ::core::option::Option::None => #outcome,
                        };
                    },
                )
            }
            None => (code!(), code!(::core::option::Option::None), code!()),
        };
        // Under `throttle = ..`, a rejected call; spanned at the return
        // type, which must be able to stand for it.
        let refusal = args.throttle.as_ref().map(|_| {
            let throttled = Ident::new("throttled_early", self.return_span);
            let ret = self.ret.as_ref().map(|ret| code!(::<_, #ret>));
            code! {
                if #private::throttles(#policy) {
                    let #outcome = #private::#throttled #ret(#policy, &__RETRY_SITE, #ended_slot);
                    #answered
                    return #outcome;
                }
            }
        });
        // The body's closure is bound first, so that the outcome's type is
        // known when the closures that read it pick their methods.
        code! {
            #ended
            #refusal
            let __retry_body = #body;
            let #outcome = #private::run_sync(
                #policy,
                &__RETRY_SITE,
                __retry_body,
                #judge_value,
                &#classify,
                #describe,
                #waits,
            );
            #fallible
            #answered
            #outcome
        }
    }

    /// Without `if_result`, the check that the outcome is a `Result`, at
    /// the return type; none where the attempt makes it
    /// ([`async_attempt`](Self::async_attempt)).
    pub(super) fn fallible(&self, args: &Args) -> TokenStream {
        let outcome = &self.outcome;
        match &args.if_result {
            Some(_) => code!(),
            None if self.shape.is_async() && self.ret.is_some() => code!(),
            None => {
                let check = private_path("assert_fallible", self.return_span);
                quote_spanned!(self.return_span=> #check(&#outcome);)
            }
        }
    }

    /// A hook call; on an async function a returned future is awaited.
    pub(super) fn hook(&self, hook: &Option<syn::Expr>, after_attempt: bool) -> TokenStream {
        if hook.is_none() {
            return code!();
        }
        let outcome = &self.outcome;
        let seen = if after_attempt {
            code!(::core::option::Option::Some(&#outcome))
        } else {
            match self.ret {
                Some(ret) => code!(::core::option::Option::None::<&#ret>),
                None => code!(::core::option::Option::None),
            }
        };
        self.hook_with(hook, code!(__retry_call.context(#seen)))
    }

    /// A hook call with the context `context` makes.
    pub(super) fn hook_with(&self, hook: &Option<syn::Expr>, context: TokenStream) -> TokenStream {
        let Some(hook) = hook else {
            return code!();
        };
        let private = self.private;
        // At the hook: one of the wrong type is reported there.
        let arguments = code!(&#context, #hook);
        if self.shape.is_async() {
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
