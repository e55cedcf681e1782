//! A subscriber set while a call runs logs the call's events without an
//! `elapsed_ms`: the call's clock was not read as it started, so no figure
//! stands for its time rather than a shorter one (with the `timing`
//! feature every call reads it, and the figure is there, from the start).
//! The only test of its process, so that no subscriber was ever set when
//! the call starts.

mod common;

use std::cell::{Cell, RefCell};
use std::io::{self, ErrorKind};
use std::time::Duration;

use reattempt::retry;

#[retry(max = 2, backoff = fixed(10ms))]
fn watched_once_started(calls: &Cell<u32>, watch: &dyn Fn()) -> io::Result<()> {
    calls.set(calls.get() + 1);
    if calls.get() == 1 {
        watch();
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(ErrorKind::ConnectionReset.into())
}

#[test]
fn a_call_that_started_unwatched_logs_no_elapsed_ms() {
    let (captured, subscriber) = common::json_subscriber();
    let subscriber = RefCell::new(Some(subscriber));
    let watching = RefCell::new(None);
    let watch = || {
        let subscriber = subscriber.borrow_mut().take().unwrap();
        *watching.borrow_mut() = Some(tracing::subscriber::set_default(subscriber));
    };
    watched_once_started(&Cell::new(0), &watch).unwrap_err();
    drop(watching);
    let (events, text) = captured.events();
    assert_eq!(events.len(), 2, "{text}");
    for event in &events {
        assert!(event["fields"]["attempt"].is_u64(), "{text}");
        let elapsed = event["fields"].get("elapsed_ms");
        if cfg!(feature = "timing") {
            // The first attempt's 20 ms are in it.
            assert!(elapsed.and_then(|ms| ms.as_u64()) >= Some(20), "{text}");
        } else {
            assert!(elapsed.is_none(), "{text}");
        }
    }
}
