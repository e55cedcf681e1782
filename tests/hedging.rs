//! Hedging on a paused clock: a slow attempt gets another beside it after
//! `after`, the first to succeed ends the call, every other attempt is
//! dropped (in its own frame) before the call returns, and every attempt
//! counts against `max`.

mod common;

use std::io::{self, ErrorKind};
use std::sync::Mutex;
use std::time::Duration;

use reattempt::retry;
use tokio::time::{Instant, sleep};

/// What each attempt saw: its number and its call's id, as it started and
/// as it was dropped.
#[derive(Default)]
struct Seen {
    started: Vec<(u32, u128)>,
    dropped: Vec<(u32, u128)>,
}

/// Records, as it drops, the attempt that `reattempt::attempt()` sees.
struct DropSeen<'a>(&'a Mutex<Seen>);

impl Drop for DropSeen<'_> {
    fn drop(&mut self) {
        let attempt = reattempt::attempt().expect("dropped in its own attempt's frame");
        self.0
            .lock()
            .unwrap()
            .dropped
            .push((attempt.number(), attempt.call_id().as_u128()));
    }
}

/// The numbers of the attempts that started, in order.
fn numbers(seen: Mutex<Seen>) -> Vec<u32> {
    seen.into_inner()
        .unwrap()
        .started
        .iter()
        .map(|s| s.0)
        .collect()
}

/// An attempt's body: the first takes `slow` ms, every other `fast`; each
/// answers its number.
async fn first_slow(seen: &Mutex<Seen>, slow: u64, fast: u64) -> io::Result<u32> {
    let number = started(seen);
    let took = if number == 1 { slow } else { fast };
    sleep(Duration::from_millis(took)).await;
    Ok(number)
}

fn started(seen: &Mutex<Seen>) -> u32 {
    let attempt = reattempt::attempt().expect("inside a retried call");
    seen.lock()
        .unwrap()
        .started
        .push((attempt.number(), attempt.call_id().as_u128()));
    attempt.number()
}

/// The first attempt takes 1 s; every later one 20 ms.
#[retry(max = 5, backoff = none, hedge = 50ms)]
async fn slow_first(seen: &Mutex<Seen>) -> io::Result<u32> {
    let number = started(seen);
    let _guard = DropSeen(seen);
    let took = if number == 1 { 1000 } else { 20 };
    sleep(Duration::from_millis(took)).await;
    Ok(number)
}

#[tokio::test(start_paused = true)]
async fn a_hedge_wins_over_a_slow_first_attempt_which_is_dropped_in_its_own_frame() {
    let seen = Mutex::new(Seen::default());
    let start = Instant::now();
    let won = slow_first(&seen).await.unwrap();
    assert_eq!(won, 2, "the hedge's outcome");
    assert_eq!(
        start.elapsed(),
        Duration::from_millis(70),
        "50 ms, then the hedge's 20"
    );
    let seen = seen.into_inner().unwrap();
    let id = seen.started[0].1;
    assert_eq!(
        seen.started,
        [(1, id), (2, id)],
        "one call id, numbers 1 and 2"
    );
    // The hedge's guard drops as it returns; the first attempt's as the
    // call drops it, before the call returns, in its own frame.
    assert_eq!(seen.dropped, [(2, id), (1, id)]);
    let stats = reattempt::stats::get("hedging::slow_first").unwrap();
    assert_eq!((stats.hedges, stats.hedges_won, stats.attempts), (1, 1, 2));
    assert_eq!(stats.first_try_successes, 1, "the call never retried");
}

#[retry(max = 5, backoff = none, hedge = 50ms)]
async fn fast(seen: &Mutex<Seen>) -> io::Result<u32> {
    let number = started(seen);
    sleep(Duration::from_millis(49)).await;
    Ok(number)
}

#[tokio::test(start_paused = true)]
async fn attempts_faster_than_after_start_no_hedge() {
    let seen = Mutex::new(Seen::default());
    for _ in 0..10 {
        assert_eq!(fast(&seen).await.unwrap(), 1);
    }
    assert_eq!(seen.into_inner().unwrap().started.len(), 10);
    let stats = reattempt::stats::get("hedging::fast").unwrap();
    assert_eq!(
        (stats.hedges, stats.attempts, stats.first_try_successes),
        (0, 10, 10)
    );
}

