//! A retry budget shared by several processes through Redis: the fleet's
//! retries stay under one budget, Redis going away or hanging leaves every
//! call on its local budget and none waits for it longer than the timeout,
//! and bad input is a clear error.
//!
//! The fleet test runs this same binary as child processes. Needs
//! `RETRY_TEST_REDIS_URL` (set by `.ci/run`); the tests that stop or hang a
//! server start their own `redis-server` on another port, hang it with
//! `SIGSTOP` and end it by its pid.

mod common;
#[path = "../../tests/common/mod.rs"]
mod logs;

use std::io::{self, ErrorKind};
use std::process::Child;
use std::sync::Barrier;
use std::time::{Duration, Instant, SystemTime};

use common::own_redis::OwnRedis;
use reattempt::fleet::FleetBudget;
use reattempt::{RetryBudget, retry};

const URL: &str = "RETRY_TEST_REDIS_URL";
const CHILD: &str = "REATTEMPT_FLEET_CHILD";
const SCOPE: &str = "REATTEMPT_FLEET_SCOPE";
const CALLS: u64 = 1_000;

fn no_wait(_: Duration) {}

/// 10% of first attempts, and a reserve of 1 a second over 10 s: 10.
static BUDGET: RetryBudget = RetryBudget::new(0.1, 1, Duration::from_secs(10));

#[retry(max = 5, backoff = none, sleep = no_wait, budget = BUDGET)]
fn always_failing() -> io::Result<()> {
    Err(ErrorKind::ConnectionReset.into())
}

/// What each child process does: `CALLS` failing calls on the budget,
/// shared or not, then prints its retries. A no-op as a plain test.
#[test]
fn child_calls_a_failing_backend() {
    let Some(mode) = std::env::var_os(CHILD) else {
        return;
    };
    if mode == "shared" {
        let fleet = FleetBudget::connect_with_timeout(
            &std::env::var(URL).unwrap(),
            &std::env::var(SCOPE).unwrap(),
            Duration::from_millis(200),
        )
        .unwrap();
        BUDGET.share(fleet).unwrap();
    }
    for _ in 0..CALLS {
        always_failing().unwrap_err();
    }
    let stats = reattempt::stats::get("fleet_budget::always_failing").unwrap();
    println!("retries={}", stats.attempts - stats.calls);
}

/// The retries of four processes, sharing the budget or not.
fn fleet_retries(url: &str, mode: &str) -> u64 {
    let scope = format!("test-{}", common::unique());
    let children: Vec<Child> = (0..4)
        .map(|_| {
            common::spawn_child(
                "child_calls_a_failing_backend",
                &[(CHILD, mode), (SCOPE, &scope), (URL, url)],
            )
        })
        .collect();
    children
        .into_iter()
        .map(|child| common::child_count::<u64>(child, "retries"))
        .sum()
}

#[test]
fn four_processes_sharing_a_budget_retry_at_most_its_ratio_plus_one_reserve() {
    let Some(url) = common::server_url(URL) else {
        return;
    };
    let started = Instant::now();
    let shared = fleet_retries(&url, "shared");
    let local = fleet_retries(&url, "local");
    eprintln!("fleet retries: shared {shared}, local {local}");
    assert!(
        started.elapsed() < Duration::from_secs(9),
        "both runs inside one window"
    );
    // 10% of 4,000 first attempts, plus one reserve of 10, within 5%.
    let allowed = 4_000 / 10 + 10;
    assert!(
        shared <= allowed * 105 / 100,
        "shared: {shared} retries, {allowed} allowed"
    );
    assert!(
        shared >= allowed * 90 / 100,
        "shared: {shared}: the budget was used"
    );
    // Four local budgets each have their own reserve.
    assert!(local > shared, "local {local} against shared {shared}");
    assert!(local <= 4 * (1_000 / 10 + 10) * 105 / 100, "local: {local}");
}

