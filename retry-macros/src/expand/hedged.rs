//! The loop of a hedged function ([`Shape::AsyncHedged`](crate::shape::Shape)):
//! each round of attempts, made by one closure, runs in a `Round` of the
//! core's, awaited event by event so that the hooks see each attempt.

use proc_macro2::TokenStream;
use syn::Ident;
use syn::spanned::Spanned;

use super::Parts;
use super::judge::Source;
use crate::args::{Args, Hedge};
use crate::spanned::{own_sleep_awaited, private_call};

impl Parts<'_> {
    /// The loop around hedged rounds; `future` makes one attempt.
    pub(super) fn hedged_loop(
        &self,
        args: &Args,
        hedge: &Hedge,
        future: TokenStream,
    ) -> TokenStream {
        let Parts {
            private, outcome, ..
        } = self;
        let judge = self.judge_from(args, Source::Attempts);
        let fallible = self.fallible(args);
        let in_flight = hedge.in_flight;
        // One slot for each attempt that may be in flight.
        let mut slots = code!(#private::End);
        for _ in 0..in_flight {
            slots = code!(#private::Slot::new(#slots));
        }
        let round_event = Ident::new("round_event", self.return_span);
        // What stands for an attempt a timer cuts: a timeout, which
        // `attempt_timeout` needs the outcome type to be made of (reported
        // at the return type), and which a deadline uses where it can.
        let cut = match (&args.attempt_timeout, self.ret) {
            (Some(_), _) => private_call("times_out", self.return_span, code!()),
            (None, Some(ret)) if args.deadline.is_some() || args.policy.is_some() => {
                code!(#private::Probe::<#ret>::new().__retry_from_timeout())
            }
            _ => code!(::core::option::Option::None),
        };
        // Hedges are timed, and retries wait, on the function's sleeper.
        let (timer, wait) = match &args.sleep {
            Some(sleep) => (code!(&__retry_sleep), own_sleep_awaited(sleep.span())),
            None => (
                code!(#private::timer),
                code!(#private::wait(&mut __retry_call, __retry_delay).await),
            ),
        };
        // Hooks see each attempt: `before` the first of each round and
        // each hedge, `after` each that fails beside others and the one
        // that ends the round, which `on_retry` or `on_give_up` follow.
        let ret_none = match self.ret {
            Some(ret) => code!(::core::option::Option::None::<&#ret>),
            None => code!(::core::option::Option::None),
        };
        let before = self.hook(&args.hooks.before, false);
        let before_hedge = self.hook_with(
            &args.hooks.before,
            code!(__retry_call.round_context(#ret_none, __retry_seen)),
        );
        let seen_after = code!(__retry_call.round_context(::core::option::Option::Some(&#outcome), __retry_seen));
        let after = self.hook_with(&args.hooks.after, seen_after.clone());
        let on_retry = self.hook_with(&args.hooks.on_retry, seen_after.clone());
        let on_give_up = self.hook_with(&args.hooks.on_give_up, seen_after);
        let taken = self.decision_taken(args, &after, &on_retry, &on_give_up);
        let refused = self.hook(&args.hooks.on_give_up, true);
        let refused = self.with_fallback(args, refused);
        let refusal = self.refusal(args, &refused);
        // What an arm binds and no hook reads is not bound.
        let bound = |used: bool, name: TokenStream| if used { name } else { code!(_) };
        let hedged_seen = bound(!before_hedge.is_empty(), code!(__retry_seen));
        let beside_out = bound(!after.is_empty(), code!(#outcome));
        let beside_seen = bound(!after.is_empty(), code!(__retry_seen));
        let ended_seen = bound(
            !(after.is_empty() && on_retry.is_empty() && on_give_up.is_empty()),
            code!(__retry_seen),
        );
        let looped = code! {
            loop {
                let mut __retry_round = ::core::pin::pin!(#private::Round::new(#slots));
                __retry_call.begin_round(__retry_round.as_mut(), &__retry_attempts);
                #before
                let __retry_delay = loop {
                    match __retry_call.#round_event(
                        __retry_round.as_mut(),
                        &__retry_attempts,
                        #judge
                    ).await {
                        #private::RoundEvent::Hedged(#hedged_seen) => {
                            #before_hedge
                        }
                        #private::RoundEvent::Beside(#beside_out, #beside_seen) => {
                            #after
                        }
                        #private::RoundEvent::Ended(#outcome, __retry_decision, #ended_seen) => {
                            #fallible
                            break { #taken };
                        }
                    }
                };
                #wait;
            }
        };
        let looped = self.then_fallback(args, looped);
        code! {
            #refusal
            let __retry_make = || #future;
            let __retry_attempts = #private::Attempts::new(&__retry_make, #timer, #cut);
            #looped
        }
    }
}
