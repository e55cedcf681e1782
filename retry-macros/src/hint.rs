//! Suggestions for misspelled and misremembered argument names.

/// The arguments `#[retry]` takes.
pub const KEYS: &[&str] = &[
    "on",
    "max",
    "backoff",
    "jitter",
    "deadline",
    "attempt_timeout",
    "retry_after",
    "max_retry_after",
    "if_result",
    "before",
    "after",
    "on_retry",
    "on_give_up",
    "fields",
    "preset",
    "budget",
    "breaker",
    "throttle",
    "fallback",
    "limit",
    "dead_letter",
    "alert_after",
    "on_alert",
    "policy",
    "nested",
    "idempotent",
    "clone",
    "name",
    "sleep",
    "hedge",
    "crate",
];

/// A targeted hint for names that other retry libraries use.
fn known_alias(key: &str) -> Option<&'static str> {
    Some(match key {
        "max_attempts" | "attempts" | "max_tries" | "tries" | "times" | "max_times" | "count" => {
            "use `max = N`: the most times the body runs, the first call included"
        }
        "retries" | "max_retries" | "retry" => {
            "use `max = N`, which counts attempts including the first: `retries = 3` is `max = 4`"
        }
        "timeout" | "total_timeout" | "max_elapsed" | "max_elapsed_time" | "max_duration" => {
            "use `deadline = DUR` for the whole call, waits included, or `attempt_timeout = DUR` for each attempt of an async function"
        }
        "delay" | "wait" | "interval" | "sleep_for" | "min_delay" | "initial_delay" => {
            "use `backoff = fixed(DUR)`, or `backoff = exp(base = DUR)` for a growing delay"
        }
        "max_delay" | "cap" => {
            "use `backoff = exp(max = DUR)` (or the `max` of `linear`/`fibonacci`)"
        }
        "when" | "retry_if" | "retry_on" | "if" | "classify" | "classifier" | "filter" => {
            "use `on = ...`: a closure `|e: &E| -> bool`, a function, `matches(Pattern)` or `transient`"
        }
        "strategy" => "use `backoff = exp | fixed(DUR) | linear(..) | fibonacci(..) | none`",
        "label" => "use `name = \"...\"`",
        "hedging" | "hedged" | "speculative" | "speculative_retry" => {
            "use `hedge = DUR`: a slow attempt gets another beside it after `DUR`"
        }
        "krate" | "path" => "use `crate = path::to::reattempt`",
        _ => return None,
    })
}

/// [`KEYS`], as a message lists them.
fn keys() -> String {
    KEYS.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The message for something where an argument's name should be: a bare
/// value, as other attributes take it (`#[retry(3)]`), or a stray comma.
pub fn expected_key() -> String {
    format!(
        "expected an argument name: `#[retry]` takes named arguments, such as `max = 3` or `backoff = exp`\nthe arguments are {}",
        keys()
    )
}

/// The message for an argument name that is not one of [`KEYS`].
pub fn unknown_key(key: &str) -> String {
    let allowed = keys();
    let hint = match known_alias(key) {
        Some(alias) => format!("; {alias}"),
        None => match closest(key, KEYS) {
            Some(near) => format!("; did you mean `{near}`?"),
            None => String::new(),
        },
    };
    format!("unknown argument `{key}`{hint}\nthe arguments are {allowed}")
}

/// The candidate within an edit distance of 2 (and under half the word), if
/// any.
pub fn closest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (edit_distance(word, c), *c))
        .filter(|(d, c)| *d <= 2 && *d * 2 < c.len().max(word.len()))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_misses_get_the_right_name() {
        assert!(unknown_key("mx").contains("did you mean `max`?"));
        assert!(unknown_key("backof").contains("did you mean `backoff`?"));
        assert!(unknown_key("jiter").contains("did you mean `jitter`?"));
        assert!(unknown_key("retries").contains("`retries = 3` is `max = 4`"));
        assert!(unknown_key("max_attempts").contains("use `max = N`"));
        assert!(unknown_key("timeout").contains("deadline = DUR"));
        assert!(unknown_key("delay").contains("fixed(DUR)"));
        assert!(unknown_key("on_retyr").contains("did you mean `on_retry`?"));
        assert!(!unknown_key("zzzzzz").contains("did you mean"));
    }

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("max", "max"), 0);
        assert_eq!(edit_distance("mx", "max"), 1);
        assert_eq!(edit_distance("jtiter", "jitter"), 2);
        assert_eq!(edit_distance("", "on"), 2);
    }
}