static SURVIVING: RetryBudget = RetryBudget::new(0.5, 10, Duration::from_secs(10));

#[retry(max = 4, backoff = none, sleep = no_wait, budget = SURVIVING)]
fn survives_redis() -> io::Result<()> {
    Err(ErrorKind::ConnectionReset.into())
}

fn keys(url: &str, prefix: &str) -> usize {
    let mut conn = redis::Client::open(url).unwrap().get_connection().unwrap();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}:*"))
        .query(&mut conn)
        .unwrap();
    keys.len()
}

#[test]
fn with_redis_gone_calls_go_on_locally_and_none_waits_then_rejoin() {
    if common::server_url(URL).is_none() {
        return;
    }
    let port = common::closed_port();
    let redis = OwnRedis::start(port, None);
    let fleet =
        FleetBudget::connect_with_timeout(&redis.url(), "survival", Duration::from_millis(20))
            .unwrap();
    let prefix = fleet.key_prefix();
    SURVIVING.share(fleet).unwrap();
    for _ in 0..20 {
        survives_redis().unwrap_err();
    }
    assert!(keys(&redis.url(), &prefix) > 0, "the budget is in Redis");

    redis.stop();
    let (events, _) = logs::capture_logs(|| {
        let mut slowest = Duration::ZERO;
        for _ in 0..50 {
            let started = Instant::now();
            survives_redis().unwrap_err();
            slowest = slowest.max(started.elapsed());
        }
        // Each call asks Redis at most once before deciding alone for a
        // second; the connection is refused at once, or times out at 20 ms.
        assert!(
            slowest < Duration::from_millis(500),
            "a call waited {slowest:?}"
        );
    });
    let warned = events
        .iter()
        .filter(|e| {
            e["fields"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("Redis did not answer"))
        })
        .count();
    assert_eq!(warned, 1, "the fallback is logged once");

    let redis = OwnRedis::start(port, None);
    std::thread::sleep(Duration::from_millis(1_100));
    for _ in 0..20 {
        survives_redis().unwrap_err();
    }
    assert!(
        keys(&redis.url(), &prefix) > 0,
        "shared again once Redis answers"
    );
    redis.stop();
}

/// 10% of first attempts over 1 s, and a reserve of 1 a second: 1.
static IDLE: RetryBudget = RetryBudget::new(0.1, 1, Duration::from_secs(1));

/// An instance whose calls all succeed for longer than the window: its
/// first attempts' deposits, which reach Redis with its next retry
/// decision, are as old as the local budget's, and expire with the window
/// as those do, instead of arriving all at once when the backend first
/// fails and letting the whole fleet retry freely for a window.
#[test]
fn deposits_older_than_the_window_do_not_reach_the_fleet() {
    let Some(url) = common::server_url(URL) else {
        return;
    };
    let fleet = FleetBudget::connect(&url, &format!("idle-{}", common::unique())).unwrap();
    IDLE.share(fleet).unwrap();
    // 1,000 tokens' worth of first attempts, then a quiet window.
    for _ in 0..10_000 {
        IDLE.deposit();
    }
    std::thread::sleep(Duration::from_millis(1_300));
    let allowed = (0..100).filter(|_| IDLE.try_withdraw()).count();
    // The reserve, and a token's rounding.
    assert!(allowed <= 2, "{allowed} retries allowed");
}

/// Each first attempt deposits a whole token, and there is no reserve.
static OUTAGE: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(10));

