//! The loop of a hedged function ([`Shape::AsyncHedged`](crate::shape::Shape)):
//! each round of attempts, made by one closure, is one await of the core's
//! `hedged`, which gives the outcome that ended it and the decision on it.

use proc_macro2::TokenStream;
use syn::Ident;
use syn::spanned::Spanned;

use super::Parts;
use crate::args::{After, Args, Hedge};
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
            private,
            outcome,
            policy,
            ..
        } = self;
        let judge = self.judge(args);
        let fallible = self.fallible(args);
        let in_flight = hedge.in_flight;
        // A percentile reads the latencies of the function's attempts,
        // kept in a sketch of its own.
        let (sketch, when) = match &hedge.after {
            After::Fixed(after) => {
                let after = after.tokens();
                (code!(), code!(#private::Hedge::new(#after, #in_flight)))
            }
            After::Percentile { percentile, min } => {
                let min = match min {
                    Some(min) => {
                        let min = min.tokens();
                        code!(::core::option::Option::Some(#min))
                    }
                    None => code!(::core::option::Option::None),
                };
                (
                    code!(static __RETRY_LATENCIES: #private::LatencySketch = #private::LatencySketch::new();),
                    code!(#private::Hedge::percentile(&__RETRY_LATENCIES, #percentile, #min, #in_flight)),
                )
            }
        };
        // One slot for each attempt that may be in flight.
        let mut slots = code!(#private::End);
        for _ in 0..in_flight {
            slots = code!(#private::Slot::new(#slots));
        }
        let hedged = Ident::new("hedged", self.return_span);
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
        // Hooks see each round: `before` its first attempt, the others the
        // attempt that ended it, a hedge or not.
        let before = self.hook(&args.hooks.before, false);
        let ended = code!(__retry_call.round_context(&#outcome, __retry_ended));
        let after = self.hook_with(&args.hooks.after, ended.clone());
        let on_retry = self.hook_with(&args.hooks.on_retry, ended.clone());
        let on_give_up = self.hook_with(&args.hooks.on_give_up, ended);
        let taken = self.decision_taken(&after, &on_retry, &on_give_up);
        let refused = self.hook(&args.hooks.on_give_up, true);
        let refusal = self.refusal(args, &refused);
        code! {
            #refusal
            #sketch
            let __retry_make = || #future;
            loop {
                #before
                let __retry_delay = {
                    let (#outcome, __retry_decision, __retry_ended) = __retry_call.#hedged(
                        #policy,
                        #when,
                        || #slots,
                        &__retry_make,
                        #timer,
                        #cut,
                        #judge
                    ).await;
                    #fallible
                    #taken
                };
                #wait;
            }
        }
    }
}
