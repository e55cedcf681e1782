//! One call's traces join up: its log events, its hooks' context and its
//! dead-letter record carry the same `call_id`, and records say where they
//! were written. Also what the events say: fields as they are, the delay a
//! server asked for, where each wait came from.

mod common;

use std::io::{self, ErrorKind};
use std::sync::Mutex;
use std::time::Duration;

use reattempt::dead_letter::{DelayFrom, Memory};
use reattempt::hooks::Context;
use reattempt::{CallId, Classification, GiveUp, retry};

fn no_wait(_: Duration) {}

static RECORDS: Memory = Memory::new();
static SEEN_BY_HOOKS: Mutex<Vec<CallId>> = Mutex::new(Vec::new());

fn remember(ctx: &Context<'_, io::Result<()>>) {
    SEEN_BY_HOOKS.lock().unwrap().push(ctx.call_id());
}

#[retry(max = 3, backoff = fixed(50ms), sleep = no_wait, dead_letter = RECORDS, on_retry = remember, on_give_up = remember, fields(url))]
fn fetch(url: String) -> io::Result<()> {
    let _ = url;
    Err(ErrorKind::ConnectionReset.into())
}

#[test]
fn events_hooks_and_the_record_of_one_call_carry_its_call_id() {
    let (events, _) = common::capture_logs(|| {
        fetch("http://127.0.0.1:1/a".to_owned()).unwrap_err();
    });
    let records = RECORDS.take();
    assert_eq!(records.len(), 1);
    let id = records[0].call_id.to_string();
    let hooks = SEEN_BY_HOOKS.lock().unwrap().clone();
    assert_eq!(hooks.len(), 3, "two retries and the give-up");
    assert!(hooks.iter().all(|h| h.to_string() == id));
    let ours: Vec<_> = events
        .iter()
        .filter(|e| e["fields"]["function"] == "correlation::fetch")
        .collect();
    assert_eq!(ours.len(), 3, "two WARNs and the ERROR");
    assert!(
        ours.iter().all(|e| e["fields"]["call_id"] == id.as_str()),
        "{ours:?}"
    );
    assert_eq!(records[0].pid, std::process::id());
    assert!(!records[0].host.is_empty());
    // A string named in `fields(..)` is written as it is, not quoted again.
    assert!(
        ours.iter()
            .all(|e| e["span"]["url"] == "http://127.0.0.1:1/a"),
        "{ours:?}"
    );
    assert_eq!(
        records[0].fields,
        [("url", "http://127.0.0.1:1/a".to_owned())]
    );
    // Waits of a fixed backoff come from the backoff, not from a cap.
    let from: Vec<_> = records[0].history.iter().map(|a| a.delay_from).collect();
    assert_eq!(
        from,
        [Some(DelayFrom::Backoff), Some(DelayFrom::Backoff), None]
    );
}

#[retry(
    on = |_| Classification::rate_limited().with_retry_after(Duration::from_secs(90)),
    max = 3,
    sleep = no_wait,
    max_retry_after = 30s
)]
fn throttled() -> io::Result<()> {
    Err(ErrorKind::Other.into())
}

#[test]
fn a_give_up_on_a_long_server_delay_shows_the_delay_and_the_limit() {
    let (events, _) = common::capture_logs(|| {
        throttled().unwrap_err();
    });
    let gave_up = events
        .iter()
        .find(|e| e["fields"]["reason"] == GiveUp::RetryAfterTooLong.as_str())
        .expect("the give-up event");
    assert_eq!(gave_up["fields"]["retry_after_ms"], 90_000);
    assert_eq!(gave_up["fields"]["max_retry_after_ms"], 30_000);
}

static NONE_RECORDS: Memory = Memory::new();

#[retry(max = 2, backoff = none, sleep = no_wait, dead_letter = NONE_RECORDS)]
fn no_backoff() -> io::Result<()> {
    Err(ErrorKind::ConnectionReset.into())
}

#[test]
fn waits_of_no_backoff_come_from_the_backoff() {
    no_backoff().unwrap_err();
    let records = NONE_RECORDS.take();
    assert_eq!(records[0].history[0].delay_from, Some(DelayFrom::Backoff));
}