/// First attempts made while Redis is down still reach the fleet when it
/// is back within the window: a retry decision that could not deposit them
/// keeps them for the next one.
#[test]
fn deposits_made_while_redis_is_down_reach_it_once_it_is_back() {
    if common::server_url(URL).is_none() {
        return;
    }
    let port = common::closed_port();
    let redis = OwnRedis::start(port, None);
    let fleet = FleetBudget::connect(&redis.url(), "outage").unwrap();
    OUTAGE.share(fleet).unwrap();
    redis.stop();
    for _ in 0..10 {
        OUTAGE.deposit();
    }
    // Redis refuses: the local budget, which holds the 10 tokens, decides.
    assert!(OUTAGE.try_withdraw());
    let redis = OwnRedis::start(port, None);
    std::thread::sleep(Duration::from_millis(1_100));
    // The fleet's balance is the 10 deposits; the local withdrawal made
    // while Redis was away is not in it.
    let allowed = (0..20).filter(|_| OUTAGE.try_withdraw()).count();
    redis.stop();
    assert_eq!(allowed, 10);
}

/// The timeout of the tests of a Redis that hangs: long enough that a
/// call's own work, on a loaded machine, is small beside it.
const HANG_TIMEOUT: Duration = Duration::from_millis(300);

/// What a call of those tests may take: the timeout, and half as much again
/// for the call's own work. A call that waited out two timeouts fails it.
const HANG_BOUND: Duration = Duration::from_millis(450);

/// The slowest of the calls of `call` that `threads` threads make at once,
/// `calls` each.
fn slowest_call(threads: usize, calls: u32, call: fn() -> io::Result<()>) -> Duration {
    let start = Barrier::new(threads);
    std::thread::scope(|scope| {
        let each: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    start.wait();
                    let mut slowest = Duration::ZERO;
                    for _ in 0..calls {
                        let started = Instant::now();
                        call().unwrap_err();
                        slowest = slowest.max(started.elapsed());
                    }
                    slowest
                })
            })
            .collect();
        each.into_iter().map(|t| t.join().unwrap()).max().unwrap()
    })
}

/// Shares `budget` through a Redis of the test's own, hangs that Redis, and
/// checks that no call of `call` (by `threads` threads at once, `calls`
/// each) waits for it longer than about the timeout: first on the
/// connection the budget has, after which it decides alone for a second;
/// then on the new connection a call opens, which the stopped server's
/// kernel accepts, and whose set-up and question it never answers.
fn no_call_waits_out_a_hanging_redis(
    scope: &str,
    budget: &'static RetryBudget,
    call: fn() -> io::Result<()>,
    threads: usize,
    calls: u32,
) {
    let redis = OwnRedis::start(common::closed_port(), None);
    let fleet = FleetBudget::connect_with_timeout(&redis.url(), scope, HANG_TIMEOUT).unwrap();
    budget.share(fleet).unwrap();
    call().unwrap_err();

    let hanging = redis.hang();
    let first = slowest_call(threads, calls, call);
    std::thread::sleep(Duration::from_millis(1_100));
    let reconnecting = slowest_call(threads, calls, call);
    drop(hanging);
    redis.stop();
    assert!(first < HANG_BOUND, "a call waited {first:?}");
    assert!(
        reconnecting < HANG_BOUND,
        "a call waited {reconnecting:?} while reconnecting"
    );
}

static STALLED: RetryBudget = RetryBudget::new(0.5, 10, Duration::from_secs(10));

#[retry(max = 4, backoff = none, sleep = no_wait, budget = STALLED)]
fn survives_a_stalled_redis() -> io::Result<()> {
    Err(ErrorKind::ConnectionReset.into())
}

/// A Redis that hangs, where one that is gone refuses at once: a call waits
/// for it about the timeout at most, set-up included.
#[test]
fn with_redis_hanging_no_call_waits_longer_than_the_timeout() {
    if common::server_url(URL).is_none() {
        return;
    }
    no_call_waits_out_a_hanging_redis("stalled", &STALLED, survives_a_stalled_redis, 1, 20);
}

static CROWDED: RetryBudget = RetryBudget::new(0.5, 10, Duration::from_secs(10));

#[retry(max = 4, backoff = none, sleep = no_wait, budget = CROWDED)]
fn crowds_a_stalled_redis() -> io::Result<()> {
    Err(ErrorKind::ConnectionReset.into())
}

