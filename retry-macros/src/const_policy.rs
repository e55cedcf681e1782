//! A policy of literals as the core's `ConstPolicy` type, whose constant the
//! function names instead of a `static` of its own: rustc checks and
//! evaluates each function's `static` item on its own, but an associated
//! constant of a type it has checked once only for its values
//! (`benches/HISTORY.md`, Compile cost, gives what that saved).

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::quote_spanned;

use crate::args::{Args, Backoff, Curve, Idempotent, Jitter, Max};
use crate::duration::Dur;

/// The core's markers (`retry-core/src/const_policy.rs`); the defaults
/// they stand for are the core's alone.
const NONE: u64 = u64::MAX;
const JITTER_NONE: u64 = u64::MAX;
const JITTER_FULL: u64 = u64::MAX - 1;
const JITTER_EQUAL: u64 = u64::MAX - 2;
const JITTER_DECORRELATED: u64 = u64::MAX - 3;
const JITTER_DEFAULT: u64 = u64::MAX - 4;
const IGNORE_RETRY_AFTER: u64 = 1;
const NESTED_SINGLE: u64 = 1 << 1;
const NOT_IDEMPOTENT: u64 = 1 << 2;
const IDEMPOTENCY_KEY: u64 = 1 << 3;
const ALERT_AFTER_SHIFT: u32 = 32;

/// `private::ConstPolicy::<..>::REF` for the arguments' policy, or `None` when
/// it holds shared state (a budget, breaker, limit, dead-letter sink or
/// alert hook), a preset (whose values the builder names), a curve or
/// duration that is not a literal, or a duration past what `u64`
/// nanoseconds hold: those keep a `static`.
pub fn named(args: &Args, private: &Ident) -> Option<TokenStream> {
    let shared = [&args.budget, &args.limit, &args.dead_letter, &args.on_alert];
    if shared.iter().any(|expr| expr.is_some()) || args.breaker.is_some() || args.preset.is_some() {
        return None;
    }
    let backoff = backoff(args.backoff.as_ref(), private)?;
    let max = match &args.max {
        None => NONE,
        Some(Max::Limited(n)) => u64::from(*n),
        Some(Max::Unbounded(_) | Max::Forever(_)) => 0,
    };
    let jitter = match &args.jitter {
        None | Some(Jitter::None) => JITTER_NONE,
        Some(Jitter::Default) => JITTER_DEFAULT,
        Some(Jitter::Proportional(ratio)) => ratio.to_bits(),
        Some(Jitter::Full) => JITTER_FULL,
        Some(Jitter::Equal) => JITTER_EQUAL,
        Some(Jitter::Decorrelated) => JITTER_DECORRELATED,
    };
    let or_none = |d: Option<&Dur>| d.map_or(Some(NONE), nanos);
    let deadline = or_none(args.deadline.as_ref())?;
    let timeout = or_none(args.attempt_timeout.as_ref().map(|(_, d)| d))?;
    let max_retry_after = or_none(args.max_retry_after.as_ref())?;
    let mut options = u64::from(args.alert_after.unwrap_or(0)) << ALERT_AFTER_SHIFT;
    if args.honor_retry_after == Some(false) {
        options |= IGNORE_RETRY_AFTER;
    }
    if args.nested_single == Some(true) {
        options |= NESTED_SINGLE;
    }
    match args.idempotent {
        Some(Idempotent::No) => options |= NOT_IDEMPOTENT,
        Some(Idempotent::Key) => options |= IDEMPOTENCY_KEY,
        Some(Idempotent::Yes) | None => {}
    }
    // The values after the curve, with those not given at the end left
    // out: the type's parameters default to them.
    let mut values = vec![max, jitter, deadline, timeout, max_retry_after, options];
    let not_given = [NONE, JITTER_NONE, NONE, NONE, NONE, 0];
    while let Some(&last) = values.last()
        && last == not_given[values.len() - 1]
    {
        values.pop();
    }
    let values = values.into_iter().map(Literal::u64_unsuffixed);
    Some(quote_spanned! {Span::mixed_site()=>
        #private::ConstPolicy::<#backoff #(, #values)*>::REF
    })
}

/// The curve's type: `Exponential` and `NoBackoff` name their constants,
/// the others take their parts as parameters, [`NONE`] for a part not
/// given (trailing ones left out).
fn backoff(backoff: Option<&Backoff>, private: &Ident) -> Option<TokenStream> {
    let of =
        |of: &str, parts: &[Option<&Dur>], factor: Option<Option<f64>>| -> Option<TokenStream> {
            let of = Ident::new(of, Span::mixed_site());
            let mut parts = parts
                .iter()
                .map(|part| part.map_or(Some(NONE), nanos))
                .collect::<Option<Vec<_>>>()?;
            // `exp`'s factor goes between its base and its cap.
            if let Some(factor) = factor {
                parts.insert(1, factor.map_or(NONE, f64::to_bits));
            }
            // The first part stays: each type needs one parameter.
            while parts.len() > 1 && parts.last() == Some(&NONE) {
                parts.pop();
            }
            let parts = parts.into_iter().map(Literal::u64_unsuffixed);
            Some(quote_spanned!(Span::mixed_site()=> #private::#of<#(#parts),*>))
        };
    match Curve::of(backoff).ok()? {
        Curve::DefaultExp => Some(quote_spanned!(Span::mixed_site()=> #private::Exponential)),
        Curve::Exp { base, factor, max } => of("ExpOf", &[base, max], Some(factor)),
        Curve::Fixed(delay) => of("FixedOf", &[Some(delay)], None),
        Curve::Linear { base, step, max } => of("LinearOf", &[base, step, max], None),
        Curve::Fibonacci { base, max } => of("FibonacciOf", &[base, max], None),
        Curve::None => Some(quote_spanned!(Span::mixed_site()=> #private::NoBackoff)),
    }
}

/// A literal duration in nanoseconds, if `u64` holds it below the marker
/// of one not given.
fn nanos(duration: &Dur) -> Option<u64> {
    u64::try_from(duration.literal_value()?.as_nanos())
        .ok()
        .filter(|&nanos| nanos != NONE)
}

#[cfg(test)]
mod tests {
    use reattempt_core::__private as core;

    #[test]
    fn the_markers_are_the_cores() {
        assert_eq!(super::NONE, core::NONE);
        assert_eq!(super::JITTER_NONE, core::JITTER_NONE);
        assert_eq!(super::JITTER_FULL, core::JITTER_FULL);
        assert_eq!(super::JITTER_EQUAL, core::JITTER_EQUAL);
        assert_eq!(super::JITTER_DECORRELATED, core::JITTER_DECORRELATED);
        assert_eq!(super::JITTER_DEFAULT, core::JITTER_DEFAULT);
        assert_eq!(super::IGNORE_RETRY_AFTER, core::IGNORE_RETRY_AFTER);
        assert_eq!(super::NESTED_SINGLE, core::NESTED_SINGLE);
        assert_eq!(super::NOT_IDEMPOTENT, core::NOT_IDEMPOTENT);
        assert_eq!(super::IDEMPOTENCY_KEY, core::IDEMPOTENCY_KEY);
        assert_eq!(super::ALERT_AFTER_SHIFT, core::ALERT_AFTER_SHIFT);
    }
}
