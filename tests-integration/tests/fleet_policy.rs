//! A policy kept in Redis for the whole fleet: every instance's cell
//! follows one key, so that one `SET` changes them all; while Redis is
//! gone or the value is invalid, the last good policy stays and the
//! problem is logged once.
//!
//! Needs `RETRY_TEST_REDIS_URL` (set by `.ci/run`); the test that kills a
//! server starts its own `redis-server` on another port and ends it by its
//! pid. Every wait is bounded.

mod common;
#[path = "../../tests/common/mod.rs"]
mod logs;

use std::time::{Duration, Instant};

use common::own_redis::OwnRedis;
use reattempt::dynamic::{DynamicPolicy, PolicyCell};
use reattempt::fleet::FleetPolicy;
use reattempt::retry;

const URL: &str = "RETRY_TEST_REDIS_URL";
const EVERY: Duration = Duration::from_millis(20);

fn set(url: &str, key: &str, value: &str) {
    let mut conn = redis::Client::open(url).unwrap().get_connection().unwrap();
    let () = redis::cmd("SET")
        .arg(key)
        .arg(value)
        .query(&mut conn)
        .unwrap();
}

fn delete(url: &str, key: &str) {
    let mut conn = redis::Client::open(url).unwrap().get_connection().unwrap();
    let () = redis::cmd("DEL").arg(key).query(&mut conn).unwrap();
}

/// Waits, for ten seconds at most, until `cell` holds `max_attempts`.
fn until(cell: &PolicyCell, attempts: Option<u32>) -> Option<u32> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let seen = cell.get().max_attempts;
        if seen == attempts || Instant::now() > deadline {
            return seen;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

static FIRST: PolicyCell = PolicyCell::new(DynamicPolicy::new());
static SECOND: PolicyCell = PolicyCell::new(DynamicPolicy::new());

#[retry(max = 5, backoff = none, policy = FIRST)]
fn first_instance(calls: &mut u32) -> std::io::Result<()> {
    *calls += 1;
    Err(std::io::ErrorKind::TimedOut.into())
}

/// Two instances (two cells, each following the key on its own
/// connection): one `SET` changes both, an invalid value leaves both on
/// the last good policy and is logged once, a deleted key gives each its
/// own policy back.
#[test]
fn one_set_changes_every_instance_and_an_invalid_value_changes_none() {
    let Some(url) = common::server_url(URL) else {
        return;
    };
    let key = format!("reattempt:test:policy:{}", common::unique());
    set(&url, &key, "max = 3, backoff = none");
    let (events, _) = logs::capture_logs(|| {
        let first = FleetPolicy::follow_every(&FIRST, &url, &key, EVERY).unwrap();
        let second = FleetPolicy::follow_every(&SECOND, &url, &key, EVERY).unwrap();
        assert_eq!(first.key(), key);
        // Read before `follow` returns.
        assert_eq!(FIRST.get().max_attempts, Some(3));
        assert_eq!(SECOND.get().max_attempts, Some(3));
        let mut calls = 0;
        first_instance(&mut calls).unwrap_err();
        assert_eq!(calls, 3);

        set(&url, &key, "max = 2, backoff = none, deadline = 5s");
        assert_eq!(until(&FIRST, Some(2)), Some(2));
        assert_eq!(until(&SECOND, Some(2)), Some(2));
        let mut calls = 0;
        first_instance(&mut calls).unwrap_err();
        assert_eq!(calls, 2);

        // Invalid, and then not a policy at all: both keep the last good.
        set(&url, &key, "max = 0");
        std::thread::sleep(EVERY * 10);
        set(&url, &key, "max = lots");
        std::thread::sleep(EVERY * 10);
        assert_eq!(FIRST.get().max_attempts, Some(2));
        assert_eq!(SECOND.get().max_attempts, Some(2));

        delete(&url, &key);
        assert_eq!(until(&FIRST, None), None);
        assert_eq!(until(&SECOND, None), None);
        drop((first, second));
    });
    let invalid = events
        .iter()
        .filter(|e| {
            e["fields"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("invalid fleet policy"))
        })
        .count();
    // Each of two values, for each of two instances: once each, however
    // many times they were read.
    assert_eq!(invalid, 4, "{events:#?}");
}

static SURVIVING: PolicyCell = PolicyCell::new(DynamicPolicy::new());

/// A Redis of the test's own is killed: the cell keeps its policy, the
/// problem is logged once however many reads fail, and once a server is
/// back on that port the cell follows what it holds.
#[test]
fn with_redis_killed_the_last_good_policy_stays_until_it_is_back() {
    if common::server_url(URL).is_none() {
        return;
    }
    let port = common::closed_port();
    let redis = OwnRedis::start(port, None);
    set(&redis.url(), "policy", "max = 4");
    let (events, _) = logs::capture_logs(|| {
        let following =
            FleetPolicy::follow_every(&SURVIVING, &redis_url(port), "policy", EVERY).unwrap();
        assert_eq!(SURVIVING.get().max_attempts, Some(4));
        redis.stop();
        std::thread::sleep(EVERY * 20);
        assert_eq!(
            SURVIVING.get().max_attempts,
            Some(4),
            "the last good policy"
        );

        let redis = OwnRedis::start(port, None);
        set(&redis.url(), "policy", "max = 6");
        assert_eq!(until(&SURVIVING, Some(6)), Some(6));
        drop(following);
        redis.stop();
    });
    let count = |start: &str| {
        events
            .iter()
            .filter(|e| {
                e["fields"]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with(start))
            })
            .count()
    };
    assert_eq!(
        count("Redis did not answer for the fleet's policy"),
        1,
        "{events:#?}"
    );
    assert_eq!(count("Redis answers again"), 1, "{events:#?}");
}

fn redis_url(port: u16) -> String {
    format!("redis://127.0.0.1:{port}")
}

/// A wrong address, or a Redis that is not there, is an error at `follow`.
#[test]
fn a_redis_that_is_not_there_is_an_error_at_follow() {
    static UNUSED: PolicyCell = PolicyCell::new(DynamicPolicy::new());
    let url = redis_url(common::closed_port());
    assert!(FleetPolicy::follow(&UNUSED, &url, "policy").is_err());
    assert!(FleetPolicy::follow(&UNUSED, "not a url", "policy").is_err());
}
