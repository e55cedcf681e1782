//! `redis::RedisError` from a real connection, classified without `on`.
//!
//! The refused-connection test needs no server. The reply test needs
//! `RETRY_TEST_REDIS_URL` (set by `.ci/run`) and is skipped without it.

mod common;

use std::sync::atomic::{AtomicU32, Ordering};

use reattempt::retry;
use redis::AsyncCommands;

#[retry(max = 4, backoff = fixed(10ms))]
async fn connect(
    url: &str,
    attempts: &AtomicU32,
) -> redis::RedisResult<redis::aio::MultiplexedConnection> {
    attempts.fetch_add(1, Ordering::SeqCst);
    redis::Client::open(url)?
        .get_multiplexed_async_connection()
        .await
}

#[tokio::test]
async fn a_refused_connection_is_retried_max_times_then_returned() {
    let url = format!("redis://127.0.0.1:{}", common::closed_port());
    let attempts = AtomicU32::new(0);
    let error = connect(&url, &attempts).await.unwrap_err();
    assert_eq!(attempts.load(Ordering::SeqCst), 4);
    assert!(error.is_connection_refusal(), "{error:?}");
}

#[retry(max = 4, backoff = fixed(10ms))]
async fn push(
    conn: &mut redis::aio::MultiplexedConnection,
    key: &str,
    attempts: &AtomicU32,
) -> redis::RedisResult<i64> {
    attempts.fetch_add(1, Ordering::SeqCst);
    conn.lpush(key, 1).await
}

#[tokio::test]
async fn wrongtype_is_not_retried() {
    let Some(url) = common::server_url("RETRY_TEST_REDIS_URL") else {
        return;
    };
    let attempts = AtomicU32::new(0);
    let mut conn = connect(&url, &attempts).await.unwrap();
    let key = format!("retry:test:{}", common::unique());
    let () = conn.set(&key, "a string").await.unwrap();
    let attempts = AtomicU32::new(0);
    let error = push(&mut conn, &key, &attempts).await.unwrap_err();
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    assert_eq!(error.code(), Some("WRONGTYPE"));
    let () = conn.del(&key).await.unwrap();
}

/// Kills the connection whose `CLIENT ID` is `id`, from another one.
async fn kill(url: &str, id: i64) {
    let mut admin = redis::Client::open(url)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let () = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("ID")
        .arg(id)
        .query_async(&mut admin)
        .await
        .unwrap();
}

async fn client_id(conn: &mut redis::aio::MultiplexedConnection) -> i64 {
    redis::cmd("CLIENT")
        .arg("ID")
        .query_async(conn)
        .await
        .unwrap()
}

/// The mistake: one connection, opened outside the attempt, reused by every
/// attempt. Once the server drops it, every retry fails the same way.
#[retry(max = 4, backoff = fixed(10ms))]
async fn incr_on_a_reused_connection(
    conn: &mut redis::aio::MultiplexedConnection,
    url: &str,
    key: &str,
    attempts: &AtomicU32,
) -> redis::RedisResult<i64> {
    if attempts.fetch_add(1, Ordering::SeqCst) == 0 {
        let id = client_id(conn).await;
        kill(url, id).await;
    }
    conn.incr(key, 1).await
}

/// The pattern: each attempt opens its connection (or takes one from a
/// pool), so a retry runs on a fresh one.
#[retry(max = 4, backoff = fixed(10ms))]
async fn incr_on_a_connection_per_attempt(
    client: &redis::Client,
    url: &str,
    key: &str,
    attempts: &AtomicU32,
) -> redis::RedisResult<i64> {
    let mut conn = client.get_multiplexed_async_connection().await?;
    if attempts.fetch_add(1, Ordering::SeqCst) == 0 {
        let id = client_id(&mut conn).await;
        kill(url, id).await;
    }
    conn.incr(key, 1).await
}

#[tokio::test]
async fn after_client_kill_a_connection_per_attempt_recovers_and_a_reused_one_does_not() {
    let Some(url) = common::server_url("RETRY_TEST_REDIS_URL") else {
        return;
    };
    let client = redis::Client::open(url.as_str()).unwrap();
    let key = format!("retry:test:{}", common::unique());

    let attempts = AtomicU32::new(0);
    let mut reused = client.get_multiplexed_async_connection().await.unwrap();
    let error = incr_on_a_reused_connection(&mut reused, &url, &key, &attempts)
        .await
        .unwrap_err();
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        4,
        "every retry on the dead connection"
    );
    assert!(
        error.is_unrecoverable_error() || error.is_connection_dropped(),
        "{error:?}"
    );

    let attempts = AtomicU32::new(0);
    let value = incr_on_a_connection_per_attempt(&client, &url, &key, &attempts)
        .await
        .unwrap();
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        2,
        "one retry, on a new connection"
    );
    assert_eq!(value, 1, "the killed attempt did not increment");

    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let () = conn.del(&key).await.unwrap();
}
