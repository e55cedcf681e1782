//! A dynamic policy written as text, in the attribute's own words, so that
//! it can come from an environment variable or a configuration value:
//! `max = 4, backoff = exp(base = 100ms, max = 10s), jitter = full,
//! deadline = 30s`.

use core::fmt;
use core::str::FromStr;
use core::time::Duration;

use super::duration::{Written, parse_duration};
use super::invalid::{ParsePolicyError, syntax};
use super::{BackoffSpec, DynamicPolicy, HedgeSpec};
use crate::backoff::{DEFAULT_BASE, DEFAULT_CAP, DEFAULT_FACTOR};
use crate::hedge::PERCENTILES;
use crate::jitter::Jitter;

/// The settings of the text form, as messages list them.
const SETTINGS: &str = "`max`, `backoff`, `jitter`, `deadline`, `attempt_timeout`, `retry_after`, `max_retry_after`, `hedge`, `fallback`, `throttle_k`, `throttle_window`";

/// What a curve is written as.
pub(super) const CURVES: &str = "`exp`, `exp(base = DUR, factor = F, max = DUR)`, `fixed(DUR)`, `linear(base = DUR, step = DUR, max = DUR)`, `fibonacci(base = DUR, max = DUR)` or `none`";

/// What a jitter is written as.
pub(super) const JITTERS: &str =
    "`none`, `proportional`, `proportional(R)`, `full`, `equal` or `decorrelated`";

/// A policy in the attribute's words, checked as [`DynamicPolicy::check`]
/// checks it.
///
/// ```
/// use reattempt::dynamic::{BackoffSpec, DynamicPolicy};
/// use reattempt::jitter::Jitter;
/// use std::time::Duration;
///
/// let policy: DynamicPolicy =
///     "max = 4, backoff = exp(base = 100ms, max = 10s), jitter = full, deadline = 1m30s"
///         .parse()
///         .unwrap();
/// assert_eq!(policy.max_attempts, Some(4));
/// assert_eq!(policy.jitter, Some(Jitter::Full));
/// assert_eq!(policy.deadline, Some(Duration::from_secs(90)));
/// assert_eq!(policy.to_string().parse::<DynamicPolicy>(), Ok(policy));
/// ```
impl FromStr for DynamicPolicy {
    type Err = ParsePolicyError;

    fn from_str(text: &str) -> Result<DynamicPolicy, ParsePolicyError> {
        let mut policy = DynamicPolicy::new();
        for setting in split_top_level(text)? {
            let setting = setting.trim();
            if setting.is_empty() {
                continue;
            }
            let (key, value) = setting
                .split_once('=')
                .map(|(key, value)| (key.trim(), value.trim()))
                .ok_or_else(|| {
                    syntax(format!(
                        "`{setting}` is not `setting = value`; the settings are {SETTINGS}"
                    ))
                })?;
            let in_setting = |error: ParsePolicyError| match error {
                ParsePolicyError::Syntax(message) => syntax(format!("{key}: {message}")),
                invalid => invalid,
            };
            match key {
                "max" | "max_attempts" => {
                    let attempts = value.parse().map_err(|_| {
                        syntax(format!("{key}: `{value}` is not a number of attempts"))
                    })?;
                    set_once(&mut policy.max_attempts, attempts, key)?;
                }
                "backoff" => set_once(
                    &mut policy.backoff,
                    parse_backoff(value).map_err(in_setting)?,
                    key,
                )?,
                "jitter" => set_once(
                    &mut policy.jitter,
                    parse_jitter(value).map_err(in_setting)?,
                    key,
                )?,
                "deadline" | "attempt_timeout" | "max_retry_after" | "throttle_window" => set_once(
                    duration_field(&mut policy, key),
                    parse_duration(value).map_err(in_setting)?,
                    key,
                )?,
                "hedge" => {
                    let hedge = parse_hedge(value).map_err(in_setting)?;
                    set_once(&mut policy.hedge, hedge, key)?;
                }
                "fallback" => {
                    let on = parse_switch(value).map_err(in_setting)?;
                    set_once(&mut policy.fallback, on, key)?;
                }
                "throttle_k" => {
                    let k = parse_k(value).map_err(in_setting)?;
                    set_once(&mut policy.throttle_k, k, key)?;
                }
                "retry_after" | "honor_retry_after" => {
                    let honor = match value {
                        "honor" | "true" => true,
                        "ignore" | "false" => false,
                        _ => {
                            return Err(syntax(format!(
                                "{key}: `{value}` is neither `honor` nor `ignore`"
                            )));
                        }
                    };
                    set_once(&mut policy.honor_retry_after, honor, key)?;
                }
                _ => {
                    return Err(syntax(format!(
                        "unknown setting `{key}`; the settings are {SETTINGS}"
                    )));
                }
            }
        }
        policy.check()?;
        Ok(policy)
    }
}

