//! Dynamic policies read from and written to configuration (feature
//! `serde`): a map of the policy's fields, named as the attribute names
//! them (`max`, `retry_after`; the longer `max_attempts` and
//! `honor_retry_after` are read too), durations written as people
//! write them (`"250ms"`, `"1m30s"`), curves and jitters in the attribute's
//! words (`"exp(base = 100ms, max = 10s)"`, `"full"`); or the whole policy
//! as one string of its text form.
//!
//! Every error names the field and what it takes, and a policy that reads
//! but fails [`DynamicPolicy::check`] is refused in the check's words.

use core::fmt;
use core::marker::PhantomData;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Unexpected, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

use super::duration::{Written, parse_duration};
use super::text::{
    CURVES, JITTERS, JitterWords, duration_field, parse_backoff, parse_hedge, parse_jitter, parse_k,
};
use super::{BackoffSpec, DynamicPolicy, HedgeSpec, ParsePolicyError};
use crate::jitter::Jitter;

/// The fields of a policy, as an unknown one's error lists them: the
/// attribute's names, which the text form takes too, then the longer
/// names this form was first written with, which it still reads.
const FIELDS: &[&str] = &[
    "max",
    "backoff",
    "jitter",
    "deadline",
    "attempt_timeout",
    "retry_after",
    "max_retry_after",
    "hedge",
    "fallback",
    "throttle_k",
    "throttle_window",
    "max_attempts",
    "honor_retry_after",
];

/// ```
/// use reattempt::dynamic::DynamicPolicy;
/// use std::time::Duration;
///
/// let policy: DynamicPolicy = serde_json::from_str(
///     r#"{ "max": 4, "backoff": "exp(base = 100ms, max = 10s)", "jitter": "full", "deadline": "1m30s" }"#,
/// ).unwrap();
/// assert_eq!(policy.deadline, Some(Duration::from_secs(90)));
///
/// let wrong = serde_json::from_str::<DynamicPolicy>(r#"{ "deadline": 30 }"#).unwrap_err();
/// assert!(wrong.to_string().contains("a duration for `deadline`"), "{wrong}");
/// ```
impl<'de> Deserialize<'de> for DynamicPolicy {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<DynamicPolicy, D::Error> {
        deserializer.deserialize_any(PolicyVisitor)
    }
}

struct PolicyVisitor;

impl<'de> Visitor<'de> for PolicyVisitor {
    type Value = DynamicPolicy;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a retry policy: a map of {} or its text form, such as \"max = 4, deadline = 30s\"",
            FIELDS.join(", ")
        )
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<DynamicPolicy, E> {
        text.parse().map_err(E::custom)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<DynamicPolicy, A::Error> {
        let mut policy = DynamicPolicy::new();
        while let Some(key) = map.next_key::<String>()? {
            let field = FIELDS
                .iter()
                .find(|field| **field == key)
                .ok_or_else(|| de::Error::unknown_field(&key, FIELDS))?;
            let duplicate = || de::Error::duplicate_field(field);
            match *field {
                "max" | "max_attempts" => {
                    let attempts = map.next_value_seed(Attempts(field))?;
                    put(&mut policy.max_attempts, attempts).ok_or_else(duplicate)?;
                }
                "backoff" => {
                    let backoff = map.next_value_seed(Words::new(field, parse_backoff))?;
                    put(&mut policy.backoff, backoff).ok_or_else(duplicate)?;
                }
                "jitter" => {
                    let jitter = map.next_value_seed(Words::new(field, parse_jitter))?;
                    put(&mut policy.jitter, jitter).ok_or_else(duplicate)?;
                }
                "retry_after" | "honor_retry_after" => {
                    let honor = map.next_value_seed(Switch::HONOR.named(field))?;
                    put(&mut policy.honor_retry_after, honor).ok_or_else(duplicate)?;
                }
                "fallback" => {
                    let on = map.next_value_seed(Switch::ON.named(field))?;
                    put(&mut policy.fallback, on).ok_or_else(duplicate)?;
                }
                "throttle_k" => {
                    let k = map.next_value_seed(Number(field))?;
                    put(&mut policy.throttle_k, k).ok_or_else(duplicate)?;
                }
                "hedge" => {
                    let hedge = map.next_value_seed(Words::new(field, parse_hedge))?;
                    put(&mut policy.hedge, hedge).ok_or_else(duplicate)?;
                }
                _ => {
                    let duration = map.next_value_seed(Words::new(field, parse_duration))?;
                    put(duration_field(&mut policy, field), duration).ok_or_else(duplicate)?;
                }
            }
        }
        policy.check().map_err(de::Error::custom)?;
        Ok(policy)
    }
}