/// Never answers within the test's time.
#[retry(max = 3, backoff = none, hedge(after = 10ms, in_flight = 4))]
async fn hangs(seen: &Mutex<Seen>) -> io::Result<()> {
    started(seen);
    let _guard = DropSeen(seen);
    sleep(Duration::from_secs(3600)).await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn max_bounds_the_hedges_and_a_cancelled_call_drops_every_attempt() {
    let seen = Mutex::new(Seen::default());
    let cut = tokio::time::timeout(Duration::from_secs(60), hangs(&seen)).await;
    assert!(cut.is_err(), "no attempt ends");
    let seen = seen.into_inner().unwrap();
    let numbers: Vec<u32> = seen.started.iter().map(|s| s.0).collect();
    assert_eq!(
        numbers,
        [1, 2, 3],
        "`max = 3` allows two hedges, though 4 may be in flight"
    );
    let mut dropped: Vec<u32> = seen.dropped.iter().map(|s| s.0).collect();
    dropped.sort_unstable();
    assert_eq!(dropped, [1, 2, 3], "each dropped in its own frame");
    let stats = reattempt::stats::get("hedging::hangs").unwrap();
    assert_eq!((stats.hedges, stats.cancelled), (2, 1));
}

/// The first attempt is slow; a hedge fails for good at once.
#[retry(max = 5, backoff = none, hedge = 50ms)]
async fn hedge_not_found(seen: &Mutex<Seen>) -> io::Result<u32> {
    let number = started(seen);
    let _guard = DropSeen(seen);
    if number == 1 {
        sleep(Duration::from_secs(10)).await;
        return Ok(1);
    }
    Err(ErrorKind::NotFound.into())
}

#[tokio::test(start_paused = true)]
async fn a_logical_failure_of_any_attempt_ends_the_call_at_once() {
    let seen = Mutex::new(Seen::default());
    let start = Instant::now();
    let error = hedge_not_found(&seen).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound);
    assert_eq!(start.elapsed(), Duration::from_millis(50));
    let dropped: Vec<u32> = seen
        .into_inner()
        .unwrap()
        .dropped
        .iter()
        .map(|s| s.0)
        .collect();
    assert_eq!(
        dropped,
        [2, 1],
        "the slow first attempt dropped before the call returned"
    );
    let stats = reattempt::stats::get("hedging::hedge_not_found").unwrap();
    assert_eq!((stats.give_ups.permanent, stats.attempts), (1, 2));
}

/// The first attempt answers after 200 ms; every hedge fails at once with
/// a failure that may pass.
#[retry(max = 5, backoff = none, hedge = 50ms)]
async fn hedges_reset(seen: &Mutex<Seen>) -> io::Result<u32> {
    let number = started(seen);
    if number == 1 {
        sleep(Duration::from_millis(200)).await;
        return Ok(1);
    }
    Err(ErrorKind::ConnectionReset.into())
}

#[tokio::test(start_paused = true)]
async fn a_transient_failure_beside_an_attempt_in_flight_does_not_end_the_call() {
    let seen = Mutex::new(Seen::default());
    let start = Instant::now();
    assert_eq!(hedges_reset(&seen).await.unwrap(), 1);
    assert_eq!(start.elapsed(), Duration::from_millis(200));
    // A hedge at 50, 100 and 150 ms, each failing at once; the first
    // attempt, still in flight, succeeds at 200.
    let numbers = numbers(seen);
    assert_eq!(numbers, [1, 2, 3, 4]);
    let stats = reattempt::stats::get("hedging::hedges_reset").unwrap();
    assert_eq!(
        (stats.hedges, stats.hedges_won, stats.first_try_successes),
        (3, 0, 1)
    );
}

/// Every attempt is slow and fails; then the retry, after every attempt
/// of the first round, succeeds.
#[retry(max = 5, backoff = fixed(1s), hedge = 50ms)]
async fn round_fails(seen: &Mutex<Seen>) -> io::Result<u32> {
    let number = started(seen);
    if number <= 2 {
        let took = if number == 1 { 80 } else { 10 };
        sleep(Duration::from_millis(took)).await;
        return Err(ErrorKind::ConnectionReset.into());
    }
    Ok(number)
}

