//! The `tracing` events of retried calls, captured through
//! `tracing-subscriber`'s JSON formatter exactly as an application would
//! print them.

mod common;

use std::cell::Cell;
use std::io::{self, ErrorKind};
use std::time::Duration;

use common::capture_logs as capture;
use reattempt::retry;
use serde_json::Value;

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
        assert_eq!(event["target"], "reattempt");
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
fn giving_up_is_an_error_with_the_reason_and_a_first_failure_not_worth_retrying_an_info() {
    for (kind, fail, reason, class, warnings, level, message) in [
        (
            ErrorKind::TimedOut,
            u32::MAX,
            "exhausted",
            "transient",
            3,
            "ERROR",
            "giving up",
        ),
        (
            ErrorKind::NotFound,
            u32::MAX,
            "permanent",
            "logical",
            0,
            "INFO",
            "attempt failed; not retried",
        ),
        (
            ErrorKind::InvalidData,
            u32::MAX,
            "validation",
            "validation",
            0,
            "INFO",
            "attempt failed; not retried",
        ),
    ] {
        let calls = Cell::new(0);
        let (events, text) = capture(|| {
            login(&calls, "hunter2", fail, kind).unwrap_err();
        });
        assert_eq!(events.len(), warnings + 1, "{text}");
        let last = &events[warnings];
        assert_eq!(last["level"], level);
        assert_eq!(field(last, "message"), message);
        assert_eq!(field(last, "reason"), reason);
        assert_eq!(field(last, "class"), class);
        assert_eq!(field(last, "attempt"), warnings as u64 + 1);
        assert!(field(last, "delay_ms").is_null());
        assert!(!text.contains("hunter2"));
    }
}

/// Times out twice, then answers that what it looks for is not there.
#[retry(max = 4, backoff = none, sleep = no_wait)]
fn then_not_found(calls: &Cell<u32>) -> io::Result<()> {
    calls.set(calls.get() + 1);
    let kind = if calls.get() <= 2 {
        ErrorKind::TimedOut
    } else {
        ErrorKind::NotFound
    };
    Err(io::Error::new(kind, "backend said no"))
}