/// Many threads retrying at once as Redis hangs: the calls that queue
/// behind the one asking Redis go on alone once it has not answered,
/// instead of each waiting out a timeout of its own in turn (the last of
/// 32 would wait 32 timeouts).
#[test]
fn with_redis_hanging_calls_made_at_once_do_not_wait_in_turn() {
    if common::server_url(URL).is_none() {
        return;
    }
    no_call_waits_out_a_hanging_redis("crowded", &CROWDED, crowds_a_stalled_redis, 32, 3);
}

/// A Redis that hangs as an instance starts is an error at `connect`, in
/// a second, where waiting for it would hold the start-up forever.
#[test]
fn a_redis_that_hangs_at_set_up_is_an_error() {
    if common::server_url(URL).is_none() {
        return;
    }
    let redis = OwnRedis::start(common::closed_port(), None);
    let hanging = redis.hang();
    let started = Instant::now();
    let connected = FleetBudget::connect(&redis.url(), "hangs");
    let took = started.elapsed();
    drop(hanging);
    redis.stop();
    let error = connected.expect_err("an error, not a budget");
    // A second, and half as much again for the call's own work.
    assert!(
        took < Duration::from_millis(1_500),
        "took {took:?}: {error}"
    );
}

#[test]
fn a_bad_url_or_password_is_an_error_at_set_up() {
    if common::server_url(URL).is_none() {
        return;
    }
    assert!(FleetBudget::connect("not a url", "s").is_err());
    assert!(
        FleetBudget::connect(&format!("redis://127.0.0.1:{}", common::closed_port()), "s").is_err()
    );
    let port = common::closed_port();
    let redis = OwnRedis::start(port, Some("right"));
    let error = FleetBudget::connect(&format!("redis://:wrong@127.0.0.1:{port}"), "s").unwrap_err();
    assert!(
        error.to_string().to_lowercase().contains("pass") || error.code().is_some(),
        "{error}"
    );
    assert!(FleetBudget::connect(&format!("redis://:right@127.0.0.1:{port}"), "s").is_ok());
    redis.stop();
}

static CORRUPTED: RetryBudget = RetryBudget::new(0.5, 10, Duration::from_secs(10));

#[retry(max = 2, backoff = none, sleep = no_wait, budget = CORRUPTED)]
fn on_a_corrupt_budget() -> io::Result<()> {
    Err(ErrorKind::ConnectionReset.into())
}

#[test]
fn a_budget_value_that_is_not_a_number_is_logged_and_reset() {
    let Some(url) = common::server_url(URL) else {
        return;
    };
    let fleet = FleetBudget::connect(&url, &format!("corrupt-{}", common::unique())).unwrap();
    let prefix = fleet.key_prefix();
    CORRUPTED.share(fleet).unwrap();
    // Slots of one second (a 10 s window): corrupt this one and its
    // neighbours, so that a second boundary does not matter.
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut conn = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    for slot in now - 1..=now + 1 {
        let () = redis::cmd("SET")
            .arg(format!("{prefix}:{slot}"))
            .arg("garbage")
            .query(&mut conn)
            .unwrap();
    }
    let (events, _) = logs::capture_logs(|| {
        on_a_corrupt_budget().unwrap_err();
    });
    assert!(
        events.iter().any(|e| e["fields"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("not a number"))),
        "{events:?}"
    );
    let stats = reattempt::stats::get("fleet_budget::on_a_corrupt_budget").unwrap();
    assert_eq!(stats.attempts, 2, "the reset budget allowed the retry");
    let value: Option<String> = redis::cmd("GET")
        .arg(format!("{prefix}:{now}"))
        .query(&mut conn)
        .unwrap();
    assert!(value.is_none_or(|v| v.parse::<i64>().is_ok()), "reset");
    for slot in now - 1..=now + 1 {
        let () = redis::cmd("DEL")
            .arg(format!("{prefix}:{slot}"))
            .query(&mut conn)
            .unwrap();
    }
}