/// The field of the policy's duration named `key` (`deadline`,
/// `attempt_timeout`, `max_retry_after` or `throttle_window`), as the text
/// form and configuration name it.
pub(super) fn duration_field<'p>(
    policy: &'p mut DynamicPolicy,
    key: &str,
) -> &'p mut Option<Duration> {
    match key {
        "deadline" => &mut policy.deadline,
        "attempt_timeout" => &mut policy.attempt_timeout,
        "throttle_window" => &mut policy.throttle_window,
        _ => &mut policy.max_retry_after,
    }
}

/// `fallback`: `on` or `off` (or `true` or `false`).
pub(super) fn parse_switch(value: &str) -> Result<bool, ParsePolicyError> {
    match value {
        "on" | "true" => Ok(true),
        "off" | "false" => Ok(false),
        _ => Err(syntax(format!("`{value}` is neither `on` nor `off`"))),
    }
}

/// `throttle_k`: a number, checked with the rest of the policy.
pub(super) fn parse_k(value: &str) -> Result<f64, ParsePolicyError> {
    value
        .parse()
        .map_err(|_| syntax(format!("`{value}` is not a number, such as `2` or `1.5`")))
}

fn set_once<T>(slot: &mut Option<T>, value: T, key: &str) -> Result<(), ParsePolicyError> {
    if slot.is_some() {
        return Err(syntax(format!("`{key}` is given twice")));
    }
    *slot = Some(value);
    Ok(())
}