/// Fills an empty slot; `None` when it was already filled.
fn put<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(value);
    Some(())
}

/// A field written as text and read by `parse`: its errors name the field.
struct Words<T> {
    field: &'static str,
    parse: fn(&str) -> Result<T, ParsePolicyError>,
    value: PhantomData<T>,
}

impl<T> Words<T> {
    fn new(field: &'static str, parse: fn(&str) -> Result<T, ParsePolicyError>) -> Words<T> {
        Words {
            field,
            parse,
            value: PhantomData,
        }
    }
}

impl<'de, T> DeserializeSeed<'de> for Words<T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<T> Visitor<'_> for Words<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.field {
            "backoff" => write!(f, "a curve for `backoff`: {CURVES}"),
            "jitter" => write!(f, "a jitter for `jitter`: {JITTERS}"),
            "hedge" => write!(
                f,
                "\"off\", a duration or a percentile for `hedge`, such as \"20ms\" or \"p95\""
            ),
            field => write!(
                f,
                "a duration for `{field}`, such as \"250ms\", \"30s\" or \"1m30s\""
            ),
        }
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<T, E> {
        (self.parse)(text).map_err(|error| E::custom(format_args!("{}: {error}", self.field)))
    }
}

/// `max`: a whole number of attempts; the field's name, as written.
struct Attempts(&'static str);

impl<'de> DeserializeSeed<'de> for Attempts {
    type Value = u32;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<u32, D::Error> {
        deserializer.deserialize_u32(self)
    }
}

impl Visitor<'_> for Attempts {
    type Value = u32;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a number of attempts for `{}`, the first included",
            self.0
        )
    }

    fn visit_u64<E: de::Error>(self, attempts: u64) -> Result<u32, E> {
        u32::try_from(attempts).map_err(|_| E::invalid_value(Unexpected::Unsigned(attempts), &self))
    }

    fn visit_i64<E: de::Error>(self, attempts: i64) -> Result<u32, E> {
        u32::try_from(attempts).map_err(|_| E::invalid_value(Unexpected::Signed(attempts), &self))
    }
}

/// A setting that is on or off: `retry_after` (`"honor"` or `"ignore"`, as
/// the attribute says it) or `fallback` (`"on"` or `"off"`), or `true` or
/// `false`; the field's name, as written.
#[derive(Clone, Copy)]
struct Switch {
    field: &'static str,
    on: &'static str,
    off: &'static str,
}

impl Switch {
    const HONOR: Switch = Switch {
        field: "",
        on: "honor",
        off: "ignore",
    };
    const ON: Switch = Switch {
        field: "",
        on: "on",
        off: "off",
    };

    fn named(self, field: &'static str) -> Switch {
        Switch { field, ..self }
    }
}

impl<'de> DeserializeSeed<'de> for Switch {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl Visitor<'_> for Switch {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "\"{}\", \"{}\", true or false for `{}`",
            self.on, self.off, self.field
        )
    }

    fn visit_bool<E: de::Error>(self, on: bool) -> Result<bool, E> {
        Ok(on)
    }

    fn visit_str<E: de::Error>(self, word: &str) -> Result<bool, E> {
        // Booleans as text too: configuration read from the environment
        // gives every value as a string.
        match word {
            "true" => Ok(true),
            "false" => Ok(false),
            word if word == self.on => Ok(true),
            word if word == self.off => Ok(false),
            _ => Err(E::invalid_value(Unexpected::Str(word), &self)),
        }
    }
}

