//! Durations as users write them: `250ms`, `2s`, `1.5s`, `1m`, or a
//! parenthesised `Duration` expression.

use std::time::Duration;

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote_spanned};
use syn::parse::ParseStream;
use syn::spanned::Spanned;
use syn::{Expr, Lit, Token, token};

/// A duration argument: a literal checked at compile time, or an expression
/// evaluated on every call.
#[derive(Clone)]
pub enum Dur {
    Literal { value: Duration, span: Span },
    Expr(Expr),
}

const UNITS: &str = "`ns`, `us`, `ms`, `s`, `m` or `h`";

impl Dur {
    /// Parses a duration for the argument named `what`.
    pub fn parse(input: ParseStream, what: &str) -> syn::Result<Dur> {
        if input.peek(Token![-]) {
            let minus: Token![-] = input.parse()?;
            let rest: Expr = input.parse()?;
            return Err(syn::Error::new_spanned(
                quote::quote!(#minus #rest),
                format!("`{what}` cannot be negative; write a duration such as `250ms` or `2s`"),
            ));
        }
        if input.peek(token::Paren) {
            // The parentheses only delimit the expression inside the
            // attribute; dropping them spares an `unused_parens` warning.
            return Ok(match input.parse()? {
                Expr::Paren(paren) => Dur::Expr(*paren.expr),
                other => Dur::Expr(other),
            });
        }
        let lit: Lit = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                format!(
                    "`{what}` takes a duration such as `250ms`, `2s` or `1m`, or a parenthesised `Duration` expression such as `(Duration::from_millis(n))`"
                ),
            )
        })?;
        literal(&lit, what)
    }

    /// Whether the value is known at compile time.
    pub fn literal_value(&self) -> Option<Duration> {
        match self {
            Dur::Literal { value, .. } => Some(*value),
            Dur::Expr(_) => None,
        }
    }

    pub fn span(&self) -> Span {
        match self {
            Dur::Literal { span, .. } => *span,
            Dur::Expr(expr) => expr.span(),
        }
    }

    /// `core::time::Duration` tokens for the value.
    pub fn tokens(&self) -> TokenStream {
        match self {
            Dur::Literal { value, span } => {
                let secs = value.as_secs();
                let nanos = value.subsec_nanos();
                quote_spanned!(*span=> ::core::time::Duration::new(#secs, #nanos))
            }
            Dur::Expr(expr) => expr.to_token_stream(),
        }
    }
}

fn literal(lit: &Lit, what: &str) -> syn::Result<Dur> {
    let (digits, suffix, span, is_float) = match lit {
        Lit::Int(int) => (int.base10_digits(), int.suffix(), int.span(), false),
        Lit::Float(float) => (float.base10_digits(), float.suffix(), float.span(), true),
        _ => {
            return Err(syn::Error::new(
                lit.span(),
                format!(
                    "`{what}` takes a duration such as `250ms`, `2s` or `1m`, not a string or other literal"
                ),
            ));
        }
    };
    if suffix.is_empty() {
        let example = if is_float {
            "`500ms` or `1.5s`"
        } else {
            "`5s` or `5ms`"
        };
        return Err(syn::Error::new(
            span,
            format!("`{what}` needs a unit after the number, such as {example}; units are {UNITS}"),
        ));
    }
    let Some(unit_nanos) = unit_nanos(suffix) else {
        let hint = match suffix {
            "sec" | "secs" | "second" | "seconds" => " (seconds are `s`)",
            "min" | "mins" | "minute" | "minutes" => " (minutes are `m`)",
            "msec" | "msecs" | "millis" => " (milliseconds are `ms`)",
            "hr" | "hrs" | "hour" | "hours" => " (hours are `h`)",
            "µs" | "micros" => " (microseconds are `us`)",
            _ => "",
        };
        return Err(syn::Error::new(
            span,
            format!("unknown duration unit `{suffix}` in `{what}`{hint}; units are {UNITS}"),
        ));
    };
    let too_large = || syn::Error::new(span, format!("`{what}` is too large for a `Duration`"));
    let nanos: u128 = if is_float {
        let Some(nanos) = whole_nanos(digits, unit_nanos) else {
            return Err(too_large());
        };
        // As the run-time text form reads durations: a part of a
        // nanosecond is refused, not rounded, so that `0.5ns` means the
        // same written here and in a policy. A duration below one
        // nanosecond is more likely a slip of the unit than a wish to
        // wait nothing.
        match nanos {
            Ok(nanos) => nanos,
            Err(0) => {
                return Err(syn::Error::new(
                    span,
                    format!(
                        "`{what}` is below one nanosecond, the smallest step of a `Duration`: write `1ns` or more"
                    ),
                ));
            }
            Err(_) => {
                return Err(syn::Error::new(
                    span,
                    format!(
                        "`{what}` is not a whole number of nanoseconds, the smallest step of a `Duration`"
                    ),
                ));
            }
        }
    } else {
        let value: u128 = digits.parse().map_err(|_| too_large())?;
        value.checked_mul(unit_nanos).ok_or_else(too_large)?
    };
    let secs = u64::try_from(nanos / 1_000_000_000).map_err(|_| too_large())?;
    let value = Duration::new(secs, (nanos % 1_000_000_000) as u32);
    Ok(Dur::Literal { value, span })
}

/// `digits`, a decimal number of units of `unit_nanos` nanoseconds each, in
/// nanoseconds, computed exactly: `Err` with the whole nanoseconds when it
/// is not a whole number of them; `None` when it is not such a number or
/// too large.
fn whole_nanos(digits: &str, unit_nanos: u128) -> Option<Result<u128, u128>> {
    if digits.contains(['e', 'E']) {
        // Written with an exponent: read as a float, whose nanoseconds
        // are whole or not as exactly as it holds them.
        let nanos = digits.parse::<f64>().ok()? * unit_nanos as f64;
        if !nanos.is_finite() || nanos >= u128::MAX as f64 {
            return None;
        }
        let whole = nanos.trunc() as u128;
        return Some(if nanos.fract() == 0.0 {
            Ok(whole)
        } else {
            Err(whole)
        });
    }
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let whole: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let scale = 10u128.checked_pow(u32::try_from(fraction.len()).ok()?)?;
    let fraction: u128 = if fraction.is_empty() {
        0
    } else {
        fraction.parse().ok()?
    };
    let part = fraction.checked_mul(unit_nanos)?;
    let nanos = whole.checked_mul(unit_nanos)?.checked_add(part / scale)?;
    Some(if part % scale == 0 {
        Ok(nanos)
    } else {
        Err(nanos)
    })
}

fn unit_nanos(suffix: &str) -> Option<u128> {
    Some(match suffix {
        "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60 * 1_000_000_000,
        "h" => 3_600 * 1_000_000_000,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse::Parser;

    fn parse(text: &str) -> syn::Result<Dur> {
        let parser = |input: ParseStream| Dur::parse(input, "deadline");
        parser.parse_str(text)
    }

    fn value(text: &str) -> Duration {
        match parse(text) {
            Ok(dur) => dur.literal_value().expect("a literal"),
            Err(e) => panic!("{text}: {e}"),
        }
    }

    fn error(text: &str) -> String {
        match parse(text) {
            Ok(_) => panic!("{text} parsed"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn every_unit() {
        assert_eq!(value("5ns"), Duration::from_nanos(5));
        assert_eq!(value("5us"), Duration::from_micros(5));
        assert_eq!(value("250ms"), Duration::from_millis(250));
        assert_eq!(value("2s"), Duration::from_secs(2));
        assert_eq!(value("1m"), Duration::from_secs(60));
        assert_eq!(value("1h"), Duration::from_secs(3600));
        assert_eq!(value("1.5s"), Duration::from_millis(1500));
        assert_eq!(value("1_000ms"), Duration::from_secs(1));
        assert_eq!(value("0.001ms"), Duration::from_micros(1));
        assert_eq!(value("0.0s"), Duration::ZERO);
    }

    #[test]
    fn expressions_in_parentheses_are_kept() {
        assert!(matches!(
            parse("(Duration::from_millis(n))"),
            Ok(Dur::Expr(_))
        ));
    }

    #[test]
    fn bad_durations_say_what_is_allowed() {
        assert!(error("5parsecs").contains("unknown duration unit `parsecs`"));
        assert!(error("5secs").contains("seconds are `s`"));
        assert!(error("-1s").contains("cannot be negative"));
        assert!(error("0.5").contains("needs a unit"));
        assert!(error("5").contains("needs a unit"));
        assert!(error("\"5s\"").contains("not a string"));
        assert!(error("99999999999999999999999h").contains("too large"));
        assert!(error("five").contains("takes a duration"));
        assert!(error("0.1ns").contains("below one nanosecond"));
        assert!(error("0.0000000001s").contains("below one nanosecond"));
        assert!(error("0.5ns").contains("below one nanosecond"));
        assert!(error("1.5ns").contains("not a whole number of nanoseconds"));
        assert!(error("1e400s").contains("too large"));
    }
}

/// The attribute and a policy's text form read a duration alike: each case
/// here, written in both, gives the same value or is refused by both.
#[cfg(test)]
mod as_a_policy_reads_it {
    use std::time::Duration;

    use syn::parse::{ParseStream, Parser};

    use super::Dur;

    #[test]
    fn the_attribute_and_the_text_form_read_durations_alike() {
        for text in [
            "250ms",
            "1.5s",
            "0.001ms",
            "1ns",
            "0.5ns",
            "1.5ns",
            "0.1ns",
            "1.25us",
            "0.0000000001s",
        ] {
            let attribute = (|input: ParseStream| Dur::parse(input, "deadline"))
                .parse_str(text)
                .ok()
                .and_then(|dur| dur.literal_value());
            let policy = format!("deadline = {text}")
                .parse::<reattempt_core::dynamic::DynamicPolicy>()
                .ok()
                .and_then(|policy| policy.deadline);
            assert_eq!(attribute, policy, "{text}");
        }
        assert_eq!(
            "deadline = 1.25us"
                .parse::<reattempt_core::dynamic::DynamicPolicy>()
                .unwrap()
                .deadline,
            Some(Duration::from_nanos(1250))
        );
    }
}
