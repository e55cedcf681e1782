//! What the behaviour tests share.

/// Runs `f` with a JSON `tracing` subscriber (every level) on this thread,
/// as an application would print its logs, and returns the events parsed
/// and the raw text.
#[allow(dead_code, reason = "for the tests that read the logs")]
pub fn capture_logs(f: impl FnOnce()) -> (Vec<serde_json::Value>, String) {
    one_interest_per_thread();
    let (captured, subscriber) = json_subscriber();
    tracing::subscriber::with_default(subscriber, f);
    captured.events()
}

/// What a JSON subscriber of [`json_subscriber`] wrote.
#[derive(Clone, Default)]
pub struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    /// The events written so far, parsed, and the raw text.
    pub fn events(&self) -> (Vec<serde_json::Value>, String) {
        let text = String::from_utf8(self.0.lock().unwrap().clone()).unwrap();
        let events = text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
            .collect();
        (events, text)
    }
}

/// A JSON subscriber of every level, as an application would print its
/// logs, and where it writes them.
#[allow(dead_code, reason = "for the tests that read the logs")]
pub fn json_subscriber() -> (Captured, impl tracing::Subscriber + Send + Sync) {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .finish();
    (captured, subscriber)
}

/// Keeps a second dispatcher registered for the rest of the process, one
/// that wants nothing. With a single registered dispatcher, `tracing` works
/// out a callsite's interest from the default of whichever thread reaches
/// it first: a test running beside this one without a subscriber would
/// turn the callsite off for every thread, and this test's logs would miss
/// its events. With two it asks each, and then each event asks its own
/// thread's subscriber.
#[allow(dead_code, reason = "for the tests that read the logs")]
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

/// How many attempts run at once, and the most that ever did: a `static`
/// that the bodies of a limit's tests count themselves in.
#[allow(dead_code, reason = "for the tests of the limit")]
pub struct Gauge {
    running: std::sync::atomic::AtomicUsize,
    peak: std::sync::atomic::AtomicUsize,
}

#[allow(dead_code, reason = "for the tests of the limit")]
impl Gauge {
    pub const fn new() -> Gauge {
        Gauge {
            running: std::sync::atomic::AtomicUsize::new(0),
            peak: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// Counts an attempt as running until the guard drops (it ends, or is
    /// dropped with its call).
    pub fn start(&'static self) -> Running {
        use std::sync::atomic::Ordering::SeqCst;
        let now = self.running.fetch_add(1, SeqCst) + 1;
        self.peak.fetch_max(now, SeqCst);
        Running(self)
    }

    pub fn running(&self) -> usize {
        self.running.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn peak(&self) -> usize {
        self.peak.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// An attempt counted by a [`Gauge`] while it lives.
#[allow(dead_code, reason = "for the tests of the limit")]
pub struct Running(&'static Gauge);

impl Drop for Running {
    fn drop(&mut self) {
        self.0
            .running
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}
