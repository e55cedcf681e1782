//! Retries across many calls: the retry budget, the concurrency limit,
//! dead-letter records, alerts, statistics, dynamic policies and nested
//! retries.

mod common;

use std::cell::Cell;
use std::io::{self, ErrorKind};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, RwLock};
use std::time::Duration;

use reattempt::dead_letter::{DelayFrom, JsonLines, Memory};
use reattempt::dynamic::{BackoffSpec, DynamicPolicy};
use reattempt::{Alert, Class, Classification, ConcurrencyLimit, GiveUp, RetryBudget, retry};
use serde_json::Value;

fn no_wait(_: Duration) {}

/// Captures JSON log lines of `f`.
fn capture(f: impl FnOnce()) -> Vec<Value> {
    common::capture_logs(f).0
}

// ---- budget ----

static TIGHT: RetryBudget = RetryBudget::new(0.2, 0, Duration::from_secs(600));

#[retry(max = 5, backoff = none, sleep = no_wait, budget = TIGHT)]
fn with_budget(attempts: &AtomicU32) -> io::Result<()> {
    attempts.fetch_add(1, Ordering::Relaxed);
    Err(ErrorKind::ConnectionRefused.into())
}

#[retry(max = 5, backoff = none, sleep = no_wait)]
fn without_budget(attempts: &AtomicU32) -> io::Result<()> {
    attempts.fetch_add(1, Ordering::Relaxed);
    Err(ErrorKind::ConnectionRefused.into())
}

#[test]
fn a_budget_keeps_retries_within_its_ratio_of_first_attempts() {
    let (with, without) = (AtomicU32::new(0), AtomicU32::new(0));
    for _ in 0..1_000 {
        with_budget(&with).unwrap_err();
        without_budget(&without).unwrap_err();
    }
    let (with, without) = (with.into_inner(), without.into_inner());
    assert_eq!(without, 5_000);
    assert!(
        with <= 1_200,
        "{with} attempts for 1,000 calls with a 20% budget"
    );
    assert!(
        with >= 1_150,
        "the budget is used, not just refused: {with}"
    );
    let budget = reattempt::stats::get("operations::with_budget").unwrap();
    assert!(budget.give_ups.budget >= 800, "{budget:?}");
    let events = capture(|| {
        with_budget(&AtomicU32::new(0)).unwrap_err();
    });
    assert!(
        events.iter().any(|e| e["fields"]["reason"] == "budget"),
        "a call refused a retry says so: {events:?}"
    );
}

// ---- concurrency limit ----

static FOUR: ConcurrencyLimit = ConcurrencyLimit::new(4);
static RUNNING: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

#[retry(max = 2, backoff = fixed(10s), limit = FOUR)]
async fn limited(fail_first: bool, calls: Arc<AtomicU32>) -> io::Result<()> {
    let now = RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
    PEAK.fetch_max(now, Ordering::SeqCst);
    let attempt = calls.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(100)).await;
    RUNNING.fetch_sub(1, Ordering::SeqCst);
    if fail_first && attempt == 0 {
        return Err(ErrorKind::TimedOut.into());
    }
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_hundred_callers_never_run_more_than_the_limit_and_waits_hold_no_permit() {
    let tasks: Vec<_> = (0..100)
        .map(|i| tokio::spawn(limited(i % 2 == 0, Arc::new(AtomicU32::new(0)))))
        .collect();
    // Mid-way, some callers wait 10 s between attempts: they hold no permit.
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(FOUR.in_use() <= 4);
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    assert_eq!(PEAK.load(Ordering::SeqCst), 4);
    assert_eq!(FOUR.in_use(), 0);
    assert_eq!(FOUR.waiting(), 0);

    // A caller waiting out its backoff leaves the slot free.
    let calls = Arc::new(AtomicU32::new(0));
    let waiting = tokio::spawn(limited(true, Arc::clone(&calls)));
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(FOUR.in_use(), 0, "no permit during the 10 s wait");
    waiting.await.unwrap().unwrap();
}

static ONE: ConcurrencyLimit = ConcurrencyLimit::new(1);

