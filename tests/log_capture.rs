//! Logs captured on one thread hold that thread's events, whatever other
//! threads reached the same callsites first without a subscriber. `tracing`
//! caches a callsite's interest for the whole process, from the thread that
//! reaches it first; the behaviour tests run side by side, and each captures
//! its own logs.

mod common;

use std::io::{self, ErrorKind};
use std::sync::atomic::{AtomicBool, Ordering};

use reattempt::retry;

#[retry(max = 2, backoff = none)]
fn fails_once(failed: &AtomicBool) -> io::Result<()> {
    if failed.swap(true, Ordering::Relaxed) {
        Ok(())
    } else {
        Err(ErrorKind::ConnectionReset.into())
    }
}

#[test]
fn a_capture_holds_its_events_after_a_thread_without_a_subscriber_reached_them_first() {
    let (events, text) = common::capture_logs(|| {
        std::thread::spawn(|| fails_once(&AtomicBool::new(false)).unwrap())
            .join()
            .unwrap();
        fails_once(&AtomicBool::new(false)).unwrap();
    });
    let retries = events
        .iter()
        .filter(|e| e["fields"]["function"] == "log_capture::fails_once" && e["level"] == "WARN")
        .count();
    assert_eq!(retries, 1, "this thread's retry, and only it:\n{text}");
}
