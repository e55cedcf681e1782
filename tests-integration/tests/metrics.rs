//! Statistics exported through the `metrics` facade as they happen
//! (feature `metrics`), seen by the facade's debugging recorder.

use std::cell::Cell;
use std::io::{self, ErrorKind};
use std::time::Duration;

use metrics_util::CompositeKey;
use metrics_util::debugging::{DebugValue, DebuggingRecorder};
use reattempt::retry;

fn no_wait(_: Duration) {}

/// Fails its first `fail` attempts.
#[retry(max = 3, backoff = fixed(10ms), sleep = no_wait, alert_after = 2)]
fn exported(fail: u32, calls: &Cell<u32>) -> io::Result<()> {
    calls.set(calls.get() + 1);
    if calls.get() <= fail {
        return Err(ErrorKind::TimedOut.into());
    }
    Ok(())
}

/// What a snapshot holds: each series with its value.
type Series = Vec<(
    CompositeKey,
    Option<metrics::Unit>,
    Option<metrics::SharedString>,
    DebugValue,
)>;

/// The value of the series `name` whose labels include `labels`.
fn value<'s>(series: &'s Series, name: &str, labels: &[(&str, &str)]) -> Option<&'s DebugValue> {
    series
        .iter()
        .find(|(key, ..)| {
            let key = key.key();
            key.name() == name
                && labels
                    .iter()
                    .all(|(k, v)| key.labels().any(|l| l.key() == *k && l.value() == *v))
        })
        .map(|(.., value)| value)
}

#[test]
fn every_series_is_exported_as_it_happens() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || {
        exported(0, &Cell::new(0)).unwrap(); // first try
        exported(1, &Cell::new(0)).unwrap(); // after one retry
        exported(3, &Cell::new(0)).unwrap_err(); // three attempts, then gives up
    });
    // One snapshot: reading one takes the values it reports.
    let series: Series = snapshotter.snapshot().into_vec();
    let function = ("function", "metrics::exported");
    let counter = |name: &str, labels: &[(&str, &str)]| {
        let mut all = vec![function];
        all.extend_from_slice(labels);
        value(&series, name, &all)
    };
    for (outcome, n) in [("first_try", 1), ("after_retries", 1), ("gave_up", 1)] {
        assert_eq!(
            counter("reattempt_calls_total", &[("outcome", outcome)]),
            Some(&DebugValue::Counter(n)),
            "{outcome}"
        );
    }
    assert_eq!(
        counter("reattempt_first_try_successes_total", &[]),
        Some(&DebugValue::Counter(1))
    );
    assert_eq!(
        counter("reattempt_successes_after_retries_total", &[]),
        Some(&DebugValue::Counter(1))
    );
    assert_eq!(
        counter("reattempt_give_ups_total", &[("reason", "exhausted")]),
        Some(&DebugValue::Counter(1))
    );
    assert_eq!(
        counter("reattempt_attempts_total", &[]),
        Some(&DebugValue::Counter(6))
    );
    assert_eq!(
        counter("reattempt_retries_total", &[]),
        Some(&DebugValue::Counter(3))
    );
    // Two timeouts in a row in the last call: one alert.
    assert_eq!(
        counter("reattempt_alerts_total", &[]),
        Some(&DebugValue::Counter(1))
    );
    // One duration per call, each from the call's start, waits included.
    let mut samples = 0;
    for outcome in ["first_try", "after_retries", "gave_up"] {
        match counter("reattempt_call_duration_seconds", &[("outcome", outcome)]) {
            Some(DebugValue::Histogram(values)) => {
                assert_eq!(values.len(), 1, "{outcome}");
                assert!(values.iter().all(|v| v.into_inner() >= 0.0));
                samples += values.len();
            }
            other => panic!("{outcome}: {other:?}"),
        }
    }
    assert_eq!(samples, 3);
    let stats = reattempt::stats::get("metrics::exported").unwrap();
    assert_eq!(
        (stats.calls, stats.attempts),
        (3, 6),
        "the same figures in-process"
    );
    // With the feature, the in-process time covers every call, the
    // first-try success included, as the histogram does.
    let recorded: f64 = ["first_try", "after_retries", "gave_up"]
        .iter()
        .filter_map(
            |o| match counter("reattempt_call_duration_seconds", &[("outcome", o)]) {
                Some(DebugValue::Histogram(values)) => {
                    Some(values.iter().map(|v| v.into_inner()).sum::<f64>())
                }
                _ => None,
            },
        )
        .sum();
    assert!(
        (stats.time.as_secs_f64() - recorded).abs() < 1e-6,
        "{:?} against {recorded}",
        stats.time
    );
}

/// The first attempt answers after a second; its hedge at once.
#[retry(max = 3, backoff = none, hedge = 50ms)]
async fn hedged() -> io::Result<u32> {
    let number = reattempt::attempt().unwrap().number();
    if number == 1 {
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    Ok(number)
}

#[test]
fn hedges_started_and_won_are_exported_and_counted_as_attempts() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || {
        assert_eq!(runtime.block_on(hedged()).unwrap(), 2);
    });
    let series: Series = snapshotter.snapshot().into_vec();
    let function = [("function", "metrics::hedged")];
    for (name, n) in [
        ("reattempt_hedges_total", 1),
        ("reattempt_hedges_won_total", 1),
        ("reattempt_attempts_total", 2),
        ("reattempt_first_try_successes_total", 1),
    ] {
        assert_eq!(
            value(&series, name, &function),
            Some(&DebugValue::Counter(n)),
            "{name}"
        );
    }
}