#[test]
fn a_failure_not_worth_retrying_after_retries_is_an_error() {
    let calls = Cell::new(0);
    let (events, text) = capture(|| {
        then_not_found(&calls).unwrap_err();
    });
    assert_eq!(events.len(), 3, "{text}");
    let last = &events[2];
    assert_eq!(last["level"], "ERROR");
    assert_eq!(field(last, "message"), "giving up");
    assert_eq!(field(last, "reason"), "permanent");
    assert_eq!(field(last, "attempt"), 3);
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

/// An error type the function is generic over: it is written by what its
/// bounds promise, `Display` where they promise it, else `Debug`.
#[retry(on = |_| true, max = 2, backoff = none, sleep = no_wait)]
fn generic_debug<E: std::fmt::Debug>(error: impl Fn() -> E) -> Result<(), E> {
    Err(error())
}

#[retry(on = |_| true, max = 2, backoff = none, sleep = no_wait)]
fn generic_display<E: std::fmt::Debug + std::fmt::Display>(error: impl Fn() -> E) -> Result<(), E> {
    Err(error())
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
fn a_generic_error_type_is_written_as_its_bounds_allow() {
    let (events, _) = capture(|| {
        generic_debug(|| "quoted").unwrap_err();
    });
    assert_eq!(field(&events[0], "error"), "\"quoted\"");
    let (events, _) = capture(|| {
        generic_display(|| "plain").unwrap_err();
    });
    assert_eq!(field(&events[0], "error"), "plain");
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
    let retrying = events
        .iter()
        .find(|e| field(e, "message") == "attempt failed; retrying")
        .unwrap();
    assert_eq!(field(retrying, "max"), "unbounded");
    assert_eq!(field(&events[0], "error"), "display text");
}

/// A runtime whose clock is paused: waits end at once, and the time the
/// logs give is exact.
fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

#[retry(max = unbounded, deadline = 3s, backoff = fixed(1s))]
async fn until_deadline() -> io::Result<()> {
    Err(ErrorKind::TimedOut.into())
}

#[test]
fn a_deadline_give_up_says_so_with_virtual_elapsed_time() {
    let runtime = paused_runtime();
    let (events, text) = capture(|| {
        runtime.block_on(until_deadline()).unwrap_err();
    });
    assert_eq!(events.len(), 3, "{text}");
    let last = &events[2];
    assert_eq!(field(last, "reason"), "deadline");
    assert_eq!(field(last, "elapsed_ms"), 2000);
}

#[retry(max = 2, backoff = fixed(1s))]
async fn slow_first_attempt() -> io::Result<()> {
    tokio::time::sleep(Duration::from_secs(3)).await;
    Err(ErrorKind::ConnectionReset.into())
}

/// Whatever the call's arguments, a listening subscriber sees the time
/// since the call started, its first attempt included: never a shorter
/// span under the same name.
#[test]
fn elapsed_ms_counts_from_the_start_of_the_call_first_attempt_included() {
    let runtime = paused_runtime();
    let (events, text) = capture(|| {
        runtime.block_on(slow_first_attempt()).unwrap_err();
    });
    // 0-3 s the first attempt, 3-4 s the wait, 4-7 s the second.
    assert_eq!(events.len(), 2, "{text}");
    assert_eq!(field(&events[0], "message"), "attempt failed; retrying");
    assert_eq!(field(&events[0], "elapsed_ms"), 3000);
    assert_eq!(field(&events[1], "message"), "giving up");
    assert_eq!(field(&events[1], "elapsed_ms"), 7000);
}

#[retry(max = 2, backoff = fixed(10ms))]
fn slow_sync_first_attempt(calls: &Cell<u32>) -> io::Result<()> {
    calls.set(calls.get() + 1);
    if calls.get() == 1 {
        std::thread::sleep(Duration::from_millis(30));
    }
    Err(ErrorKind::ConnectionReset.into())
}

#[test]
fn a_sync_calls_elapsed_ms_counts_its_first_attempt_too() {
    let calls = Cell::new(0);
    let (events, text) = capture(|| {
        slow_sync_first_attempt(&calls).unwrap_err();
    });
    assert_eq!(events.len(), 2, "{text}");
    let at = |event: &Value| field(event, "elapsed_ms").as_u64().unwrap();
    assert!(at(&events[0]) >= 30, "{text}");
    assert!(at(&events[1]) >= 40, "{text}");
}

#[retry(max = 2, backoff = none, idempotent = key)]
fn keyed(sent: &std::cell::RefCell<Vec<String>>) -> io::Result<()> {
    let key = reattempt::attempt().unwrap().call_id().idempotency_key();
    sent.borrow_mut().push(key);
    Err(ErrorKind::ConnectionReset.into())
}

/// The events of a call with `idempotent = key` carry the key it sends;
/// other calls' events have no such field.
#[test]
fn the_events_of_a_call_with_an_idempotency_key_carry_it() {
    let sent = std::cell::RefCell::new(Vec::new());
    let (events, text) = capture(|| {
        keyed(&sent).unwrap_err();
    });
    let sent = sent.into_inner();
    assert_eq!((sent.len(), events.len()), (2, 2), "{text}");
    assert_eq!(sent[0], sent[1], "one key for every attempt");
    for event in &events {
        assert_eq!(field(event, "idempotency_key"), sent[0].as_str(), "{text}");
    }
    let calls = Cell::new(0);
    let (events, _) = capture(|| {
        login(&calls, "pw", 1, ErrorKind::ConnectionReset).unwrap();
    });
    assert!(
        events
            .iter()
            .all(|e| e["fields"].get("idempotency_key").is_none())
    );
}

#[retry(max = forever, backoff = none)]
fn until_it_works(calls: &Cell<u32>, failures: u32) -> io::Result<u32> {
    calls.set(calls.get() + 1);
    if calls.get() <= failures {
        return Err(ErrorKind::ConnectionReset.into());
    }
    Ok(calls.get())
}

/// A function that retries for ever says so, once, the first time one of
/// its calls retries.
#[test]
fn retrying_for_ever_is_a_warn_once_per_function() {
    let said = |events: &[Value]| {
        events
            .iter()
            .filter(|e| {
                field(e, "message")
                    .as_str()
                    .is_some_and(|m| m.starts_with("retrying for ever"))
            })
            .count()
    };
    let (events, text) = capture(|| {
        assert_eq!(until_it_works(&Cell::new(0), 3).unwrap(), 4);
        assert_eq!(until_it_works(&Cell::new(0), 2).unwrap(), 3);
    });
    assert_eq!(said(&events), 1, "{text}");
    let once = events
        .iter()
        .find(|e| said(std::slice::from_ref(e)) == 1)
        .unwrap();
    assert_eq!(once["level"], "WARN");
    assert_eq!(field(once, "function"), "logs::until_it_works");
    let retrying = events
        .iter()
        .find(|e| field(e, "message") == "attempt failed; retrying")
        .unwrap();
    assert_eq!(field(retrying, "max"), "unbounded");
}

#[derive(Debug)]
struct Order {
    id: u32,
}

#[retry(max = 2, backoff = none, sleep = no_wait, fields(user_id, order))]
fn charge(user_id: u64, order: &Order, card_number: &str) -> io::Result<()> {
    let _ = (order.id, card_number);
    Err(ErrorKind::ConnectionRefused.into())
}

#[test]
fn named_fields_appear_in_every_event_and_other_arguments_in_none() {
    let (events, text) = capture(|| {
        charge(42, &Order { id: 7 }, "4111 1111 1111 1111").unwrap_err();
    });
    assert_eq!(events.len(), 2, "{text}");
    for event in &events {
        assert_eq!(event["span"]["name"], "retry");
        assert_eq!(event["span"]["user_id"], "42");
        assert_eq!(event["span"]["order"], "Order { id: 7 }");
    }
    // The whole number: four digits alone may turn up in a call id or a
    // timestamp, by chance.
    assert!(
        !text.contains("4111 1111 1111 1111") && !text.contains("card_number"),
        "an argument not named in fields never appears"
    );
}

#[retry(if_result = |n: &u32| *n < 2, max = 3, backoff = none, sleep = no_wait)]
fn polled(calls: &Cell<u32>) -> u32 {
    calls.set(calls.get() + 1);
    calls.get()
}

#[test]
fn a_rejected_value_is_logged_as_such_without_the_value() {
    let calls = Cell::new(0);
    let (events, text) = capture(|| {
        assert_eq!(polled(&calls), 2);
    });
    assert_eq!(events.len(), 2, "{text}");
    assert_eq!(field(&events[0], "code"), "if_result");
    assert_eq!(
        field(&events[0], "error"),
        "if_result rejected the returned value"
    );
    assert_eq!(events[1]["level"], "INFO");
}

#[retry(max = 2, backoff = none, attempt_timeout = 1s)]
async fn hangs() -> io::Result<()> {
    std::future::pending::<()>().await;
    Ok(())
}

#[test]
fn a_timed_out_attempt_is_logged_as_a_transient_timeout() {
    let runtime = paused_runtime();
    let (events, text) = capture(|| {
        runtime.block_on(hangs()).unwrap_err();
    });
    assert_eq!(events.len(), 2, "{text}");
    assert_eq!(field(&events[0], "class"), "transient");
    assert_eq!(field(&events[0], "code"), "attempt_timeout");
    assert_eq!(field(&events[0], "error"), "attempt timed out after 1s");
    assert_eq!(field(&events[1], "reason"), "exhausted");
}

#[retry(on = |_| reattempt::Classification::rate_limited().with_retry_after(Duration::from_secs(90)), max = 3, sleep = no_wait)]
fn asks_too_much() -> Result<(), String> {
    Err("slow down".to_owned())
}

#[test]
fn a_server_delay_past_the_cap_is_logged_with_its_reason() {
    let (events, _) = capture(|| {
        asks_too_much().unwrap_err();
    });
    assert_eq!(events.len(), 1);
    assert_eq!(field(&events[0], "reason"), "retry_after_too_long");
    assert_eq!(field(&events[0], "class"), "rate_limited");
}

/// Two types of one module, each with a retried `load`: both are named
/// `logs::load` by default, which the attribute cannot tell apart.
struct Orders;
struct Invoices;

impl Orders {
    #[retry(max = 2, backoff = none)]
    fn load(&self) -> io::Result<u32> {
        Ok(1)
    }
}

impl Invoices {
    #[retry(max = 2, backoff = none)]
    fn load(&self) -> io::Result<u32> {
        Ok(2)
    }
}

#[test]
fn functions_named_alike_by_default_are_warned_about_once() {
    let (events, text) = capture(|| {
        for _ in 0..2 {
            assert_eq!(Orders.load().unwrap(), 1);
            assert_eq!(Invoices.load().unwrap(), 2);
        }
    });
    assert_eq!(events.len(), 1, "{text}");
    let event = &events[0];
    assert_eq!(event["level"], "WARN");
    assert_eq!(event["target"], "reattempt");
    assert_eq!(field(event, "function"), "logs::load");
    let message = field(event, "message").as_str().unwrap();
    assert!(message.contains(r#"give each `name = "..."`"#), "{message}");
}

#[retry(name = "logs::shared", max = 2, backoff = none)]
fn reads_one_way() -> io::Result<u32> {
    Ok(1)
}

#[retry(name = "logs::shared", max = 2, backoff = none)]
fn reads_another_way() -> io::Result<u32> {
    Ok(2)
}

/// A name given with `name = ".."` may be shared on purpose: the counts of
/// the functions that share it add up, and nothing is said.
#[test]
fn functions_given_one_name_share_it_without_a_warning() {
    let (events, text) = capture(|| {
        assert_eq!(reads_one_way().unwrap(), 1);
        assert_eq!(reads_another_way().unwrap(), 2);
    });
    assert!(events.is_empty(), "{text}");
    assert_eq!(reattempt::stats::get("logs::shared").unwrap().calls, 2);
}
