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
