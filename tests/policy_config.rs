//! Dynamic policies read from configuration: JSON and TOML through the
//! `serde` feature, and the text form an environment variable holds. Each
//! error names the field and what it takes; a policy that reads but is
//! invalid is refused in `DynamicPolicy::check`'s words.

use std::time::Duration;

use reattempt::dynamic::{BackoffSpec, DynamicPolicy, HedgeSpec, PolicyCell};
use reattempt::jitter::Jitter;
use reattempt::retry;

fn expected() -> DynamicPolicy {
    DynamicPolicy::new()
        .max_attempts(4)
        .backoff(BackoffSpec::Exponential {
            base: Duration::from_millis(100),
            factor: 2.0,
            max: Duration::from_secs(10),
        })
        .jitter(Jitter::Full)
        .deadline(Duration::from_secs(90))
        .attempt_timeout(Duration::from_millis(1500))
        .honor_retry_after(false)
        .max_retry_after(Duration::from_secs(5))
        .hedge(HedgeSpec::After(Duration::from_millis(20)))
}

#[test]
fn the_text_form_reads_what_an_environment_variable_holds() {
    let text = "max = 4, backoff = exp(base = 100ms, max = 10s), jitter = full, \
                deadline = 1m30s, attempt_timeout = 1.5s, retry_after = ignore, max_retry_after = 5s, \
                hedge = 20ms";
    assert_eq!(text.parse::<DynamicPolicy>(), Ok(expected()));
    assert_eq!(
        expected().to_string().parse::<DynamicPolicy>(),
        Ok(expected())
    );
}

static FROM_ENV: PolicyCell = PolicyCell::new(DynamicPolicy::new());

#[retry(max = 5, backoff = none, policy = FROM_ENV)]
fn configured(calls: &mut u32) -> std::io::Result<()> {
    *calls += 1;
    Err(std::io::ErrorKind::TimedOut.into())
}

/// What the process of [`a_cell_filled_from_the_environment_sets_the_calls_policy`]
/// reads its policy from.
const POLICY_VAR: &str = "REATTEMPT_TEST_POLICY_FROM_ENV";

/// The guide's recipe: a cell filled from an environment variable at
/// start-up, the static arguments kept when it is unset. The test runs
/// itself again as a process of its own with the variable set, as a
/// service is started with it; the process's calls make the attempts the
/// variable says.
#[test]
fn a_cell_filled_from_the_environment_sets_the_calls_policy() {
    let Ok(text) = std::env::var(POLICY_VAR) else {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "a_cell_filled_from_the_environment_sets_the_calls_policy",
                "--exact",
                "--test-threads=1",
            ])
            .env(POLICY_VAR, "max = 2, backoff = none")
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("the process with the policy variable did not end within a minute");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(
            status.success(),
            "the process with the policy variable failed"
        );
        return;
    };
    FROM_ENV.set(text.parse().expect("a valid policy"));
    let mut calls = 0;
    configured(&mut calls).unwrap_err();
    assert_eq!(calls, 2);
}

/// The reload example, whose watcher these tests run.
#[cfg(feature = "serde")]
#[path = "../examples/reload.rs"]
#[allow(dead_code)]
mod reload;

#[cfg(feature = "serde")]
mod serde {
    use super::*;