/// `throttle_k`: a number, or a number as text; the field's name.
struct Number(&'static str);

impl<'de> DeserializeSeed<'de> for Number {
    type Value = f64;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<f64, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl Visitor<'_> for Number {
    type Value = f64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a number for `{}`, such as 2 or 1.5", self.0)
    }

    fn visit_f64<E: de::Error>(self, number: f64) -> Result<f64, E> {
        Ok(number)
    }

    fn visit_u64<E: de::Error>(self, number: u64) -> Result<f64, E> {
        Ok(number as f64)
    }

    fn visit_i64<E: de::Error>(self, number: i64) -> Result<f64, E> {
        Ok(number as f64)
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<f64, E> {
        parse_k(text).map_err(|error| E::custom(format_args!("{}: {error}", self.0)))
    }
}

/// The fields the policy overrides, as its `Deserialize` reads them.
impl Serialize for DynamicPolicy {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let durations = [
            ("deadline", self.deadline),
            ("attempt_timeout", self.attempt_timeout),
            ("max_retry_after", self.max_retry_after),
            ("throttle_window", self.throttle_window),
        ];
        let fields = usize::from(self.max_attempts.is_some())
            + usize::from(self.fallback.is_some())
            + usize::from(self.throttle_k.is_some())
            + usize::from(self.hedge.is_some())
            + usize::from(self.backoff.is_some())
            + usize::from(self.jitter.is_some())
            + usize::from(self.honor_retry_after.is_some())
            + durations
                .iter()
                .filter(|(_, value)| value.is_some())
                .count();
        let mut map = serializer.serialize_map(Some(fields))?;
        if let Some(attempts) = self.max_attempts {
            map.serialize_entry("max", &attempts)?;
        }
        if let Some(backoff) = &self.backoff {
            map.serialize_entry("backoff", backoff)?;
        }
        if let Some(jitter) = &self.jitter {
            map.serialize_entry("jitter", jitter)?;
        }
        for (field, value) in durations {
            if let Some(value) = value {
                map.serialize_entry(field, &Written(value).to_string())?;
            }
        }
        if let Some(honor) = self.honor_retry_after {
            map.serialize_entry("retry_after", if honor { "honor" } else { "ignore" })?;
        }
        match self.hedge {
            Some(HedgeSpec::Off) => map.serialize_entry("hedge", "off")?,
            Some(HedgeSpec::Percentile(percentile)) => {
                map.serialize_entry("hedge", &format!("p{percentile}"))?;
            }
            Some(HedgeSpec::After(after)) => {
                map.serialize_entry("hedge", &Written(after).to_string())?;
            }
            None => {}
        }
        if let Some(on) = self.fallback {
            map.serialize_entry("fallback", if on { "on" } else { "off" })?;
        }
        if let Some(k) = self.throttle_k {
            map.serialize_entry("throttle_k", &k)?;
        }
        map.end()
    }
}

/// A curve in the attribute's words: `"exp(base = 100ms, max = 10s)"`.
impl Serialize for BackoffSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A curve in the attribute's words, the parts left out at their defaults.
impl<'de> Deserialize<'de> for BackoffSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<BackoffSpec, D::Error> {
        Words::new("backoff", parse_backoff).deserialize(deserializer)
    }
}

/// A jitter in the attribute's words: `"full"`, `"proportional(0.25)"`.
impl Serialize for Jitter {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&JitterWords(*self))
    }
}

/// A jitter in the attribute's words.
impl<'de> Deserialize<'de> for Jitter {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Jitter, D::Error> {
        Words::new("jitter", parse_jitter).deserialize(deserializer)
    }
}
