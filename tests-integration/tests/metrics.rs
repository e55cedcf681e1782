//! Statistics exported through the `metrics` facade (feature `metrics`).

use std::cell::Cell;
use std::io::{self, ErrorKind};
use std::time::Duration;

use reattempt::retry;

fn no_wait(_: Duration) {}

#[retry(max = 3, backoff = none, sleep = no_wait)]
fn exported(calls: &Cell<u32>) -> io::Result<()> {
    calls.set(calls.get() + 1);
    if calls.get() < 2 {
        return Err(ErrorKind::TimedOut.into());
    }
    Ok(())
}

#[test]
fn statistics_are_exported_through_the_metrics_facade() {
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};

    exported(&Cell::new(0)).unwrap();
    let expected = reattempt::stats::get("metrics::exported").unwrap();
    assert_eq!(
        (expected.successes_after_retries, expected.attempts),
        (1, 2)
    );
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, reattempt::stats::publish_metrics);
    let metrics = snapshotter.snapshot().into_vec();
    let value = |name: &str, labels: &[(&str, &str)]| {
        metrics
            .iter()
            .find(|(key, ..)| {
                let key = key.key();
                key.name() == name
                    && labels
                        .iter()
                        .all(|(k, v)| key.labels().any(|l| l.key() == *k && l.value() == *v))
            })
            .map(|(.., value)| value)
    };
    let function = ("function", "metrics::exported");
    assert_eq!(
        value(
            "retry_calls_total",
            &[function, ("outcome", "after_retries")]
        ),
        Some(&DebugValue::Counter(expected.successes_after_retries))
    );
    assert_eq!(
        value("retry_attempts_total", &[function]),
        Some(&DebugValue::Counter(expected.attempts))
    );
    assert_eq!(
        value("retry_give_ups_total", &[function, ("reason", "exhausted")]),
        Some(&DebugValue::Counter(expected.give_ups.exhausted))
    );
}
