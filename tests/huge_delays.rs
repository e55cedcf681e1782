//! Delays as long as `Duration::MAX`, from any source, never panic: an
//! async call waits for ever (bounded here by the test's own timeout), or
//! gives up at once when the wait would end past its deadline.

use std::io::{self, ErrorKind};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use reattempt::dynamic::{BackoffSpec, DynamicPolicy};
use reattempt::{Classification, GiveUp, retry};

fn reset() -> io::Error {
    ErrorKind::ConnectionReset.into()
}

#[retry(max = 3, backoff = fixed((Duration::MAX)))]
async fn fixed_max() -> io::Result<()> {
    Err(reset())
}

#[retry(max = 3, backoff = |_| Duration::MAX)]
async fn custom_max() -> io::Result<()> {
    Err(reset())
}

#[retry(
    on = |_| Classification::rate_limited().with_retry_after(Duration::MAX),
    max = 3,
    max_retry_after = (Duration::MAX)
)]
async fn server_asks_for_ever() -> io::Result<()> {
    Err(reset())
}

#[retry(max = 3, backoff = none, policy = DynamicPolicy::new().backoff(BackoffSpec::Fixed(Duration::MAX)))]
async fn dynamic_max() -> io::Result<()> {
    Err(reset())
}

/// Runs `call` for an hour of the paused clock: it must still be waiting,
/// without having panicked.
async fn still_waiting_after_an_hour(call: impl Future<Output = io::Result<()>>) {
    let outcome = tokio::time::timeout(Duration::from_secs(3600), call).await;
    assert!(outcome.is_err(), "the call waits for ever: {outcome:?}");
}

#[tokio::test(start_paused = true)]
async fn a_fixed_backoff_of_duration_max_waits_for_ever() {
    still_waiting_after_an_hour(fixed_max()).await;
}

#[tokio::test(start_paused = true)]
async fn a_custom_backoff_returning_duration_max_waits_for_ever() {
    still_waiting_after_an_hour(custom_max()).await;
}

#[tokio::test(start_paused = true)]
async fn a_server_delay_of_duration_max_waits_for_ever_when_allowed() {
    still_waiting_after_an_hour(server_asks_for_ever()).await;
}

#[tokio::test(start_paused = true)]
async fn a_dynamic_fixed_backoff_of_duration_max_waits_for_ever() {
    still_waiting_after_an_hour(dynamic_max()).await;
}

#[retry(max = 3, backoff = fixed((Duration::MAX)), deadline = 10s, on_give_up = |ctx| assert_eq!(ctx.gave_up(), Some(GiveUp::Deadline)))]
async fn fixed_max_with_deadline() -> io::Result<()> {
    Err(reset())
}

#[tokio::test(start_paused = true)]
async fn with_a_deadline_a_duration_max_wait_gives_up_at_once() {
    let started = tokio::time::Instant::now();
    fixed_max_with_deadline().await.unwrap_err();
    assert_eq!(started.elapsed(), Duration::ZERO);
    let stats = reattempt::stats::get("huge_delays::fixed_max_with_deadline").unwrap();
    assert_eq!(stats.give_ups.deadline, 1);
}

static ENDLESS: DynamicPolicy = DynamicPolicy::new()
    .max_attempts(u32::MAX)
    .backoff(BackoffSpec::None);

#[retry(max = 3, backoff = none, policy = &ENDLESS)]
fn configured_endless(calls: &AtomicU32) -> io::Result<()> {
    calls.fetch_add(1, Ordering::Relaxed);
    Err(reset())
}

static BOUNDED: DynamicPolicy = DynamicPolicy::new()
    .max_attempts(u32::MAX)
    .backoff(BackoffSpec::None)
    .deadline(Duration::from_millis(50));

#[retry(max = 3, backoff = none, policy = &BOUNDED)]
fn configured_bounded(calls: &AtomicU32) -> io::Result<()> {
    calls.fetch_add(1, Ordering::Relaxed);
    Err(reset())
}

#[test]
fn a_dynamic_policy_of_u32_max_attempts_without_backoff_or_deadline_is_refused() {
    // On a thread of its own, so that a policy wrongly applied fails the
    // test by its timeout instead of running for hours.
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // Refused: the call keeps to the static arguments' three attempts.
        let endless = AtomicU32::new(0);
        configured_endless(&endless).unwrap_err();
        // With a deadline it applies: attempts go on past three until it.
        let bounded = AtomicU32::new(0);
        configured_bounded(&bounded).unwrap_err();
        done.send((endless.into_inner(), bounded.into_inner()))
            .unwrap();
    });
    let (endless, bounded) = finished
        .recv_timeout(Duration::from_secs(60))
        .expect("the endless policy was applied");
    assert_eq!(endless, 3);
    assert!(bounded > 3, "{bounded} attempts");
}

// A literal past what `u64` nanoseconds hold (about 584 years): the policy
// is then built as a `static` instead of named as a constant by its
// values, and keeps it exactly. 18,446,744,074 s is 2^64 ns and 0.29 s: cut
// to fit, it would be a wait of 0.29 s, and the call would end within the
// hour.
#[retry(max = 3, backoff = fixed(18446744074s), deadline = 7000000h)]
async fn literal_past_u64_nanos() -> io::Result<()> {
    Err(reset())
}

#[tokio::test(start_paused = true)]
async fn a_literal_delay_past_u64_nanoseconds_is_kept_exactly() {
    still_waiting_after_an_hour(literal_past_u64_nanos()).await;
}
