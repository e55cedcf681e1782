//! The `tracing` events of retried calls, captured through
//! `tracing-subscriber`'s JSON formatter exactly as an application would
//! print them.

use std::cell::Cell;
use std::io::{self, ErrorKind, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use retry::retry;
use serde_json::Value;

/// A writer that keeps everything written to it.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }

    /// Every line, parsed as JSON.
    fn events(&self) -> Vec<Value> {
        self.text()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
            .collect()
    }
}

/// Runs `f` with a JSON subscriber on this thread and returns its events.
fn capture(f: impl FnOnce()) -> (Vec<Value>, String) {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, f);
    (captured.events(), captured.text())
}

fn no_wait(_: Duration) {}

#[retry(max = 4, backoff = exp(base = 100ms), sleep = no_wait)]
fn login(calls: &Cell<u32>, password: &str, fail: u32, kind: ErrorKind) -> io::Result<usize> {
    calls.set(calls.get() + 1);
    if calls.get() <= fail {
        return Err(io::Error::new(kind, "backend said no"));
    }
    Ok(password.len())
}

fn field<'a>(event: &'a Value, name: &str) -> &'a Value {
    &event["fields"][name]
}

#[test]
fn each_retried_failure_is_a_warn_and_a_late_success_an_info() {
    let calls = Cell::new(0);
    let (events, text) = capture(|| {
        login(&calls, "hunter2", 2, ErrorKind::ConnectionReset).unwrap();
    });
    assert_eq!(events.len(), 3, "{text}");
    for (event, attempt) in events[..2].iter().zip(1..) {
        assert_eq!(event["level"], "WARN");
        assert_eq!(event["target"], "retry");
        assert_eq!(field(event, "message"), "attempt failed; retrying");
        assert_eq!(field(event, "function"), "logs::login");
        assert_eq!(field(event, "attempt"), attempt);
        assert_eq!(field(event, "max"), 4);
        assert_eq!(field(event, "class"), "transient");
        assert_eq!(field(event, "code"), "ConnectionReset");
        assert_eq!(field(event, "error"), "backend said no");
        assert!(field(event, "elapsed_ms").is_u64());
    }
    assert_eq!(field(&events[0], "delay_ms"), 100);
    assert_eq!(field(&events[1], "delay_ms"), 200);
    assert_eq!(events[2]["level"], "INFO");
    assert_eq!(field(&events[2], "message"), "succeeded after retries");
    assert_eq!(field(&events[2], "attempt"), 3);
    assert!(!text.contains("hunter2"), "arguments never reach the logs");
}

#[test]
fn giving_up_is_an_error_with_the_reason() {
    for (kind, fail, reason, class, warnings) in [
        (ErrorKind::TimedOut, u32::MAX, "exhausted", "transient", 3),
        (ErrorKind::NotFound, u32::MAX, "permanent", "logical", 0),
        (
            ErrorKind::InvalidData,
            u32::MAX,
            "validation",
            "validation",
            0,
        ),
    ] {
        let calls = Cell::new(0);
        let (events, text) = capture(|| {
            login(&calls, "hunter2", fail, kind).unwrap_err();
        });
        assert_eq!(events.len(), warnings + 1, "{text}");
        let last = &events[warnings];
        assert_eq!(last["level"], "ERROR");
        assert_eq!(field(last, "message"), "giving up");
        assert_eq!(field(last, "reason"), reason);
        assert_eq!(field(last, "class"), class);
        assert_eq!(field(last, "attempt"), warnings as u64 + 1);
        assert!(field(last, "delay_ms").is_null());
        assert!(!text.contains("hunter2"));
    }
}

#[test]
fn a_first_try_success_logs_nothing() {
    let calls = Cell::new(0);
    let (events, _) = capture(|| {
        login(&calls, "hunter2", 0, ErrorKind::TimedOut).unwrap();
    });
    assert!(events.is_empty());
}

#[derive(Debug)]
struct DebugOnly {
    #[allow(dead_code)]
    code: u16,
}

#[retry(on = |_| true, max = 2, backoff = none, sleep = no_wait, name = "custom")]
fn debug_only(code: u16) -> Result<(), DebugOnly> {
    Err(DebugOnly { code })
}

#[retry(on = |_| true, max = unbounded, deadline = 1h, backoff = none, sleep = no_wait)]
fn unbounded(calls: &Cell<u32>) -> Result<(), String> {
    calls.set(calls.get() + 1);
    if calls.get() < 2 {
        return Err("display text".to_owned());
    }
    Ok(())
}

#[test]
fn errors_without_display_are_logged_with_debug() {
    let (events, _) = capture(|| {
        debug_only(503).unwrap_err();
    });
    assert_eq!(field(&events[0], "error"), "DebugOnly { code: 503 }");
    assert_eq!(field(&events[0], "function"), "custom");
    assert!(field(&events[0], "code").is_null());
}

#[test]
fn unbounded_calls_log_max_as_unbounded_and_display_errors_by_display() {
    let calls = Cell::new(0);
    let (events, _) = capture(|| unbounded(&calls).unwrap());
    assert_eq!(field(&events[0], "max"), "unbounded");
    assert_eq!(field(&events[0], "error"), "display text");
}

#[retry(max = unbounded, deadline = 3s, backoff = fixed(1s))]
async fn until_deadline() -> io::Result<()> {
    Err(ErrorKind::TimedOut.into())
}

#[test]
fn a_deadline_give_up_says_so_with_virtual_elapsed_time() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let (events, text) = capture(|| {
        runtime.block_on(until_deadline()).unwrap_err();
    });
    assert_eq!(events.len(), 3, "{text}");
    let last = &events[2];
    assert_eq!(field(last, "reason"), "deadline");
    assert_eq!(field(last, "elapsed_ms"), 2000);
}
