//! One async attempt as the loop awaits it: in its call's scope, cut by a
//! timer where a deadline or a timeout may, and holding a permit of a
//! `limit`; and what stands for an attempt that the deadline comes before.

use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;
use syn::Ident;
use syn::spanned::Spanned;

use super::Parts;
use crate::args::Args;
use crate::shape::{Shape, Wait};
use crate::spanned::{call_at, private_path};

impl Parts<'_> {
    /// An async attempt: pinned to the return type, seen by
    /// `reattempt::attempt()`, and timed when `attempt_timeout` is given.
    /// Without `if_result`, the function that pins it also takes only a
    /// `Result`, and is spanned at the return type to say so there: one
    /// call fewer for rustc to check in each function.
    pub(super) fn async_attempt(&self, args: &Args, block: TokenStream) -> TokenStream {
        let Parts { private, .. } = self;
        let future = match (self.ret, &args.if_result) {
            (Some(ret), None) => {
                let pin = private_path("fallible_attempt", self.return_span);
                code!(#pin::<#ret, _>(async #block))
            }
            (Some(ret), Some(_)) => code!(#private::attempt::<#ret, _>(async #block)),
            (None, _) => code!(async #block),
        };
        // A hedged round makes its attempts, and runs them, itself.
        if self.shape == Shape::AsyncHedged {
            return future;
        }
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
        let scoped = if self.shape == Shape::Async(Wait::InNextAttempt) {
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
                call_at(Some(self.return_span), &timed, code!(|| #scoped, #timer))
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
                    code!(|| #scoped, #timer, #private::Probe::<#ret>::new().__retry_from_timeout(), #late),
                )
            }
        });
        // The deadline also ends the wait for a permit, where it can.
        let instead = self.instead(args);
        match (&args.limit, timed, instead) {
            (Some(_), Some(timed), Some(instead)) => code! {
                __retry_call.limited_within(|| __retry_call.limited(#timed), #timer, #instead) #wait
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
    pub(super) fn instead(&self, args: &Args) -> Option<TokenStream> {
        self.keeps_last(args).then(|| code!(__retry_last.instead()))
    }

    /// Whether the loop keeps its last failed attempt's outcome, to stand
    /// for an attempt that the deadline comes before.
    pub(super) fn keeps_last(&self, args: &Args) -> bool {
        let deadline = args.deadline.is_some() || args.policy.is_some();
        self.ret.is_some() && deadline
    }

    /// Where the loop keeps it: made before the loop, of a type picked by
    /// the outcome type (nothing where a timeout stands for the attempt,
    /// nor where an async function's future would not be `Send` with it).
    pub(super) fn last_kept(&self, args: &Args) -> Option<TokenStream> {
        let private = self.private;
        let ret = self.ret.as_ref().filter(|_| self.keeps_last(args))?;
        let slot = if self.shape.is_async() {
            code!(__retry_last)
        } else {
            code!(__retry_last_sync)
        };
        Some(code!(let mut __retry_last = #private::Probe::<#ret>::new().#slot();))
    }
}