#[tokio::test(start_paused = true)]
async fn when_every_attempt_in_flight_failed_the_call_retries_after_them_all() {
    let seen = Mutex::new(Seen::default());
    let start = Instant::now();
    assert_eq!(
        round_fails(&seen).await.unwrap(),
        3,
        "the retry is attempt 3"
    );
    // The hedge, attempt 2, fails at 60 ms while 1 runs; 1 fails at 80,
    // before another hedge is due, and the retry waits 1 s.
    assert_eq!(start.elapsed(), Duration::from_millis(1080));
    let numbers = numbers(seen);
    assert_eq!(numbers, [1, 2, 3]);
    let stats = reattempt::stats::get("hedging::round_fails").unwrap();
    assert_eq!(
        (stats.hedges, stats.attempts, stats.successes_after_retries),
        (1, 3, 1)
    );
}

/// Three attempts in flight: the third answers first.
#[retry(max = 5, backoff = none, hedge(after = 30ms, in_flight = 3))]
async fn third_wins(seen: &Mutex<Seen>) -> io::Result<u32> {
    let number = started(seen);
    let _guard = DropSeen(seen);
    let took = [0, 500, 500, 10][number as usize];
    sleep(Duration::from_millis(took)).await;
    Ok(number)
}

#[tokio::test(start_paused = true)]
async fn up_to_in_flight_attempts_run_at_once() {
    let seen = Mutex::new(Seen::default());
    let start = Instant::now();
    assert_eq!(third_wins(&seen).await.unwrap(), 3);
    assert_eq!(start.elapsed(), Duration::from_millis(70));
    let seen = seen.into_inner().unwrap();
    assert_eq!(
        seen.started.iter().map(|s| s.0).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    let mut dropped: Vec<u32> = seen.dropped.iter().map(|s| s.0).collect();
    dropped.sort_unstable();
    assert_eq!(dropped, [1, 2, 3]);
}

/// Each attempt sends the call's idempotency key.
#[retry(max = 5, backoff = none, hedge = 50ms, idempotent = key)]
async fn keyed(keys: &Mutex<Vec<String>>) -> io::Result<()> {
    let attempt = reattempt::attempt().unwrap();
    keys.lock()
        .unwrap()
        .push(attempt.call_id().idempotency_key());
    let took = if attempt.number() == 1 { 1000 } else { 10 };
    sleep(Duration::from_millis(took)).await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn every_attempt_of_a_keyed_call_sends_one_key() {
    let keys = Mutex::new(Vec::new());
    keyed(&keys).await.unwrap();
    let keys = keys.into_inner().unwrap();
    assert_eq!(keys.len(), 2);
    assert_eq!(keys[0], keys[1]);
}

#[test]
fn a_hedged_call_is_send_when_its_body_is() {
    fn send<T: Send>(_: &T) {}
    let seen = Mutex::new(Seen::default());
    let call = slow_first(&seen);
    send(&call);
}

/// On the function's own sleeper: hedges are timed by it.
#[retry(max = 5, backoff = none, hedge = 50ms, sleep = tokio::time::sleep)]
async fn on_its_sleeper(seen: &Mutex<Seen>) -> io::Result<u32> {
    first_slow(seen, 1000, 20).await
}

#[tokio::test(start_paused = true)]
async fn a_hedge_is_timed_by_the_functions_own_sleeper() {
    let seen = Mutex::new(Seen::default());
    let start = Instant::now();
    assert_eq!(on_its_sleeper(&seen).await.unwrap(), 2);
    assert_eq!(start.elapsed(), Duration::from_millis(70));
}

/// A function whose body is an `async move` block after some setup.
#[retry(max = 5, backoff = none, hedge = 50ms)]
fn in_a_block(seen: &Mutex<Seen>) -> impl std::future::Future<Output = io::Result<u32>> + '_ {
    async move { first_slow(seen, 1000, 20).await }
}

#[tokio::test(start_paused = true)]
async fn a_function_that_returns_an_async_block_hedges_too() {
    let seen = Mutex::new(Seen::default());
    assert_eq!(in_a_block(&seen).await.unwrap(), 2);
}

/// Attempt 1 answers late, 2 fails at once, 3 answers first.
#[retry(max = 5, backoff = none, hedge(after = 50ms, in_flight = 3))]
async fn logged() -> io::Result<u32> {
    let number = reattempt::attempt().unwrap().number();
    match number {
        1 => sleep(Duration::from_secs(1)).await,
        2 => return Err(io::Error::new(ErrorKind::ConnectionReset, "reset by peer")),
        _ => sleep(Duration::from_millis(10)).await,
    }
    Ok(number)
}

#[test]
fn the_logs_say_when_a_hedge_starts_fails_beside_another_and_wins() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let (events, text) = common::capture_logs(|| {
        assert_eq!(runtime.block_on(logged()).unwrap(), 3);
    });
    let seen: Vec<(&str, &str, u64)> = events
        .iter()
        .map(|e| {
            (
                e["level"].as_str().unwrap(),
                e["fields"]["message"].as_str().unwrap(),
                e["fields"]["attempt"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("DEBUG", "attempt still running; hedge started", 2),
            ("WARN", "attempt failed; another is in flight", 2),
            ("DEBUG", "attempt still running; hedge started", 3),
            ("DEBUG", "hedge won", 3),
        ],
        "{text}"
    );
    let failed = &events[1]["fields"];
    assert_eq!(
        (failed["class"].as_str(), failed["in_flight"].as_u64()),
        (Some("transient"), Some(1))
    );
    assert_eq!(failed["error"], "reset by peer");
    let id = &events[0]["fields"]["call_id"];
    assert!(
        events.iter().all(|e| &e["fields"]["call_id"] == id),
        "one call id"
    );
}

static GAVE_UP: reattempt::dead_letter::Memory = reattempt::dead_letter::Memory::new();

/// Attempt 1 fails after 100 ms; its hedge, attempt 2, at once.
#[retry(max = 2, backoff = none, hedge = 50ms, dead_letter = GAVE_UP)]
async fn both_fail() -> io::Result<()> {
    if reattempt::attempt().unwrap().number() == 1 {
        sleep(Duration::from_millis(100)).await;
    }
    Err(ErrorKind::ConnectionReset.into())
}

#[tokio::test(start_paused = true)]
async fn a_hedged_call_that_gives_up_records_every_attempt_under_its_own_number() {
    let error = both_fail().await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::ConnectionReset);
    let records = GAVE_UP.take();
    assert_eq!(records.len(), 1);
    let record = &records[0];
    assert_eq!(record.reason, reattempt::GiveUp::Exhausted);
    assert_eq!(record.attempts, 2, "both attempts count against `max`");
    let numbers: Vec<(u32, bool)> = record
        .history
        .iter()
        .map(|a| (a.attempt, a.hedge))
        .collect();
    assert_eq!(
        numbers,
        [(2, true), (1, false)],
        "in the order they failed, the hedge marked"
    );
    assert!(record.history_json().contains(r#""attempt":2,"class":"transient","code":"ConnectionReset","delay_ms":null,"delay_from":null,"hedge":true"#), "{}", record.history_json());
}

/// Every error is rate-limited; the first attempt answers after a second.
#[retry(max = 5, backoff = none, hedge = 50ms, on = |_: &io::Error| reattempt::Class::RateLimited)]
async fn pushed_back(seen: &Mutex<Seen>) -> io::Result<u32> {
    let number = started(seen);
    if number == 1 {
        sleep(Duration::from_secs(1)).await;
        return Ok(1);
    }
    Err(ErrorKind::Other.into())
}

#[tokio::test(start_paused = true)]
async fn a_rate_limited_failure_stops_the_hedges_of_its_call() {
    let seen = Mutex::new(Seen::default());
    assert_eq!(pushed_back(&seen).await.unwrap(), 1);
    let numbers = numbers(seen);
    assert_eq!(
        numbers,
        [1, 2],
        "no hedge after the server asked to slow down"
    );
}

/// Never answers; four may run at once.
#[retry(max = 9, backoff = none, hedge(after = 10ms, in_flight = 4))]
async fn four_at_once(running: &std::sync::atomic::AtomicU32) -> io::Result<()> {
    struct Running<'a>(&'a std::sync::atomic::AtomicU32);
    impl Drop for Running<'_> {
        fn drop(&mut self) {
            self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
    running.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let _running = Running(running);
    sleep(Duration::from_secs(3600)).await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn in_flight_4_the_most_the_attribute_allows_runs_four_attempts_at_once() {
    use std::sync::atomic::{AtomicU32, Ordering};
    let running = AtomicU32::new(0);
    let call = four_at_once(&running);
    let cut = tokio::time::timeout(Duration::from_secs(60), async {
        tokio::pin!(call);
        tokio::select! {
            _ = &mut call => unreachable!("no attempt ends"),
            () = sleep(Duration::from_secs(30)) => {
                assert_eq!(running.load(Ordering::SeqCst), 4, "four in flight, no more");
            }
        }
    })
    .await;
    assert!(cut.is_ok());
    assert_eq!(
        running.load(Ordering::SeqCst),
        0,
        "each dropped with the call"
    );
    let stats = reattempt::stats::get("hedging::four_at_once").unwrap();
    assert_eq!(stats.hedges, 3);
}

/// 10 ms an attempt, or `slow_ms` for the first attempt of a slow call;
/// the attempt's number.
async fn ten_ms_or_slow_first(slow: bool, slow_ms: u64) -> io::Result<u32> {
    let number = reattempt::attempt().unwrap().number();
    let took = if slow && number == 1 { slow_ms } else { 10 };
    sleep(Duration::from_millis(took)).await;
    Ok(number)
}

/// 10 ms an attempt, or a second for a slow call's first.
#[retry(max = 5, backoff = none, hedge(after = p90))]
async fn after_p90(slow: bool) -> io::Result<u32> {
    ten_ms_or_slow_first(slow, 1000).await
}

#[cfg_attr(
    miri,
    ignore = "the latency sketch keeps only its last windows of the wall clock, which Miri runs past"
)]
#[tokio::test(start_paused = true)]
async fn a_percentile_hedges_once_it_has_its_samples() {
    for _ in 0..99 {
        assert_eq!(after_p90(false).await.unwrap(), 1);
    }
    // 99 samples: too few to read a percentile from, so no hedge starts.
    let start = Instant::now();
    assert_eq!(after_p90(true).await.unwrap(), 1);
    assert_eq!(start.elapsed(), Duration::from_secs(1));
    let stats = reattempt::stats::get("hedging::after_p90").unwrap();
    assert_eq!(stats.hedges, 0);
    // 100: the p90 is about 10 ms (the top of its bucket, within 12.5 %).
    let start = Instant::now();
    assert_eq!(after_p90(true).await.unwrap(), 2, "the hedge wins");
    let took = start.elapsed();
    assert!(
        Duration::from_millis(20) <= took && took <= Duration::from_millis(22),
        "{took:?}"
    );
    let stats = reattempt::stats::get("hedging::after_p90").unwrap();
    assert_eq!((stats.hedges, stats.hedges_won), (1, 1));
}

#[retry(max = 5, backoff = none, hedge(after = p95, min = 50ms))]
async fn after_p95_or_min(seen: &Mutex<Seen>) -> io::Result<u32> {
    first_slow(seen, 1000, 10).await
}

#[tokio::test(start_paused = true)]
async fn until_a_percentile_has_its_samples_min_is_the_delay() {
    let seen = Mutex::new(Seen::default());
    let start = Instant::now();
    assert_eq!(after_p95_or_min(&seen).await.unwrap(), 2);
    assert_eq!(start.elapsed(), Duration::from_millis(60));
}

/// What the hooks saw: (hook, attempt, is_hedge, class code).
type HookSeen = Mutex<Vec<(&'static str, u32, bool, Option<String>)>>;

static HOOKS: HookSeen = Mutex::new(Vec::new());

fn note(hook: &'static str, context: &reattempt::hooks::Context<'_, io::Result<u32>>) {
    let code = context.class().and_then(|c| c.code().map(str::to_owned));
    HOOKS
        .lock()
        .unwrap()
        .push((hook, context.attempt(), context.is_hedge(), code));
}

/// Round 1: attempt 1 fails after 100 ms, its hedge 2 at 60 ms; round 2:
/// attempt 3 is slow, and its hedge 4 wins.
#[retry(
    max = 5,
    backoff = fixed(1s),
    hedge = 50ms,
    before = |c| note("before", c),
    after = |c| note("after", c),
    on_retry = |c| note("on_retry", c),
    on_give_up = |c| note("on_give_up", c)
)]
async fn hooked() -> io::Result<u32> {
    let number = reattempt::attempt().unwrap().number();
    match number {
        1 => {
            sleep(Duration::from_millis(100)).await;
            Err(ErrorKind::ConnectionReset.into())
        }
        2 => {
            sleep(Duration::from_millis(10)).await;
            Err(ErrorKind::ConnectionReset.into())
        }
        3 => {
            sleep(Duration::from_secs(10)).await;
            Ok(3)
        }
        n => Ok(n),
    }
}

#[tokio::test(start_paused = true)]
async fn hooks_see_each_attempt_and_whether_it_is_a_hedge() {
    assert_eq!(hooked().await.unwrap(), 4);
    let seen = HOOKS.lock().unwrap().clone();
    let reset = Some("ConnectionReset".to_owned());
    assert_eq!(
        seen,
        [
            // Round 1: attempt 1, its hedge 2 (failing beside it), then 1
            // fails too and the call retries.
            ("before", 1, false, None),
            ("before", 2, true, None),
            ("after", 2, true, reset.clone()),
            ("after", 1, false, reset.clone()),
            ("on_retry", 1, false, reset),
            // Round 2: attempt 3, and its hedge 4, which wins.
            ("before", 3, false, None),
            ("before", 4, true, None),
            ("after", 4, true, None),
        ]
    );
}

static HEDGING: reattempt::dynamic::PolicyCell =
    reattempt::dynamic::PolicyCell::new(reattempt::dynamic::DynamicPolicy::new());

/// The first attempt answers after a second; every other at once.
#[retry(max = 5, backoff = none, hedge = 50ms, policy = &HEDGING)]
async fn configured(seen: &Mutex<Seen>) -> io::Result<u32> {
    first_slow(seen, 1000, 10).await
}

#[tokio::test(start_paused = true)]
async fn a_dynamic_policy_turns_hedging_off_or_changes_its_delay() {
    use reattempt::dynamic::{DynamicPolicy, HedgeSpec};
    let timed = |seen: Mutex<Seen>| async move {
        let start = Instant::now();
        let won = configured(&seen).await.unwrap();
        (won, start.elapsed())
    };
    // The attribute's delay.
    assert_eq!(
        timed(Mutex::default()).await,
        (2, Duration::from_millis(60))
    );
    HEDGING.set(DynamicPolicy::new().hedge(HedgeSpec::After(Duration::from_millis(5))));
    assert_eq!(
        timed(Mutex::default()).await,
        (2, Duration::from_millis(15))
    );
    HEDGING.set("hedge = off".parse().unwrap());
    assert_eq!(timed(Mutex::default()).await, (1, Duration::from_secs(1)));
}

static BY_PERCENTILE: reattempt::dynamic::PolicyCell =
    reattempt::dynamic::PolicyCell::new(reattempt::dynamic::DynamicPolicy::new());

/// 10 ms an attempt, or 1.5 s for a slow call's first; the attribute
/// hedges after a fixed second.
#[retry(max = 5, backoff = none, hedge = 1s, policy = &BY_PERCENTILE)]
async fn fixed_made_p90(slow: bool) -> io::Result<u32> {
    ten_ms_or_slow_first(slow, 1500).await
}

#[cfg_attr(
    miri,
    ignore = "the latency sketch keeps only its last windows of the wall clock, which Miri runs past"
)]
#[tokio::test(start_paused = true)]
async fn a_dynamic_policy_hedges_a_fixed_delay_function_at_a_percentile() {
    BY_PERCENTILE.set("hedge = p90".parse().unwrap());
    for _ in 0..99 {
        assert_eq!(fixed_made_p90(false).await.unwrap(), 1);
    }
    // 99 samples and no `min`: no hedge starts, not even at the
    // attribute's second.
    let start = Instant::now();
    assert_eq!(fixed_made_p90(true).await.unwrap(), 1);
    assert_eq!(start.elapsed(), Duration::from_millis(1500));
    // 100: the p90 is about 10 ms, and the hedge wins.
    let start = Instant::now();
    assert_eq!(fixed_made_p90(true).await.unwrap(), 2);
    let took = start.elapsed();
    assert!(
        Duration::from_millis(20) <= took && took <= Duration::from_millis(22),
        "{took:?}"
    );
    // Back to the attribute's fixed second.
    BY_PERCENTILE.set(reattempt::dynamic::DynamicPolicy::new());
    let start = Instant::now();
    assert_eq!(fixed_made_p90(true).await.unwrap(), 2);
    assert_eq!(start.elapsed(), Duration::from_millis(1010));
}

