//! Parsing `#[retry(...)]` arguments. Every rule that one argument can check
//! on its own is checked here, with the error on that argument; rules that
//! relate arguments to each other or to the function are in `validate`.
//! Each argument's parser lives with the others of its kind.

mod backoff;
mod functions;
mod hedge;
mod jitter;
mod keywords;
mod literals;
mod max;
mod on;
mod shared;
mod syntax;

use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::{Expr, Ident, LitStr, Path, Token, token};

pub use backoff::{Backoff, Curve, Custom};
pub use functions::Fallback;
pub use hedge::{After, Hedge};
pub use jitter::Jitter;
pub use keywords::{Idempotent, Preset};
pub use max::Max;
pub use on::On;
pub use shared::Breaker;

use crate::duration::Dur;
use crate::hint;
use syntax::{parse_names, positive, put, put_value};

/// The hooks, each a function or closure of a `&Context`.
#[derive(Default)]
pub struct Hooks {
    pub before: Option<Expr>,
    pub after: Option<Expr>,
    pub on_retry: Option<Expr>,
    pub on_give_up: Option<Expr>,
}

impl Hooks {
    /// Whether any hook is given.
    pub fn any(&self) -> bool {
        [&self.before, &self.after, &self.on_retry, &self.on_give_up]
            .iter()
            .any(|hook| hook.is_some())
    }
}

/// All arguments, each at most once.
#[derive(Default)]
pub struct Args {
    pub on: Option<On>,
    pub max: Option<Max>,
    pub backoff: Option<Backoff>,
    pub jitter: Option<Jitter>,
    pub deadline: Option<Dur>,
    /// With its key, since it is refused on sync functions.
    pub attempt_timeout: Option<(Ident, Dur)>,
    pub honor_retry_after: Option<bool>,
    pub max_retry_after: Option<Dur>,
    pub if_result: Option<Expr>,
    pub hooks: Hooks,
    pub fields: Option<Vec<Ident>>,
    pub preset: Option<Preset>,
    pub clone: Option<Vec<Ident>>,
    pub name: Option<LitStr>,
    pub krate: Option<Path>,
    pub sleep: Option<Expr>,
    pub budget: Option<Expr>,
    pub breaker: Option<Breaker>,
    pub throttle: Option<Expr>,
    pub fallback: Option<Fallback>,
    pub limit: Option<Expr>,
    pub dead_letter: Option<Expr>,
    pub alert_after: Option<u32>,
    pub on_alert: Option<Expr>,
    /// With its key, since it cannot go with a custom backoff.
    pub policy: Option<(Ident, Expr)>,
    pub nested_single: Option<bool>,
    pub idempotent: Option<Idempotent>,
    pub hedge: Option<Hedge>,
}

impl Parse for Args {
    fn parse(input: ParseStream) -> syn::Result<Args> {
        let mut args = Args::default();
        while !input.is_empty() {
            let key = input
                .call(Ident::parse_any)
                .map_err(|e| syn::Error::new(e.span(), hint::expected_key()))?;
            args.parse_argument(key, input)?;
            if input.is_empty() {
                break;
            }
            if input.peek(token::Paren) {
                // `jitter = full(0.5)`, `nested = single(2)`: a value that
                // takes no arguments, given some.
                let group: proc_macro2::Group = input.parse()?;
                return Err(syn::Error::new(
                    group.span(),
                    "this value takes no arguments in parentheses; `#[retry]` arguments are separated by `,`",
                ));
            }
            input.parse::<Token![,]>().map_err(|e| {
                syn::Error::new(e.span(), "expected `,` between `#[retry]` arguments")
            })?;
        }
        Ok(args)
    }
}

impl Args {
    /// Parses the argument named `key` into its slot.
    fn parse_argument(&mut self, key: Ident, input: ParseStream) -> syn::Result<()> {
        let name = key.to_string();
        match name.as_str() {
            "on" => put_value(&mut self.on, key, input, on::parse_on),
            "max" => put_value(&mut self.max, key, input, max::parse_max),
            "backoff" => put_value(&mut self.backoff, key, input, backoff::parse_backoff),
            "jitter" => put(&mut self.jitter, key, input, jitter::parse_jitter),
            "deadline" => put_value(&mut self.deadline, key, input, |input| {
                positive(input, "deadline")
            }),
            "attempt_timeout" => {
                let at = key.clone();
                put_value(&mut self.attempt_timeout, key, input, |input| {
                    Ok((at, positive(input, "attempt_timeout")?))
                })
            }
            "retry_after" => put_value(
                &mut self.honor_retry_after,
                key,
                input,
                keywords::retry_after,
            ),
            "max_retry_after" => put_value(
                &mut self.max_retry_after,
                key,
                input,
                literals::max_retry_after,
            ),
            "if_result" => put_value(&mut self.if_result, key, input, functions::if_result),
            "before" => put_value(&mut self.hooks.before, key, input, |i| {
                functions::hook(i, &name)
            }),
            "after" => put_value(&mut self.hooks.after, key, input, |i| {
                functions::hook(i, &name)
            }),
            "on_retry" => put_value(&mut self.hooks.on_retry, key, input, |i| {
                functions::hook(i, &name)
            }),
            "on_give_up" => put_value(&mut self.hooks.on_give_up, key, input, |i| {
                functions::hook(i, &name)
            }),
            "fields" => put(&mut self.fields, key, input, |input| {
                parse_names(
                    input,
                    "`fields` lists the arguments recorded in the call's logs: `fields(user_id, order)`",
                )
            }),
            "clone" => put(&mut self.clone, key, input, |input| {
                parse_names(
                    input,
                    "`clone` lists the arguments each attempt gets a clone of: `clone(request, body)`",
                )
            }),
            "preset" => put_value(&mut self.preset, key, input, keywords::preset),
            "budget" => put_value(&mut self.budget, key, input, shared::budget),
            "breaker" => put_value(&mut self.breaker, key, input, shared::breaker),
            "throttle" => put_value(&mut self.throttle, key, input, shared::throttle),
            "fallback" => put_value(&mut self.fallback, key, input, functions::fallback),
            "limit" => put_value(&mut self.limit, key, input, shared::limit),
            "dead_letter" => put_value(&mut self.dead_letter, key, input, shared::dead_letter),
            "alert_after" => put_value(&mut self.alert_after, key, input, literals::alert_after),
            "on_alert" => put_value(&mut self.on_alert, key, input, functions::on_alert),
            "policy" => {
                let at = key.clone();
                put_value(&mut self.policy, key, input, |input| {
                    Ok((at, functions::policy(input)?))
                })
            }
            "nested" => put_value(&mut self.nested_single, key, input, keywords::nested_single),
            "idempotent" => put_value(&mut self.idempotent, key, input, keywords::idempotent),
            "name" => put_value(&mut self.name, key, input, literals::name),
            "crate" => put_value(&mut self.krate, key, input, literals::krate),
            "sleep" => put_value(&mut self.sleep, key, input, functions::sleep),
            "hedge" => {
                let at = key.clone();
                put(&mut self.hedge, key, input, |input| hedge::parse(at, input))
            }
            other => Err(syn::Error::new(key.span(), hint::unknown_key(other))),
        }
    }
}
