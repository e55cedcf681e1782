//! What the behaviour tests share.

/// Runs `f` with a JSON `tracing` subscriber (every level) on this thread,
/// as an application would print its logs, and returns the events parsed
/// and the raw text.
pub fn capture_logs(f: impl FnOnce()) -> (Vec<serde_json::Value>, String) {
    use std::io::{self, Write};
    use std::sync::{Arc, Mutex};

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

    one_interest_per_thread();
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, f);
    let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let events = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    (events, text)
}

/// Keeps a second dispatcher registered for the rest of the process, one
/// that wants nothing. With a single registered dispatcher, `tracing` works
/// out a callsite's interest from the default of whichever thread reaches
/// it first: a test running beside this one without a subscriber would
/// turn the callsite off for every thread, and this test's logs would miss
/// its events. With two it asks each, and then each event asks its own
/// thread's subscriber.
pub fn one_interest_per_thread() {
    static ANCHOR: std::sync::OnceLock<tracing::Dispatch> = std::sync::OnceLock::new();
    ANCHOR.get_or_init(|| tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default()));
}

/// The one "giving up" event among `events`, which must be for the
/// deadline, with the code of an attempt that never ran.
#[allow(dead_code, reason = "for the tests of the deadline and the limit")]
pub fn the_give_up_for_an_attempt_that_never_ran(
    events: &[serde_json::Value],
) -> &serde_json::Value {
    let giving_up: Vec<_> = events
        .iter()
        .filter(|e| e["fields"]["message"] == "giving up")
        .collect();
    assert_eq!(giving_up.len(), 1, "{events:?}");
    assert_eq!(giving_up[0]["fields"]["reason"], "deadline");
    assert_eq!(giving_up[0]["fields"]["code"], "not_started");
    giving_up[0]
}