static TURN_ON: reattempt::dynamic::PolicyCell =
    reattempt::dynamic::PolicyCell::new(reattempt::dynamic::DynamicPolicy::new().hedge(
        reattempt::dynamic::HedgeSpec::After(Duration::from_millis(5)),
    ));

/// Must not run twice, so no `hedge`; its dynamic policy asks for one.
#[retry(max = 5, backoff = none, idempotent = false, policy = &TURN_ON)]
async fn must_not_run_twice(seen: &Mutex<Seen>) -> io::Result<u32> {
    let number = started(seen);
    sleep(Duration::from_millis(100)).await;
    Ok(number)
}

#[test]
fn a_dynamic_policy_never_turns_hedging_on_and_says_so_once() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let seen = Mutex::new(Seen::default());
    let (events, text) = common::capture_logs(|| {
        for _ in 0..3 {
            assert_eq!(runtime.block_on(must_not_run_twice(&seen)).unwrap(), 1);
        }
    });
    assert_eq!(
        seen.into_inner().unwrap().started.len(),
        3,
        "one attempt a call"
    );
    let left_out: Vec<_> = events
        .iter()
        .filter(|e| e["fields"]["message"] == "dynamic hedge left out")
        .collect();
    assert_eq!(left_out.len(), 1, "{text}");
    assert_eq!(left_out[0]["level"], "WARN");
}