/// The text split at the commas outside parentheses.
fn split_top_level(text: &str) -> Result<Vec<&str>, ParsePolicyError> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (at, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| syntax(format!("`)` without its `(` in `{text}`")))?;
            }
            ',' if depth == 0 => {
                parts.push(&text[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(syntax(format!("`(` without its `)` in `{text}`")));
    }
    parts.push(&text[start..]);
    Ok(parts)
}

/// A name and what its parentheses hold: `exp(base = 1s)` is
/// `("exp", Some("base = 1s"))`, `full` is `("full", None)`.
fn call(text: &str) -> Result<(&str, Option<&str>), ParsePolicyError> {
    let text = text.trim();
    match text.split_once('(') {
        None => Ok((text, None)),
        Some((name, rest)) => {
            let inside = rest
                .strip_suffix(')')
                .ok_or_else(|| syntax(format!("`{text}` does not end with `)`")))?;
            Ok((name.trim(), Some(inside)))
        }
    }
}

/// A curve in the attribute's words; the parts left out take the
/// attribute's defaults.
pub(crate) fn parse_backoff(text: &str) -> Result<BackoffSpec, ParsePolicyError> {
    let (name, inside) = call(text)?;
    if name == "fixed" {
        let delay = inside
            .filter(|inside| !inside.trim().is_empty() && !inside.contains('='))
            .ok_or_else(|| {
                syntax(format!(
                    "`fixed` takes its delay: `fixed(250ms)`, not `{}`",
                    text.trim()
                ))
            })?;
        return Ok(BackoffSpec::Fixed(parse_duration(delay)?));
    }
    let mut parts = Parts::read(inside.unwrap_or(""))?;
    let spec = match name {
        "exp" | "exponential" => {
            let base = parts.duration("base")?.unwrap_or(DEFAULT_BASE);
            BackoffSpec::Exponential {
                base,
                factor: parts.number("factor")?.unwrap_or(DEFAULT_FACTOR),
                max: parts.duration("max")?.unwrap_or(DEFAULT_CAP.max(base)),
            }
        }
        "linear" => {
            let base = parts.duration("base")?.unwrap_or(DEFAULT_BASE);
            BackoffSpec::Linear {
                base,
                step: parts.duration("step")?.unwrap_or(base),
                max: parts.duration("max")?.unwrap_or(DEFAULT_CAP.max(base)),
            }
        }
        "fibonacci" => {
            let base = parts.duration("base")?.unwrap_or(DEFAULT_BASE);
            BackoffSpec::Fibonacci {
                base,
                max: parts.duration("max")?.unwrap_or(DEFAULT_CAP.max(base)),
            }
        }
        "none" if inside.is_none() => BackoffSpec::None,
        _ => {
            return Err(syntax(format!(
                "`{}` is not a curve; a curve is {CURVES}",
                text.trim()
            )));
        }
    };
    parts.finish(name)?;
    Ok(spec)
}

/// The `key = value` parts of a curve, taken one by one; any left over is
/// an error.
struct Parts<'a>(Vec<(&'a str, &'a str)>);

impl<'a> Parts<'a> {
    fn read(inside: &'a str) -> Result<Parts<'a>, ParsePolicyError> {
        let mut parts = Vec::new();
        for part in inside
            .split(',')
            .map(str::trim)
            .filter(|part| !part.is_empty())
        {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| syntax(format!("`{part}` is not `part = value`")))?;
            parts.push((key.trim(), value.trim()));
        }
        Ok(Parts(parts))
    }

    fn take(&mut self, key: &str) -> Option<&'a str> {
        let at = self.0.iter().position(|(name, _)| *name == key)?;
        Some(self.0.remove(at).1)
    }

    fn duration(&mut self, key: &str) -> Result<Option<Duration>, ParsePolicyError> {
        self.take(key).map(parse_duration).transpose()
    }

    fn number(&mut self, key: &str) -> Result<Option<f64>, ParsePolicyError> {
        self.take(key)
            .map(|value| {
                value
                    .parse()
                    .map_err(|_| syntax(format!("`{value}` is not a number")))
            })
            .transpose()
    }

    fn finish(self, curve: &str) -> Result<(), ParsePolicyError> {
        match self.0.first() {
            None => Ok(()),
            Some((key, _)) => Err(syntax(format!(
                "`{curve}` has no part `{key}`; a curve is {CURVES}"
            ))),
        }
    }
}

/// A jitter in the attribute's words.
pub(crate) fn parse_jitter(text: &str) -> Result<Jitter, ParsePolicyError> {
    Ok(match call(text)? {
        ("none", None) => Jitter::None,
        ("proportional", None) => Jitter::DEFAULT,
        ("proportional", Some(ratio)) => Jitter::Proportional(
            ratio
                .trim()
                .parse()
                .map_err(|_| syntax(format!("`{}` is not a ratio", ratio.trim())))?,
        ),
        ("full", None) => Jitter::Full,
        ("equal", None) => Jitter::Equal,
        ("decorrelated", None) => Jitter::Decorrelated,
        _ => {
            return Err(syntax(format!(
                "`{}` is not a jitter; a jitter is {JITTERS}",
                text.trim()
            )));
        }
    })
}

/// A duration as people write it: `250ms`, `30s`, `1m30s`, `1.5s`, `2h`
/// (also `us` and `ns`).
/// `off`, or the duration after which a slow attempt gets a hedge.
pub(crate) fn parse_hedge(text: &str) -> Result<HedgeSpec, ParsePolicyError> {
    match text {
        "off" => Ok(HedgeSpec::Off),
        percentile if percentile.starts_with('p') => match percentile[1..].parse::<u8>() {
            Ok(n)
                if PERCENTILES.contains(&n)
                    && percentile[1..].starts_with(|c: char| c.is_ascii_digit()) =>
            {
                Ok(HedgeSpec::Percentile(n))
            }
            _ => Err(syntax(format!(
                "`{percentile}` is not a percentile for `hedge`: from `p50` to `p99`, such as `p95`"
            ))),
        },
        after => parse_duration(after).map(HedgeSpec::After),
    }
}