#[retry(max = 2, backoff = none, limit = ONE)]
async fn hangs_holding_the_permit(started: &AtomicBool) -> io::Result<()> {
    started.store(true, Ordering::SeqCst);
    std::future::pending::<()>().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_dropped_future_returns_its_permit() {
    let started = AtomicBool::new(false);
    let call = hangs_holding_the_permit(&started);
    let cancelled = tokio::time::timeout(Duration::from_secs(1), call).await;
    assert!(cancelled.is_err());
    assert!(started.load(Ordering::SeqCst));
    assert_eq!(ONE.in_use(), 0);
}

static THREE: ConcurrencyLimit = ConcurrencyLimit::new(3);
static SYNC_RUNNING: AtomicUsize = AtomicUsize::new(0);
static SYNC_PEAK: AtomicUsize = AtomicUsize::new(0);

#[retry(max = 3, backoff = fixed(1ms), limit = THREE)]
fn limited_sync(calls: &Cell<u32>) -> io::Result<()> {
    let now = SYNC_RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
    SYNC_PEAK.fetch_max(now, Ordering::SeqCst);
    std::thread::yield_now();
    SYNC_RUNNING.fetch_sub(1, Ordering::SeqCst);
    calls.set(calls.get() + 1);
    if calls.get() < 2 {
        return Err(ErrorKind::TimedOut.into());
    }
    Ok(())
}

#[test]
fn blocking_callers_share_the_limit_too() {
    let threads: Vec<_> = (0..16)
        .map(|_| {
            std::thread::spawn(|| {
                for _ in 0..10 {
                    limited_sync(&Cell::new(0)).unwrap();
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    assert_eq!(SYNC_PEAK.load(Ordering::SeqCst), 3);
    assert_eq!(THREE.in_use(), 0);
}

// ---- dead letters ----

static REVIEW: Memory = Memory::new();

#[derive(Debug)]
struct Order {
    #[allow(dead_code)]
    id: u32,
}

fn throttled_then(code: u16) -> impl Fn(&u16) -> Classification {
    move |status| {
        if *status == 429 {
            Classification::rate_limited()
                .with_code(429u16)
                .with_retry_after(Duration::from_millis(250))
        } else {
            reattempt::http::status(code.max(*status))
        }
    }
}

#[retry(on = throttled_then(0), max = 4, backoff = exp(base = 100ms, max = 150ms), sleep = no_wait, dead_letter = REVIEW, fields(order))]
fn submit(order: &Order, card: &str, statuses: &Mutex<Vec<u16>>) -> Result<(), u16> {
    let _ = card;
    let next = statuses.lock().unwrap().remove(0);
    Err(next)
}

static SLOW_REVIEW: Memory = Memory::new();

/// Three seconds an attempt, each a failure.
async fn slow_failure() -> io::Result<()> {
    tokio::time::sleep(Duration::from_secs(3)).await;
    Err(ErrorKind::ConnectionReset.into())
}

#[retry(max = 2, backoff = fixed(1s), dead_letter = SLOW_REVIEW)]
async fn slow_failures() -> io::Result<()> {
    slow_failure().await
}

#[retry(max = 2, backoff = fixed(1s), deadline = 1m, dead_letter = SLOW_REVIEW)]
async fn slow_failures_with_deadline() -> io::Result<()> {
    slow_failure().await
}

#[retry(max = 2, backoff = fixed(1s), after = |_| {}, dead_letter = SLOW_REVIEW)]
async fn slow_failures_with_a_hook() -> io::Result<()> {
    slow_failure().await
}

/// A record's time counts from the call's start, first attempt included,
/// whatever else the function has: a dead-letter sink reads the clock as
/// the call starts.
#[tokio::test(start_paused = true)]
async fn what_the_time_of_a_record_covers() {
    // 0-3 s the first attempt, 3-4 s the wait, 4-7 s the second.
    slow_failures().await.unwrap_err();
    slow_failures_with_deadline().await.unwrap_err();
    slow_failures_with_a_hook().await.unwrap_err();
    let records = SLOW_REVIEW.take();
    let times: Vec<_> = records.iter().map(|r| (r.function, r.elapsed)).collect();
    assert_eq!(
        times,
        [
            ("operations::slow_failures", Duration::from_secs(7)),
            (
                "operations::slow_failures_with_deadline",
                Duration::from_secs(7)
            ),
            (
                "operations::slow_failures_with_a_hook",
                Duration::from_secs(7)
            ),
        ]
    );
    for record in &records {
        let span = record
            .last_attempt_at
            .duration_since(record.first_attempt_at);
        assert_eq!(span.unwrap(), record.elapsed, "{}", record.function);
    }
}

#[test]
fn records_carry_the_failure_the_history_and_named_fields_only() {
    let statuses = Mutex::new(vec![503, 429, 503, 503]);
    submit(&Order { id: 17 }, "4111 1111 1111 1111", &statuses).unwrap_err();
    let records = REVIEW.take();
    assert_eq!(records.len(), 1);
    let record = &records[0];
    assert_eq!(record.function, "operations::submit");
    assert_eq!(record.reason, GiveUp::Exhausted);
    assert_eq!(
        (record.class, record.code.as_deref()),
        (Class::Transient, Some("503"))
    );
    assert_eq!(record.attempts, 4);
    assert_eq!(record.error, "503");
    assert_eq!(record.fields, [("order", "Order { id: 17 }".to_owned())]);
    let history: Vec<_> = record
        .history
        .iter()
        .map(|a| (a.attempt, a.delay_from, a.delay))
        .collect();
    assert_eq!(
        history,
        [
            (
                1,
                Some(DelayFrom::Backoff),
                Some(Duration::from_millis(100))
            ),
            (
                2,
                Some(DelayFrom::ServerDelay),
                Some(Duration::from_millis(250))
            ),
            (3, Some(DelayFrom::Cap), Some(Duration::from_millis(150))),
            (4, None, None),
        ]
    );
    assert!(record.last_attempt_at >= record.first_attempt_at);
    // The whole number: four digits alone may turn up in a call id by chance.
    assert!(!record.to_json().contains("4111 1111 1111 1111"));

    let statuses = Mutex::new(vec![404]);
    submit(&Order { id: 18 }, "", &statuses).unwrap_err();
    let records = REVIEW.take();
    assert_eq!(records[0].reason, GiveUp::Permanent);
    assert_eq!(records[0].attempts, 1);
}

/// A file of this process's own: two runs of the suite at once must not
/// append to one file and count each other's records.
static FILE: LazyLock<JsonLines> = LazyLock::new(|| {
    let path = format!(
        "{}/operations-dead-letters-{}.jsonl",
        env!("CARGO_TARGET_TMPDIR"),
        std::process::id()
    );
    JsonLines::new(Box::leak(path.into_boxed_str()))
});

#[retry(max = 1, dead_letter = FILE, fields(worker, job))]
fn fails_for_good(worker: usize, job: usize) -> io::Result<()> {
    Err(io::Error::new(
        ErrorKind::PermissionDenied,
        "no \"access\"\nat all",
    ))
}

#[test]
fn eight_writers_append_eight_thousand_whole_lines() {
    let _ = std::fs::remove_file(FILE.path());
    let threads: Vec<_> = (0..8)
        .map(|worker| {
            std::thread::spawn(move || {
                for job in 0..1_000 {
                    fails_for_good(worker, job).unwrap_err();
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    let text = std::fs::read_to_string(FILE.path()).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    assert_eq!(lines.len(), 8_000);
    let mut seen: Vec<(String, String)> = lines
        .iter()
        .map(|l| {
            assert_eq!(l["reason"], "permanent");
            assert_eq!(l["error"], "no \"access\"\nat all");
            (
                l["fields"]["worker"].as_str().unwrap().to_owned(),
                l["fields"]["job"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 8_000, "every record once");
    std::fs::remove_file(FILE.path()).unwrap();
}

static UNWRITABLE: JsonLines = JsonLines::new("target/no-such-dir/dead-letters.jsonl");

#[retry(max = 2, backoff = none, sleep = no_wait, dead_letter = UNWRITABLE, fields(account))]
fn with_a_broken_sink(account: u32) -> io::Result<()> {
    Err(ErrorKind::TimedOut.into())
}

#[test]
fn a_failing_sink_logs_the_whole_record_and_the_caller_gets_its_error() {
    let mut error = None;
    let events = capture(|| error = Some(with_a_broken_sink(7).unwrap_err()));
    assert_eq!(
        error.unwrap().kind(),
        ErrorKind::TimedOut,
        "the caller's own error"
    );
    let lost = events
        .iter()
        .find(|e| e["fields"]["message"] == "dead-letter sink failed; the record is here instead")
        .expect("the record is logged");
    let fields = &lost["fields"];
    assert_eq!(fields["function"], "operations::with_a_broken_sink");
    assert_eq!(fields["reason"], "exhausted");
    assert_eq!(fields["attempts"], 2);
    assert_eq!(fields["fields"], r#"{"account":"7"}"#);
    assert!(
        fields["history"]
            .as_str()
            .unwrap()
            .contains(r#""attempt":1"#)
    );
    assert!(
        fields["sink_error"]
            .as_str()
            .unwrap()
            .contains("No such file")
    );
}

// ---- alerts ----

static ALERTS: Mutex<Vec<Alert>> = Mutex::new(Vec::new());

fn raise(alert: &Alert) {
    ALERTS.lock().unwrap().push(alert.clone());
}

#[retry(max = 2, backoff = none, sleep = no_wait, alert_after = 3, on_alert = raise)]
fn watched(fail: Option<ErrorKind>) -> io::Result<()> {
    match fail {
        Some(kind) => Err(kind.into()),
        None => Ok(()),
    }
}

#[test]
fn the_same_failure_n_times_in_a_row_raises_one_alert_until_a_success() {
    let reset = ErrorKind::ConnectionReset;
    let events = capture(|| {
        watched(Some(reset)).unwrap_err(); // two failures
        assert!(ALERTS.lock().unwrap().is_empty());
        watched(Some(reset)).unwrap_err(); // third: alert; fourth: no second alert
    });
    let alerts = ALERTS.lock().unwrap().clone();
    assert_eq!(alerts.len(), 1);
    assert_eq!(alerts[0].function, "operations::watched");
    assert_eq!((alerts[0].class, alerts[0].count), (Class::Transient, 3));
    assert_eq!(alerts[0].code.as_deref(), Some("ConnectionReset"));
    let logged: Vec<_> = events
        .iter()
        .filter(|e| e["fields"]["message"] == "alert: the same failure repeated")
        .collect();
    assert_eq!(logged.len(), 1);
    assert_eq!(logged[0]["level"], "ERROR");

    watched(Some(reset)).unwrap_err();
    assert_eq!(ALERTS.lock().unwrap().len(), 1, "fired once per streak");
    watched(Some(ErrorKind::TimedOut)).unwrap_err(); // a different failure starts over
    watched(None).unwrap(); // success: re-armed
    watched(Some(reset)).unwrap_err();
    watched(Some(reset)).unwrap_err();
    assert_eq!(ALERTS.lock().unwrap().len(), 2);
    assert_eq!(
        reattempt::stats::get("operations::watched").unwrap().alerts,
        2
    );
}

// ---- statistics ----

#[retry(max = 3, backoff = none, sleep = no_wait, name = "operations::counted")]
fn counted(calls: &Cell<u32>, succeed_on: u32, kind: ErrorKind) -> io::Result<()> {
    calls.set(calls.get() + 1);
    if calls.get() >= succeed_on {
        Ok(())
    } else {
        Err(kind.into())
    }
}

#[test]
fn statistics_count_a_known_sequence_of_calls() {
    counted(&Cell::new(0), 1, ErrorKind::TimedOut).unwrap(); // first try
    counted(&Cell::new(0), 1, ErrorKind::TimedOut).unwrap(); // first try
    counted(&Cell::new(0), 3, ErrorKind::TimedOut).unwrap(); // after 2 retries
    counted(&Cell::new(0), 9, ErrorKind::TimedOut).unwrap_err(); // exhausted: 3 attempts
    counted(&Cell::new(0), 9, ErrorKind::NotFound).unwrap_err(); // permanent: 1 attempt
    counted(&Cell::new(0), 9, ErrorKind::InvalidData).unwrap_err(); // validation: 1 attempt
    let stats = reattempt::stats::get("operations::counted").unwrap();
    assert_eq!(stats.calls, 6);
    assert_eq!(stats.first_try_successes, 2);
    assert_eq!(stats.successes_after_retries, 1);
    assert_eq!(stats.give_ups.exhausted, 1);
    assert_eq!(stats.give_ups.permanent, 1);
    assert_eq!(stats.give_ups.validation, 1);
    assert_eq!(stats.give_ups.total(), 3);
    assert_eq!(stats.attempts, 1 + 1 + 3 + 3 + 1 + 1);
    assert!(
        reattempt::stats::all()
            .iter()
            .any(|s| s.function == "operations::counted")
    );
}

// ---- dynamic policy ----

static CONFIG: RwLock<DynamicPolicy> = RwLock::new(DynamicPolicy::new());

#[retry(max = 5, backoff = fixed(1s), sleep = record_wait, policy = CONFIG.read().unwrap().clone())]
fn configured(calls: &Cell<u32>) -> io::Result<()> {
    calls.set(calls.get() + 1);
    Err(ErrorKind::TimedOut.into())
}

thread_local! {
    static WAITS: std::cell::RefCell<Vec<Duration>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn record_wait(d: Duration) {
    WAITS.with(|w| w.borrow_mut().push(d));
}

#[test]
fn a_policy_flipped_at_run_time_applies_to_the_next_call_and_a_bad_one_falls_back_once() {
    let run = || {
        let calls = Cell::new(0);
        configured(&calls).unwrap_err();
        (calls.get(), WAITS.with(|w| w.take()))
    };
    assert_eq!(run(), (5, vec![Duration::from_secs(1); 4]));

    *CONFIG.write().unwrap() = DynamicPolicy::new()
        .max_attempts(2)
        .backoff(BackoffSpec::Fixed(Duration::from_millis(10)));
    assert_eq!(run(), (2, vec![Duration::from_millis(10)]));

    *CONFIG.write().unwrap() = DynamicPolicy::new().max_attempts(0);
    let mut results = Vec::new();
    let events = capture(|| {
        results.push(run());
        results.push(run());
    });
    assert_eq!(
        results,
        [
            (5, vec![Duration::from_secs(1); 4]),
            (5, vec![Duration::from_secs(1); 4])
        ]
    );
    let warnings: Vec<_> = events
        .iter()
        .filter(|e| e["fields"]["message"] == "invalid dynamic policy; using the static arguments")
        .collect();
    assert_eq!(warnings.len(), 1, "once per kind of problem");
    assert!(
        warnings[0]["fields"]["problem"]
            .as_str()
            .unwrap()
            .contains("max_attempts is 0")
    );
    *CONFIG.write().unwrap() = DynamicPolicy::new();
}

/// Whether `error` is a timeout the library made.
fn timed_out(error: &io::Error) -> bool {
    error
        .get_ref()
        .is_some_and(|inner| inner.is::<reattempt::AttemptTimeout>())
}

#[retry(max = 3, backoff = fixed(1s), policy = DynamicPolicy::new().deadline(Duration::from_secs(2)))]
async fn ten_seconds_within_a_configured_deadline(calls: &Cell<u32>) -> io::Result<()> {
    calls.set(calls.get() + 1);
    tokio::time::sleep(Duration::from_secs(10)).await;
    Err(ErrorKind::ConnectionRefused.into())
}

#[tokio::test(start_paused = true)]
async fn a_configured_deadline_cuts_a_running_async_attempt_as_a_static_one_does() {
    let calls = Cell::new(0);
    let started = tokio::time::Instant::now();
    let error = ten_seconds_within_a_configured_deadline(&calls)
        .await
        .unwrap_err();
    assert_eq!(started.elapsed(), Duration::from_secs(2));
    assert_eq!(calls.get(), 1);
    assert!(timed_out(&error), "{error:?}");
    let stats =
        reattempt::stats::get("operations::ten_seconds_within_a_configured_deadline").unwrap();
    assert_eq!(stats.give_ups.deadline, 1);
}

#[retry(max = 3, backoff = none, policy = DynamicPolicy::new().max_attempts(2).attempt_timeout(Duration::from_secs(1)))]
async fn ten_seconds_within_a_configured_timeout(calls: &Cell<u32>) -> io::Result<()> {
    calls.set(calls.get() + 1);
    tokio::time::sleep(Duration::from_secs(10)).await;
    Err(ErrorKind::ConnectionRefused.into())
}

#[tokio::test(start_paused = true)]
async fn a_configured_attempt_timeout_cuts_each_async_attempt() {
    let calls = Cell::new(0);
    let started = tokio::time::Instant::now();
    let error = ten_seconds_within_a_configured_timeout(&calls)
        .await
        .unwrap_err();
    assert_eq!(calls.get(), 2);
    assert_eq!(started.elapsed(), Duration::from_secs(2));
    assert!(timed_out(&error), "{error:?}");
}

/// An attempt timeout a sync function cannot honour.
#[retry(max = 5, backoff = none, sleep = no_wait, policy = DynamicPolicy::new().max_attempts(2).attempt_timeout(Duration::from_millis(1)))]
fn sync_with_a_configured_timeout(calls: &Cell<u32>) -> io::Result<()> {
    calls.set(calls.get() + 1);
    std::thread::sleep(Duration::from_millis(5));
    Err(ErrorKind::ConnectionRefused.into())
}

/// An error type that cannot stand for a timeout.
#[derive(Debug)]
struct Opaque;

impl std::fmt::Display for Opaque {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("opaque")
    }
}

#[retry(on = |_: &Opaque| true, max = 5, backoff = none, policy = DynamicPolicy::new().max_attempts(2).attempt_timeout(Duration::from_secs(1)))]
async fn opaque_with_a_configured_timeout(calls: &Cell<u32>) -> Result<(), Opaque> {
    calls.set(calls.get() + 1);
    tokio::time::sleep(Duration::from_secs(3)).await;
    Err(Opaque)
}

#[test]
fn a_configured_attempt_timeout_that_cannot_cut_is_left_out_and_said_once() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let mut seen = Vec::new();
    let events = capture(|| {
        for _ in 0..2 {
            let calls = Cell::new(0);
            let error = sync_with_a_configured_timeout(&calls).unwrap_err();
            seen.push((calls.get(), timed_out(&error)));
        }
        for _ in 0..2 {
            let calls = Cell::new(0);
            let started = runtime.block_on(async { tokio::time::Instant::now() });
            runtime
                .block_on(opaque_with_a_configured_timeout(&calls))
                .unwrap_err();
            let took = runtime.block_on(async { started.elapsed() });
            seen.push((calls.get(), took != Duration::from_secs(6)));
        }
    });
    // The rest of the policy applies: two attempts each, run to their end.
    assert_eq!(seen, [(2, false); 4]);
    let warnings: Vec<_> = events
        .iter()
        .filter(|e| e["fields"]["message"] == "dynamic attempt_timeout left out")
        .collect();
    assert_eq!(warnings.len(), 2, "once per function: {warnings:?}");
    for (warning, function) in warnings.iter().zip([
        "operations::sync_with_a_configured_timeout",
        "operations::opaque_with_a_configured_timeout",
    ]) {
        assert_eq!(warning["fields"]["function"], function);
        assert!(
            warning["fields"]["reason"]
                .as_str()
                .unwrap()
                .contains("From<AttemptTimeout>"),
            "{warning}"
        );
    }
}

// ---- nested retries ----

static INNERMOST: AtomicU32 = AtomicU32::new(0);

#[retry(max = 4, backoff = none, sleep = no_wait)]
fn innermost() -> io::Result<()> {
    INNERMOST.fetch_add(1, Ordering::SeqCst);
    Err(ErrorKind::TimedOut.into())
}

#[retry(max = 4, backoff = none, sleep = no_wait)]
fn middle() -> io::Result<()> {
    innermost()
}

#[retry(max = 4, backoff = none, sleep = no_wait)]
fn outer() -> io::Result<()> {
    middle()
}

static INNERMOST_SINGLE: AtomicU32 = AtomicU32::new(0);

#[retry(max = 4, backoff = none, sleep = no_wait, nested = single)]
fn innermost_single() -> io::Result<()> {
    INNERMOST_SINGLE.fetch_add(1, Ordering::SeqCst);
    Err(ErrorKind::TimedOut.into())
}

#[retry(max = 4, backoff = none, sleep = no_wait, nested = single)]
fn middle_single() -> io::Result<()> {
    innermost_single()
}

#[retry(max = 4, backoff = none, sleep = no_wait)]
fn outer_single() -> io::Result<()> {
    middle_single()
}

#[test]
fn nested_retries_multiply_unless_the_inner_ones_are_single() {
    let events = capture(|| {
        outer().unwrap_err();
    });
    assert_eq!(INNERMOST.load(Ordering::SeqCst), 64, "4 × 4 × 4");
    let warnings: Vec<_> = events
        .iter()
        .filter(|e| {
            e["fields"]["message"]
                .as_str()
                .unwrap_or("")
                .starts_with("a retried call runs inside")
        })
        .map(|e| {
            (
                e["fields"]["function"].as_str().unwrap(),
                e["fields"]["outer"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        warnings,
        [
            ("operations::innermost", "operations::middle"),
            ("operations::middle", "operations::outer")
        ],
        "one warning per call site, naming both"
    );
    outer_single().unwrap_err();
    assert_eq!(
        INNERMOST_SINGLE.load(Ordering::SeqCst),
        4,
        "only the outer call retries"
    );
    assert_eq!(
        reattempt::stats::get("operations::middle_single")
            .unwrap()
            .give_ups
            .nested,
        4
    );
}

#[retry(max = 3, backoff = none, sleep = no_wait)]
fn with_unknown_errors() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    Err("opaque".into())
}

#[test]
fn unknown_boxed_errors_are_permanent() {
    with_unknown_errors().unwrap_err();
    let stats = reattempt::stats::get("operations::with_unknown_errors").unwrap();
    assert_eq!((stats.attempts, stats.give_ups.permanent), (1, 1));
}

thread_local! {
    static FACTOR: Cell<f64> = const { Cell::new(0.5) };
}

#[retry(max = 2, backoff = none, sleep = no_wait, policy = DynamicPolicy::new().backoff(BackoffSpec::Exponential { base: Duration::from_millis(1), factor: FACTOR.get(), max: Duration::from_secs(1) }))]
fn configured_with_a_changing_bad_factor() -> io::Result<()> {
    Err(ErrorKind::TimedOut.into())
}

#[test]
fn distinct_invalid_policies_of_one_kind_warn_once_and_keep_nothing_per_value() {
    let events = capture(|| {
        for i in 0..2_000 {
            // Each call's factor is a new invalid value below 1.
            FACTOR.set(0.5 - f64::from(i) * 1e-6);
            configured_with_a_changing_bad_factor().unwrap_err();
        }
    });
    let warnings = events
        .iter()
        .filter(|e| e["fields"]["message"] == "invalid dynamic policy; using the static arguments")
        .count();
    assert_eq!(warnings, 1, "one WARN for the kind, not one per value");
}

// ---- operations that must not happen twice ----

static TRANSFERS: Memory = Memory::new();

#[retry(max = 5, backoff = none, sleep = no_wait, idempotent = false, dead_letter = TRANSFERS, fields(amount))]
fn transfer(amount: u64, outcomes: &Mutex<Vec<ErrorKind>>) -> io::Result<u64> {
    match outcomes.lock().unwrap().pop() {
        Some(kind) => Err(kind.into()),
        None => Ok(amount),
    }
}

#[test]
fn must_not_run_twice_retries_a_refusal_and_stops_at_a_reset() {
    // Popped from the end: refused, refused, then reset.
    let outcomes = Mutex::new(vec![
        ErrorKind::ConnectionReset,
        ErrorKind::ConnectionRefused,
        ErrorKind::ConnectionRefused,
    ]);
    let error = transfer(10, &outcomes).unwrap_err();
    assert_eq!(
        error.kind(),
        ErrorKind::ConnectionReset,
        "the caller's own error"
    );
    let records = TRANSFERS.take();
    assert_eq!(records.len(), 1);
    assert_eq!(
        (records[0].reason, records[0].attempts),
        (GiveUp::MaybeApplied, 3)
    );
    let stats = reattempt::stats::get("operations::transfer").unwrap();
    assert_eq!(stats.give_ups.maybe_applied, 1);
}

static KEYED: Memory = Memory::new();

#[retry(max = 3, backoff = none, sleep = no_wait, idempotent = key, dead_letter = KEYED)]
fn keyed_transfer(sent: &Mutex<Vec<String>>) -> io::Result<u64> {
    let key = reattempt::attempt().unwrap().call_id().idempotency_key();
    sent.lock().unwrap().push(key);
    // Reset after the request was sent: it may have taken effect, which
    // the server's deduplication makes safe to repeat.
    Err(ErrorKind::ConnectionReset.into())
}

#[test]
fn a_call_with_an_idempotency_key_retries_what_may_have_taken_effect_and_records_its_key() {
    let sent = Mutex::new(Vec::new());
    keyed_transfer(&sent).unwrap_err();
    let sent = sent.into_inner().unwrap();
    assert_eq!(sent.len(), 3, "retried as an idempotent call");
    let records = KEYED.take();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].reason, GiveUp::Exhausted);
    assert_eq!(records[0].idempotency_key.as_ref(), Some(&sent[0]));
    let json = records[0].to_json();
    assert!(json.contains(r#""idempotency_key":"\""#), "{json}");
}

// A policy of literals without shared state is a `static` the core's
// first attempt takes: these two check that the options reach it.

#[retry(max = 5, backoff = none, sleep = no_wait, idempotent = false)]
fn transfer_alone(outcomes: &Mutex<Vec<ErrorKind>>) -> io::Result<u64> {
    match outcomes.lock().unwrap().pop() {
        Some(kind) => Err(kind.into()),
        None => Ok(1),
    }
}

#[test]
fn must_not_run_twice_holds_for_a_policy_of_literals_alone() {
    // Popped from the end: refused, refused, then reset.
    let outcomes = Mutex::new(vec![
        ErrorKind::ConnectionReset,
        ErrorKind::ConnectionRefused,
        ErrorKind::ConnectionRefused,
    ]);
    let error = transfer_alone(&outcomes).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::ConnectionReset);
    assert!(outcomes.lock().unwrap().is_empty(), "three attempts");
    let stats = reattempt::stats::get("operations::transfer_alone").unwrap();
    assert_eq!(stats.give_ups.maybe_applied, 1);
}

#[retry(max = 2, backoff = none, sleep = no_wait, alert_after = 3)]
fn watched_alone() -> io::Result<()> {
    Err(ErrorKind::ConnectionReset.into())
}

#[test]
fn alert_after_alone_alerts_at_the_third_failure_in_a_row() {
    let alerts = || reattempt::stats::get("operations::watched_alone").map_or(0, |s| s.alerts);
    watched_alone().unwrap_err(); // two failures
    assert_eq!(alerts(), 0);
    watched_alone().unwrap_err(); // the third: an alert
    assert_eq!(alerts(), 1);
}

// ---- budget costs per class ----

static COSTLY: RetryBudget =
    RetryBudget::new(1.0, 0, Duration::from_secs(600)).with_costs(2.0, 0.5);
static CHEAP: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600)).with_costs(2.0, 0.5);

#[retry(max = 2, backoff = none, sleep = no_wait, budget = COSTLY)]
fn breaks(attempts: &AtomicU32) -> io::Result<()> {
    attempts.fetch_add(1, Ordering::SeqCst);
    Err(ErrorKind::ConnectionReset.into())
}

#[retry(on = |_| Classification::rate_limited(), max = 2, backoff = none, sleep = no_wait, budget = CHEAP)]
fn throttled(attempts: &AtomicU32) -> io::Result<()> {
    attempts.fetch_add(1, Ordering::SeqCst);
    Err(ErrorKind::Other.into())
}

#[test]
fn a_retry_costs_what_its_class_costs() {
    // Each first attempt deposits one token. A retry after a reset costs
    // two: one call in two may retry. After a 429 it costs half a token:
    // every call may.
    let (reset, limited) = (AtomicU32::new(0), AtomicU32::new(0));
    for _ in 0..10 {
        breaks(&reset).unwrap_err();
        throttled(&limited).unwrap_err();
    }
    assert_eq!(reset.load(Ordering::SeqCst), 10 + 5);
    assert_eq!(limited.load(Ordering::SeqCst), 10 + 10);
}

static TWO_ATTEMPTS: DynamicPolicy = DynamicPolicy::new().max_attempts(2);
static SHARED_POLICY: LazyLock<Arc<DynamicPolicy>> =
    LazyLock::new(|| Arc::new(DynamicPolicy::new().max_attempts(2)));

#[retry(max = 5, backoff = none, policy = &TWO_ATTEMPTS)]
fn refused_under_a_borrowed_policy(calls: &Cell<u32>) -> io::Result<()> {
    calls.set(calls.get() + 1);
    Err(ErrorKind::ConnectionRefused.into())
}

#[retry(max = 5, backoff = none, policy = Arc::clone(&SHARED_POLICY))]
fn refused_under_a_shared_policy(calls: &Cell<u32>) -> io::Result<()> {
    calls.set(calls.get() + 1);
    Err(ErrorKind::ConnectionRefused.into())
}

#[test]
fn a_dynamic_policy_may_be_given_by_reference_or_in_an_arc() {
    let calls = Cell::new(0);
    refused_under_a_borrowed_policy(&calls).unwrap_err();
    assert_eq!(calls.get(), 2, "by reference");
    let calls = Cell::new(0);
    refused_under_a_shared_policy(&calls).unwrap_err();
    assert_eq!(calls.get(), 2, "in an Arc");
}