/// Consumes its argument: each attempt, hedges included, gets a clone.
#[retry(max = 3, backoff = none, hedge = 50ms, clone(name))]
async fn consumes(name: String, seen: &Mutex<Seen>) -> io::Result<String> {
    let number = started(seen);
    let took = if number == 1 { 1000 } else { 10 };
    sleep(Duration::from_millis(took)).await;
    let owned: String = name;
    Ok(format!("{owned} {number}"))
}

#[tokio::test(start_paused = true)]
async fn an_argument_the_body_consumes_is_cloned_for_each_attempt_hedges_included() {
    let seen = Mutex::new(Seen::default());
    assert_eq!(
        consumes("order".to_owned(), &seen).await.unwrap(),
        "order 2"
    );
}

/// Judged by `if_result`: a value of 0 is a failure that may pass.
#[retry(max = 5, backoff = none, hedge = 50ms, if_result = |v: &u32| *v == 0)]
async fn zero_is_not_ready(seen: &Mutex<Seen>) -> io::Result<u32> {
    let number = started(seen);
    if number == 1 {
        sleep(Duration::from_millis(200)).await;
        return Ok(7);
    }
    Ok(0)
}

#[tokio::test(start_paused = true)]
async fn a_value_if_result_rejects_fails_beside_the_others() {
    let seen = Mutex::new(Seen::default());
    assert_eq!(zero_is_not_ready(&seen).await.unwrap(), 7);
    let numbers = numbers(seen);
    assert_eq!(
        numbers,
        [1, 2, 3, 4],
        "hedges at 50, 100 and 150 ms, each rejected"
    );
}
