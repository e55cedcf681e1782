//! Alert streaks counted for the whole fleet through Redis: four processes
//! failing against one backend raise one alert between them, not four, and
//! a success ends the fleet's streak.
//!
//! Runs this same binary as child processes. Needs `RETRY_TEST_REDIS_URL`
//! (set by `.ci/run`).

mod common;

use std::io::{self, ErrorKind};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use reattempt::fleet::{FleetAlerts, share_alerts};
use reattempt::{Alert, retry};

const URL: &str = "RETRY_TEST_REDIS_URL";
const CHILD: &str = "REATTEMPT_ALERTS_CHILD";
const SCOPE: &str = "REATTEMPT_ALERTS_SCOPE";
const FLAPPING: &str = "REATTEMPT_ALERTS_FLAPPING";

fn no_wait(_: Duration) {}

static RAISED: AtomicU32 = AtomicU32::new(0);

fn page(_: &Alert) {
    RAISED.fetch_add(1, Ordering::SeqCst);
}

#[retry(max = 1, sleep = no_wait, alert_after = 5, on_alert = page)]
fn backend_down() -> io::Result<()> {
    Err(ErrorKind::ConnectionRefused.into())
}

/// What each child does: five failures in a row, then prints the alerts
/// it raised. A no-op as a plain test.
#[test]
fn child_fails_five_times() {
    let Some(mode) = std::env::var_os(CHILD) else {
        return;
    };
    if mode == "shared" {
        share_with_the_fleet();
    }
    for _ in 0..5 {
        backend_down().unwrap_err();
    }
    println!("alerts={}", RAISED.load(Ordering::SeqCst));
}

/// A child's streaks counted in the Redis and scope its parent gave it.
fn share_with_the_fleet() {
    let alerts = FleetAlerts::connect_with_timeout(
        &std::env::var(URL).unwrap(),
        &std::env::var(SCOPE).unwrap(),
        Duration::from_millis(200),
    )
    .unwrap();
    share_alerts(alerts).unwrap();
}

fn alerts_of_four_processes(url: &str, mode: &str) -> u32 {
    let scope = format!("test-{}", common::unique());
    let raised = spawn_four(url, mode, &scope);
    clear(url, &scope);
    raised
}

/// Deletes the streak's keys of `scope`, left to expire otherwise.
fn clear(url: &str, scope: &str) {
    let mut conn = redis::Client::open(url).unwrap().get_connection().unwrap();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("reattempt:alert:{scope}:*"))
        .query(&mut conn)
        .unwrap();
    if !keys.is_empty() {
        let () = redis::cmd("DEL").arg(keys).query(&mut conn).unwrap();
    }
}

fn spawn_four(url: &str, mode: &str, scope: &str) -> u32 {
    let children: Vec<_> = (0..4)
        .map(|_| {
            common::spawn_child(
                "child_fails_five_times",
                &[(CHILD, mode), (SCOPE, scope), (URL, url)],
            )
        })
        .collect();
    children
        .into_iter()
        .map(|child| common::child_count::<u32>(child, "alerts"))
        .sum()
}

#[test]
fn four_processes_failing_together_raise_one_alert() {
    let Some(url) = common::server_url(URL) else {
        return;
    };
    assert_eq!(
        alerts_of_four_processes(&url, "shared"),
        1,
        "one alert for the fleet"
    );
    assert_eq!(
        alerts_of_four_processes(&url, "local"),
        4,
        "one per instance, alone"
    );
}

/// Whether the backend of `backend_flaps` is down.
static DOWN: AtomicBool = AtomicBool::new(true);

#[retry(max = 1, sleep = no_wait, alert_after = 5, on_alert = page)]
fn backend_flaps() -> io::Result<()> {
    if DOWN.load(Ordering::SeqCst) {
        Err(ErrorKind::ConnectionRefused.into())
    } else {
        Ok(())
    }
}

/// What a flapping child does, sharing its streaks: four failures, a
/// success when its mode is `succeeds`, four more failures; then prints
/// the alerts it raised. A no-op as a plain test.
#[test]
fn child_flaps() {
    let Some(mode) = std::env::var_os(FLAPPING) else {
        return;
    };
    share_with_the_fleet();
    for _ in 0..4 {
        backend_flaps().unwrap_err();
    }
    if mode == "succeeds" {
        DOWN.store(false, Ordering::SeqCst);
        backend_flaps().unwrap();
        DOWN.store(true, Ordering::SeqCst);
    }
    for _ in 0..4 {
        backend_flaps().unwrap_err();
    }
    println!("alerts={}", RAISED.load(Ordering::SeqCst));
}

fn alerts_of_a_flapping_process(url: &str, mode: &str) -> u32 {
    let scope = format!("test-{}", common::unique());
    let child = common::spawn_child(
        "child_flaps",
        &[(FLAPPING, mode), (SCOPE, &scope), (URL, url)],
    );
    let raised = common::child_count::<u32>(child, "alerts");
    clear(url, &scope);
    raised
}

#[test]
fn a_success_ends_the_fleets_streak() {
    let Some(url) = common::server_url(URL) else {
        return;
    };
    assert_eq!(
        alerts_of_a_flapping_process(&url, "succeeds"),
        0,
        "four failures, a success, four failures: never five in a row"
    );
    assert_eq!(
        alerts_of_a_flapping_process(&url, "fails"),
        1,
        "eight failures in a row: one alert"
    );
}