impl fmt::Display for BackoffSpec {
    /// The curve in the attribute's words, every part written out.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            BackoffSpec::Exponential { base, factor, max } => write!(
                f,
                "exp(base = {}, factor = {factor}, max = {})",
                Written(base),
                Written(max)
            ),
            BackoffSpec::Fixed(delay) => write!(f, "fixed({})", Written(delay)),
            BackoffSpec::Linear { base, step, max } => write!(
                f,
                "linear(base = {}, step = {}, max = {})",
                Written(base),
                Written(step),
                Written(max)
            ),
            BackoffSpec::Fibonacci { base, max } => write!(
                f,
                "fibonacci(base = {}, max = {})",
                Written(base),
                Written(max)
            ),
            BackoffSpec::None => f.write_str("none"),
        }
    }
}

/// A jitter in the attribute's words.
pub(crate) struct JitterWords(pub Jitter);

impl fmt::Display for JitterWords {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Jitter::None => f.write_str("none"),
            Jitter::Proportional(ratio) => write!(f, "proportional({ratio})"),
            Jitter::Full => f.write_str("full"),
            Jitter::Equal => f.write_str("equal"),
            Jitter::Decorrelated => f.write_str("decorrelated"),
        }
    }
}

impl fmt::Display for DynamicPolicy {
    /// The settings this policy overrides, in the text form its `FromStr`
    /// reads; nothing for a policy that overrides nothing.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut separator = "";
        let mut setting = |f: &mut fmt::Formatter<'_>, key: &str, value: &dyn fmt::Display| {
            let written = write!(f, "{separator}{key} = {value}");
            separator = ", ";
            written
        };
        if let Some(attempts) = self.max_attempts {
            setting(f, "max", &attempts)?;
        }
        if let Some(backoff) = &self.backoff {
            setting(f, "backoff", backoff)?;
        }
        if let Some(jitter) = self.jitter {
            setting(f, "jitter", &JitterWords(jitter))?;
        }
        for (key, value) in [
            ("deadline", self.deadline),
            ("attempt_timeout", self.attempt_timeout),
        ] {
            if let Some(value) = value {
                setting(f, key, &Written(value))?;
            }
        }
        if let Some(honor) = self.honor_retry_after {
            setting(f, "retry_after", &if honor { "honor" } else { "ignore" })?;
        }
        if let Some(max) = self.max_retry_after {
            setting(f, "max_retry_after", &Written(max))?;
        }
        match self.hedge {
            Some(HedgeSpec::Off) => setting(f, "hedge", &"off")?,
            Some(HedgeSpec::After(after)) => setting(f, "hedge", &Written(after))?,
            Some(HedgeSpec::Percentile(percentile)) => {
                setting(f, "hedge", &format_args!("p{percentile}"))?
            }
            None => {}
        }
        if let Some(on) = self.fallback {
            setting(f, "fallback", &if on { "on" } else { "off" })?;
        }
        if let Some(k) = self.throttle_k {
            setting(f, "throttle_k", &k)?;
        }
        if let Some(window) = self.throttle_window {
            setting(f, "throttle_window", &Written(window))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curves_and_jitters_are_read_in_the_attributes_words() {
        let s = Duration::from_secs;
        assert_eq!(
            parse_backoff("exp"),
            Ok(BackoffSpec::Exponential {
                base: DEFAULT_BASE,
                factor: DEFAULT_FACTOR,
                max: DEFAULT_CAP
            })
        );
        assert_eq!(
            parse_backoff("exp(base = 2s, factor = 1.5)"),
            Ok(BackoffSpec::Exponential {
                base: s(2),
                factor: 1.5,
                max: DEFAULT_CAP
            })
        );
        assert_eq!(parse_backoff("fixed(1s)"), Ok(BackoffSpec::Fixed(s(1))));
        assert_eq!(
            parse_backoff("linear(base = 1s)"),
            Ok(BackoffSpec::Linear {
                base: s(1),
                step: s(1),
                max: DEFAULT_CAP
            })
        );
        assert_eq!(
            parse_backoff("fibonacci(base = 1s, max = 8s)"),
            Ok(BackoffSpec::Fibonacci {
                base: s(1),
                max: s(8)
            })
        );
        assert_eq!(parse_backoff("none"), Ok(BackoffSpec::None));
        for bad in [
            "expo",
            "fixed",
            "fixed()",
            "fixed(delay = 1s)",
            "exp(bass = 1s)",
            "exp(base = x)",
            "none(1s)",
            "exp(base = 1s",
        ] {
            assert!(parse_backoff(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_jitter("full"), Ok(Jitter::Full));
        assert_eq!(parse_jitter("proportional"), Ok(Jitter::DEFAULT));
        assert_eq!(
            parse_jitter("proportional(0.5)"),
            Ok(Jitter::Proportional(0.5))
        );
        for bad in ["fulll", "full(1)", "proportional(x)", ""] {
            assert!(parse_jitter(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_policy_reads_back_what_it_writes() {
        let text = "max = 4, backoff = linear(base = 10ms, step = 5ms, max = 1s), jitter = proportional(0.1), deadline = 1m, attempt_timeout = 2s, retry_after = ignore, max_retry_after = 5s, hedge = 20ms";
        let policy: DynamicPolicy = text.parse().unwrap();
        assert_eq!(policy.to_string(), text);
        let off: DynamicPolicy = "hedge = off".parse().unwrap();
        assert_eq!(off.hedge, Some(HedgeSpec::Off));
        assert_eq!(off.to_string(), "hedge = off");
        let p95: DynamicPolicy = "hedge = p95".parse().unwrap();
        assert_eq!(p95.hedge, Some(HedgeSpec::Percentile(95)));
        assert_eq!(p95.to_string(), "hedge = p95");
        assert_eq!("".parse::<DynamicPolicy>(), Ok(DynamicPolicy::new()));
        assert_eq!(DynamicPolicy::new().to_string(), "");
        let overload = "fallback = off, throttle_k = 1.5, throttle_window = 30s";
        let policy: DynamicPolicy = overload.parse().unwrap();
        assert_eq!(
            policy,
            DynamicPolicy::new()
                .fallback(false)
                .throttle_k(1.5)
                .throttle_window(Duration::from_secs(30))
        );
        assert_eq!(policy.to_string(), overload);
        let on: DynamicPolicy = "fallback = true".parse().unwrap();
        assert_eq!(on.to_string(), "fallback = on");
    }

    #[test]
    fn a_policy_that_does_not_parse_or_check_says_why() {
        for (text, starts) in [
            ("max = three", "max: `three` is not a number"),
            ("max = 3, max = 4", "`max` is given twice"),
            ("deadline", "`deadline` is not `setting = value`"),
            ("deadline = soon", "deadline: `soon` is not a duration"),
            ("hedge = soon", "hedge: `soon` is not a duration"),
            (
                "hedge = p49",
                "hedge: `p49` is not a percentile for `hedge`: from `p50` to `p99`",
            ),
            ("hedge = p100", "hedge: `p100` is not a percentile"),
            ("hedge = p+95", "hedge: `p+95` is not a percentile"),
            ("hedge = p", "hedge: `p` is not a percentile"),
            ("hedge = pé", "hedge: `pé` is not a percentile"),
            ("backoff = exp(factor = 0.5)", "the exponential factor 0.5"),
            (
                "backoff = exp(base = 2s, max = 1s)",
                "the backoff cap 1s is below",
            ),
            (
                "jitter = proportional(2)",
                "the proportional jitter ratio 2",
            ),
            ("retry_after = maybe", "retry_after: `maybe` is neither"),
            ("max = 5000", "max_attempts 5000 without a deadline"),
            (
                "fallback = maybe",
                "fallback: `maybe` is neither `on` nor `off`",
            ),
            ("throttle_k = lots", "throttle_k: `lots` is not a number"),
            ("throttle_k = 0.5", "an adaptive throttle's K is at least 1"),
            ("throttle_k = NaN", "an adaptive throttle's K is at least 1"),
            (
                "throttle_window = 0s",
                "an adaptive throttle's window is longer than zero",
            ),
            ("max = 3, (", "`(` without its `)`"),
            ("max = 3)", "`)` without its `(`"),
        ] {
            let error = text.parse::<DynamicPolicy>().unwrap_err().to_string();
            assert!(error.starts_with(starts), "{text}: {error}");
        }
    }
}