    /// In the attribute's words, as the text form says them.
    const JSON: &str = r#"{
        "max": 4,
        "backoff": "exp(base = 100ms, max = 10s)",
        "jitter": "full",
        "deadline": "1m30s",
        "attempt_timeout": "1.5s",
        "retry_after": "ignore",
        "max_retry_after": "5s",
        "hedge": "20ms"
    }"#;

    /// In the longer names this form was first written with, which it
    /// still reads.
    const TOML: &str = r#"
        max_attempts = 4
        backoff = "exp(base = 100ms, factor = 2, max = 10s)"
        jitter = "full"
        deadline = "1m30s"
        attempt_timeout = "1500ms"
        honor_retry_after = false
        max_retry_after = "5s"
        hedge = "20ms"
    "#;

    #[test]
    fn a_hedge_percentile_reads_and_writes_as_the_attribute_says_it() {
        let policy: DynamicPolicy = serde_json::from_str(r#"{ "hedge": "p95" }"#).unwrap();
        assert_eq!(
            policy,
            DynamicPolicy::new().hedge(HedgeSpec::Percentile(95))
        );
        assert_eq!(
            serde_json::to_string(&policy).unwrap(),
            r#"{"hedge":"p95"}"#
        );
        let error = serde_json::from_str::<DynamicPolicy>(r#"{ "hedge": "p100" }"#)
            .unwrap_err()
            .to_string();
        assert!(error.contains("from `p50` to `p99`"), "{error}");
    }

    #[test]
    fn a_policy_reads_from_json_and_toml_and_writes_back() {
        assert_eq!(
            serde_json::from_str::<DynamicPolicy>(JSON).unwrap(),
            expected()
        );
        assert_eq!(toml::from_str::<DynamicPolicy>(TOML).unwrap(), expected());
        let written = serde_json::to_string(&expected()).unwrap();
        assert_eq!(
            serde_json::from_str::<DynamicPolicy>(&written).unwrap(),
            expected()
        );
        let written = toml::to_string(&expected()).unwrap();
        assert_eq!(
            toml::from_str::<DynamicPolicy>(&written).unwrap(),
            expected()
        );
        // Written back in the attribute's words.
        let written = serde_json::to_value(expected()).unwrap();
        assert_eq!(written["max"], 4, "{written}");
        assert_eq!(written["retry_after"], "ignore", "{written}");
        // `retry_after` as a boolean too, as `honor_retry_after` is.
        let honored: DynamicPolicy = serde_json::from_str(r#"{ "retry_after": true }"#).unwrap();
        assert_eq!(honored.honor_retry_after, Some(true));
        // The whole policy as one string of its text form.
        let text = serde_json::json!("max = 4, deadline = 30s");
        let policy: DynamicPolicy = serde_json::from_value(text).unwrap();
        assert_eq!(policy.deadline, Some(Duration::from_secs(30)));
        assert_eq!(
            serde_json::from_str::<DynamicPolicy>("{}").unwrap(),
            DynamicPolicy::new()
        );
    }

    #[test]
    fn overload_settings_read_and_write_as_the_text_form_says_them() {
        let policy: DynamicPolicy = serde_json::from_str(
            r#"{ "fallback": false, "throttle_k": 3, "throttle_window": "1m" }"#,
        )
        .unwrap();
        let expected = DynamicPolicy::new()
            .fallback(false)
            .throttle_k(3.0)
            .throttle_window(Duration::from_secs(60));
        assert_eq!(policy, expected);
        let written = serde_json::to_value(expected).unwrap();
        assert_eq!(
            written,
            serde_json::json!({ "fallback": "off", "throttle_k": 3.0, "throttle_window": "1m" })
        );
        assert_eq!(
            serde_json::from_value::<DynamicPolicy>(written).unwrap(),
            expected
        );
        let from_env: DynamicPolicy =
            serde_json::from_str(r#"{ "fallback": "on", "throttle_k": "1.5" }"#).unwrap();
        assert_eq!(
            from_env,
            DynamicPolicy::new().fallback(true).throttle_k(1.5)
        );
        for (json, words) in [
            (
                r#"{ "fallback": "maybe" }"#,
                "expected \"on\", \"off\", true or false for `fallback`",
            ),
            (
                r#"{ "throttle_k": [] }"#,
                "expected a number for `throttle_k`",
            ),
            (r#"{ "throttle_k": 0.5 }"#, "K is at least 1"),
            (
                r#"{ "throttle_window": "0s" }"#,
                "window is longer than zero",
            ),
        ] {
            let error = serde_json::from_str::<DynamicPolicy>(json)
                .unwrap_err()
                .to_string();
            assert!(error.contains(words), "{json}: {error}");
        }
    }

    /// Each error case, with the words its message must hold.
    #[test]
    fn every_error_names_its_field_and_what_it_takes() {
        for (json, words) in [
            (
                r#"{ "deadline": 30 }"#,
                "expected a duration for `deadline`, such as \"250ms\"",
            ),
            (
                r#"{ "deadline": "soon" }"#,
                "deadline: `soon` is not a duration",
            ),
            (
                r#"{ "max_attempts": "three" }"#,
                "expected a number of attempts for `max_attempts`",
            ),
            (
                r#"{ "max_attempts": -1 }"#,
                "expected a number of attempts for `max_attempts`",
            ),
            (
                r#"{ "honor_retry_after": "yes" }"#,
                "expected \"honor\", \"ignore\", true or false for `honor_retry_after`",
            ),
            (
                r#"{ "retry_after": "yes" }"#,
                "expected \"honor\", \"ignore\", true or false for `retry_after`",
            ),
            (
                r#"{ "max": "three" }"#,
                "expected a number of attempts for `max`",
            ),
            (
                r#"{ "max": 3, "max_attempts": 4 }"#,
                "duplicate field `max_attempts`",
            ),
            (
                r#"{ "backoff": "expo" }"#,
                "backoff: `expo` is not a curve; a curve is `exp`",
            ),
            (
                r#"{ "backoff": { "base": "1s" } }"#,
                "expected a curve for `backoff`",
            ),
            (
                r#"{ "jitter": "fulll" }"#,
                "jitter: `fulll` is not a jitter; a jitter is `none`",
            ),
            (
                r#"{ "deadlien": "30s" }"#,
                "unknown field `deadlien`, expected one of `max`, `backoff`",
            ),
            (
                r#"{ "deadline": "1s", "deadline": "2s" }"#,
                "duplicate field `deadline`",
            ),
            // Valid values that make an invalid policy: the check's words.
            (
                r#"{ "max_attempts": 0 }"#,
                "max_attempts is 0; it counts attempts, the first included",
            ),
            (
                r#"{ "backoff": "exp(factor = 0.5)" }"#,
                "the exponential factor 0.5 is not a number of at least 1",
            ),
            (
                r#"{ "max_attempts": 5000 }"#,
                "max_attempts 5000 without a deadline",
            ),
            (r#"{ "deadline": "0s" }"#, "deadline is zero"),
            (r#"7"#, "expected a retry policy"),
        ] {
            let error = serde_json::from_str::<DynamicPolicy>(json)
                .unwrap_err()
                .to_string();
            assert!(error.contains(words), "{json}: {error}");
        }
        let toml_error = toml::from_str::<DynamicPolicy>("deadline = 30")
            .unwrap_err()
            .to_string();
        assert!(
            toml_error.contains("a duration for `deadline`"),
            "{toml_error}"
        );
        let toml_error = toml::from_str::<DynamicPolicy>("max_attempts = 0")
            .unwrap_err()
            .to_string();
        assert!(
            toml_error.contains("max_attempts is 0; it counts attempts"),
            "{toml_error}"
        );
    }

    #[test]
    fn curves_and_jitters_read_and_write_on_their_own() {
        let spec: BackoffSpec = serde_json::from_str(r#""fixed(250ms)""#).unwrap();
        assert_eq!(spec, BackoffSpec::Fixed(Duration::from_millis(250)));
        assert_eq!(serde_json::to_string(&spec).unwrap(), r#""fixed(250ms)""#);
        let jitter: Jitter = serde_json::from_str(r#""proportional(0.5)""#).unwrap();
        assert_eq!(jitter, Jitter::Proportional(0.5));
        assert_eq!(
            serde_json::to_string(&Jitter::Decorrelated).unwrap(),
            r#""decorrelated""#
        );
    }

    /// The example's watcher follows its file: each valid policy written
    /// there is the next call's, and an invalid one is reported while the
    /// last good one stays.
    #[test]
    fn the_reload_example_follows_its_file() {
        let dir =
            std::env::temp_dir().join(format!("reattempt-reload-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (attempts, problems) = crate::reload::demonstrate(&dir).unwrap();
        std::fs::remove_dir(&dir).unwrap();
        assert_eq!(attempts, [2, 4, 4]);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("max_attempts is 0"), "{problems:?}");
    }
}
