//! The spans of retried calls, exported by `tracing-opentelemetry` into
//! `opentelemetry_sdk`'s in-memory exporter: a call span, a child span per
//! attempt, with the semantic conventions' attributes and statuses.

use std::cell::Cell;
use std::io;
use std::time::Duration;

use opentelemetry::trace::{Status, TracerProvider as _};
use opentelemetry::{Key, Value};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use reattempt::{Classification, retry};
use tracing_subscriber::prelude::*;

fn no_wait(_: Duration) {}

#[derive(Debug)]
struct Status503;

/// Fails with a 503 while `failures` lasts.
#[retry(on = |_: &Status503| reattempt::http::status(503), max = 3, sleep = no_wait)]
fn flaky(failures: &Cell<u32>) -> Result<u32, Status503> {
    if failures.get() > 0 {
        failures.set(failures.get() - 1);
        return Err(Status503);
    }
    Ok(7)
}

#[retry(on = |_: &io::Error| Classification::transient().with_code("timeout"), max = 2, sleep = no_wait)]
fn hopeless() -> io::Result<()> {
    Err(io::ErrorKind::TimedOut.into())
}

// Attributes apply from the top: here `#[instrument]` goes on the body,
// so each attempt has its span.
#[tracing::instrument]
#[retry(max = 2, sleep = no_wait)]
fn instrumented_inside() -> io::Result<()> {
    Ok(())
}

// Here `#[instrument]` goes on the retried function: one span around the
// call.
#[retry(max = 2, sleep = no_wait)]
#[tracing::instrument]
fn instrumented_outside() -> io::Result<()> {
    Ok(())
}

/// Runs `f` with an OpenTelemetry layer, and the spans it finished.
fn exported(f: impl FnOnce()) -> Vec<SpanData> {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    tracing::subscriber::with_default(subscriber, f);
    provider.force_flush().unwrap();
    exporter.get_finished_spans().unwrap()
}

fn attribute<'s>(span: &'s SpanData, key: &str) -> Option<&'s Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key == Key::from(key.to_owned()))
        .map(|kv| &kv.value)
}

fn int(span: &SpanData, key: &str) -> Option<i64> {
    match attribute(span, key)? {
        Value::I64(n) => Some(*n),
        other => panic!("{key} is {other:?}"),
    }
}

fn text(span: &SpanData, key: &str) -> Option<String> {
    attribute(span, key).map(|v| v.as_str().into_owned())
}

#[test]
fn a_call_that_fails_twice_then_succeeds_has_three_attempt_spans_and_is_no_error() {
    let spans = exported(|| assert_eq!(flaky(&Cell::new(2)).unwrap(), 7));
    let call = spans
        .iter()
        .find(|s| s.name == "opentelemetry::flaky")
        .expect("the call span, named after the function");
    assert_eq!(
        call.status,
        Status::Unset,
        "a retried-then-handled error does not fail the call"
    );
    assert_eq!(
        text(call, "code.function.name").as_deref(),
        Some("opentelemetry::flaky")
    );
    assert_eq!(int(call, "retry.attempts"), Some(3));
    let mut attempts: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.parent_span_id == call.span_context.span_id())
        .collect();
    attempts.sort_by_key(|s| int(s, "retry.attempt"));
    assert_eq!(attempts.len(), 3);
    for (i, attempt) in attempts.iter().enumerate() {
        assert_eq!(attempt.name, "retry.attempt");
        assert_eq!(int(attempt, "retry.attempt"), Some(i as i64 + 1));
        // Resends of an HTTP request count from the second attempt.
        let resend = int(attempt, "http.request.resend_count");
        assert_eq!(resend, (i > 0).then_some(i as i64), "attempt {}", i + 1);
    }
    for failed in &attempts[..2] {
        assert!(
            matches!(failed.status, Status::Error { .. }),
            "{:?}",
            failed.status
        );
        assert_eq!(text(failed, "error.type").as_deref(), Some("503"));
        assert_eq!(int(failed, "http.response.status_code"), Some(503));
    }
    assert_eq!(attempts[2].status, Status::Unset);
    assert_eq!(int(attempts[2], "http.response.status_code"), None);
}

#[test]
fn a_call_that_gives_up_marks_its_span_as_an_error() {
    let spans = exported(|| {
        hopeless().unwrap_err();
    });
    let call = spans
        .iter()
        .find(|s| s.name == "opentelemetry::hopeless")
        .expect("the call span");
    assert!(
        matches!(call.status, Status::Error { .. }),
        "{:?}",
        call.status
    );
    assert_eq!(text(call, "error.type").as_deref(), Some("timeout"));
    assert_eq!(text(call, "retry.give_up").as_deref(), Some("exhausted"));
    let attempts = spans
        .iter()
        .filter(|s| s.parent_span_id == call.span_context.span_id())
        .count();
    assert_eq!(attempts, 2);
}

#[test]
fn instrument_above_retry_spans_each_attempt() {
    let spans = exported(|| instrumented_inside().unwrap());
    let attempt = spans
        .iter()
        .find(|s| s.name == "retry.attempt")
        .expect("the attempt span");
    let body = spans
        .iter()
        .find(|s| s.name == "instrumented_inside")
        .expect("#[instrument]'s span");
    assert_eq!(body.parent_span_id, attempt.span_context.span_id());
}

#[test]
fn instrument_below_retry_spans_the_whole_call() {
    let spans = exported(|| instrumented_outside().unwrap());
    let outer = spans
        .iter()
        .find(|s| s.name == "instrumented_outside")
        .expect("#[instrument]'s span");
    let call = spans
        .iter()
        .find(|s| s.name == "opentelemetry::instrumented_outside")
        .expect("the call span");
    assert_eq!(call.parent_span_id, outer.span_context.span_id());
}
