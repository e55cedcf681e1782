//! `cargo run --example redis --features redis`
//!
//! A cache read that connects to Redis: a refused connection is retried
//! with backoff, then the read goes through once the server is there.
//!
//! Uses `RETRY_TEST_REDIS_URL`, or `redis://127.0.0.1:6379`.

use reattempt::retry;
use redis::AsyncCommands;

#[retry(max = 5, backoff = exp(base = 100ms), jitter, fields(key))]
async fn cached(url: &str, key: &str) -> redis::RedisResult<Option<String>> {
    let mut conn = redis::Client::open(url)?
        .get_multiplexed_async_connection()
        .await?;
    conn.get(key).await
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().json().init();
    let url = std::env::var("RETRY_TEST_REDIS_URL")
        .unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned());

    println!("# a port nobody listens on: four retries, then the error");
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let error = cached(&format!("redis://127.0.0.1:{port}"), "greeting")
        .await
        .unwrap_err();
    println!("# gave up: {error}");

    println!("# the real server");
    let mut conn = redis::Client::open(url.as_str())?
        .get_multiplexed_async_connection()
        .await?;
    let () = conn.set("retry:example:greeting", "hello").await?;
    println!("# got {:?}", cached(&url, "retry:example:greeting").await?);
    let () = conn.del("retry:example:greeting").await?;
    Ok(())
}
