//! A policy of literals as the core's `ConstPolicy` type, whose constant the
//! function names instead of a `static` of its own: rustc checks and
//! evaluates each function's `static` item on its own, but an associated
//! constant of a type it has checked once only for its values
//! (`benches/HISTORY.md`, Compile cost, gives what that saved).

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::quote_spanned;

use crate::args::{Args, Backoff, Curve, Idempotent, Jitter, Max};
use crate::duration::Dur;

/// The core's markers and defaults (`retry-core/src/const_policy.rs`).
const NONE: u64 = u64::MAX;
const JITTER_NONE: u64 = u64::MAX;
const JITTER_FULL: u64 = u64::MAX - 1;
const JITTER_EQUAL: u64 = u64::MAX - 2;
const JITTER_DECORRELATED: u64 = u64::MAX - 3;
const IGNORE_RETRY_AFTER: u64 = 1;
const NESTED_SINGLE: u64 = 1 << 1;
const NOT_IDEMPOTENT: u64 = 1 << 2;
const IDEMPOTENCY_KEY: u64 = 1 << 3;
const ALERT_AFTER_SHIFT: u32 = 32;
const DEFAULT_MAX_ATTEMPTS: u64 = 5;
const DEFAULT_MAX_RETRY_AFTER: u64 = 60_000_000_000;

/// `private::ConstPolicy::<..>::REF` for the arguments' policy, or `None` when
/// it holds shared state (a budget, breaker, limit, dead-letter sink or
/// alert hook), a curve or duration that is not a literal, or a duration
/// past what `u64` nanoseconds hold: those keep a `static`.
pub fn named(args: &Args, private: &Ident) -> Option<TokenStream> {
    let shared = [&args.budget, &args.limit, &args.dead_letter, &args.on_alert];
    if shared.iter().any(|expr| expr.is_some()) || args.breaker.is_some() {
        return None;
    }
    let backoff = backoff(args.backoff.as_ref(), private)?;
    let max = match &args.max {
        None => DEFAULT_MAX_ATTEMPTS,
        Some(Max::Limited(n)) => u64::from(*n),
        Some(Max::Unbounded(_)) => 0,
    };
    let jitter = match &args.jitter {
        None | Some(Jitter::None) => JITTER_NONE,
        Some(Jitter::Proportional(ratio)) => ratio.to_bits(),
        Some(Jitter::Full) => JITTER_FULL,
        Some(Jitter::Equal) => JITTER_EQUAL,
        Some(Jitter::Decorrelated) => JITTER_DECORRELATED,
    };
    let or = |d: Option<&Dur>, absent| d.map_or(Some(absent), nanos);
    let deadline = or(args.deadline.as_ref(), NONE)?;
    let timeout = or(args.attempt_timeout.as_ref().map(|(_, d)| d), NONE)?;
    let max_retry_after = or(args.max_retry_after.as_ref(), DEFAULT_MAX_RETRY_AFTER)?;
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
    // The values after the curve, with the defaults at the end left out.
    let mut values = vec![max, jitter, deadline, timeout, max_retry_after, options];
    let defaults = [
        DEFAULT_MAX_ATTEMPTS,
        JITTER_NONE,
        NONE,
        NONE,
        DEFAULT_MAX_RETRY_AFTER,
        0,
    ];
    while let Some(&last) = values.last()
        && last == defaults[values.len() - 1]
    {
        values.pop();
    }
    let values = values.into_iter().map(Literal::u64_unsuffixed);
    Some(quote_spanned! {Span::mixed_site()=>
        #private::ConstPolicy::<#backoff #(, #values)*>::REF
    })
}

/// The curve's type: `Exponential` and `NoBackoff` name their constants,
/// the others take their parts as parameters.
fn backoff(backoff: Option<&Backoff>, private: &Ident) -> Option<TokenStream> {
    let of = |of: &str, parts: &[&Dur], factor: Option<f64>| -> Option<TokenStream> {
        let of = Ident::new(of, Span::mixed_site());
        let mut parts = parts
            .iter()
            .map(|part| nanos(part))
            .collect::<Option<Vec<_>>>()?;
        // `exp`'s factor goes between its base and its cap.
        if let Some(factor) = factor {
            parts.insert(1, factor.to_bits());
        }
        let parts = parts.into_iter().map(Literal::u64_unsuffixed);
        Some(quote_spanned!(Span::mixed_site()=> #private::#of<#(#parts),*>))
    };
    match Curve::of(backoff).ok()? {
        Curve::DefaultExp => Some(quote_spanned!(Span::mixed_site()=> #private::Exponential)),
        Curve::Exp { base, factor, max } => of("ExpOf", &[&base, &max], Some(factor)),
        Curve::Fixed(delay) => of("FixedOf", &[&delay], None),
        Curve::Linear { base, step, max } => of("LinearOf", &[&base, &step, &max], None),
        Curve::Fibonacci { base, max } => of("FibonacciOf", &[&base, &max], None),
        Curve::None => Some(quote_spanned!(Span::mixed_site()=> #private::NoBackoff)),
    }
}

/// A literal duration in nanoseconds, if `u64` holds it below the marker
/// of an absent one.
fn nanos(duration: &Dur) -> Option<u64> {
    u64::try_from(duration.literal_value()?.as_nanos())
        .ok()
        .filter(|&nanos| nanos != NONE)
}

#[cfg(test)]
mod tests {
    use reattempt_core::__private as core;

    #[test]
    fn the_markers_and_defaults_are_the_cores() {
        assert_eq!(super::NONE, core::NONE);
        assert_eq!(super::JITTER_NONE, core::JITTER_NONE);
        assert_eq!(super::JITTER_FULL, core::JITTER_FULL);
        assert_eq!(super::JITTER_EQUAL, core::JITTER_EQUAL);
        assert_eq!(super::JITTER_DECORRELATED, core::JITTER_DECORRELATED);
        assert_eq!(super::IGNORE_RETRY_AFTER, core::IGNORE_RETRY_AFTER);
        assert_eq!(super::NESTED_SINGLE, core::NESTED_SINGLE);
        assert_eq!(super::NOT_IDEMPOTENT, core::NOT_IDEMPOTENT);
        assert_eq!(super::IDEMPOTENCY_KEY, core::IDEMPOTENCY_KEY);
        assert_eq!(super::ALERT_AFTER_SHIFT, core::ALERT_AFTER_SHIFT);
        assert_eq!(
            super::DEFAULT_MAX_ATTEMPTS,
            u64::from(reattempt_core::DEFAULT_MAX_ATTEMPTS)
        );
        assert_eq!(
            u128::from(super::DEFAULT_MAX_RETRY_AFTER),
            reattempt_core::DEFAULT_MAX_RETRY_AFTER.as_nanos()
        );
    }
}
