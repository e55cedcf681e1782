//! An application's error enum, `#[derive(Classified)]`, wrapping the
//! errors of reqwest, sqlx, redis and anyhow: each wrapped error is classified
//! exactly as its own type classifies it, `Applied` included, and a
//! server's `Retry-After` is honoured, on errors from real servers (a local HTTP server, and the
//! PostgreSQL and Redis servers `.ci/run` starts; those two tests are
//! skipped without them, and fail under `CI`).

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use reattempt::reqwest::ErrorForStatus as _;
use reattempt::{Applied, Class, Classification, Classified};
use redis::AsyncCommands;

#[derive(Debug, Classified)]
enum AppError {
    Http(reqwest::Error),
    Db(sqlx::Error),
    Cache(redis::RedisError),
    Other(anyhow::Error),
    #[classify(validation, code = "parse")]
    Parse,
}

impl From<reqwest::Error> for AppError {
    fn from(error: reqwest::Error) -> AppError {
        AppError::Http(error)
    }
}

/// What a classification says, its server delay and `Applied` included.
fn parts(c: Classification) -> (Class, Option<String>, Option<Duration>, Applied) {
    (
        c.class(),
        c.code().map(str::to_owned),
        c.retry_after(),
        c.applied(),
    )
}

/// A server that answers 503 with `Retry-After: 1` to its first request
/// and 200 to the others, and counts them.
async fn busy_once() -> (std::net::SocketAddr, Arc<AtomicU32>) {
    let hits = Arc::new(AtomicU32::new(0));
    let counted = hits.clone();
    let app = axum::Router::new().route(
        "/",
        axum::routing::get(move || {
            let hits = counted.clone();
            async move {
                let mut headers = HeaderMap::new();
                if hits.fetch_add(1, Ordering::SeqCst) == 0 {
                    headers.insert(RETRY_AFTER, HeaderValue::from_static("1"));
                    (StatusCode::SERVICE_UNAVAILABLE, headers, "busy")
                } else {
                    (StatusCode::OK, headers, "ok")
                }
            }
        }),
    );
    let addr = common::serve(app).await;
    (addr, hits)
}

async fn get(client: &reqwest::Client, url: &str) -> Result<String, AppError> {
    Ok(client
        .get(url)
        .timeout(Duration::from_secs(10))
        .send()
        .await?
        .error_for_status_with_pushback()?
        .text()
        .await?)
}

#[reattempt::retry(max = 3, backoff = fixed(10ms))]
async fn fetch(client: &reqwest::Client, url: &str) -> Result<String, AppError> {
    get(client, url).await
}

#[tokio::test]
async fn a_wrapped_reqwest_error_keeps_its_class_and_the_servers_delay() {
    let (addr, hits) = busy_once().await;
    let client = reqwest::Client::new();
    let url = format!("http://{addr}/");

    let Err(AppError::Http(error)) = get(&client, &url).await else {
        panic!("the first answer is a 503");
    };
    let own = parts(error.classification());
    assert_eq!((own.0, own.1.as_deref()), (Class::Transient, Some("503")));
    assert_eq!(parts(AppError::Http(error).classification()), own);

    let refused = format!("http://127.0.0.1:{}/", common::closed_port());
    let Err(AppError::Http(error)) = get(&client, &refused).await else {
        panic!("nothing listens there");
    };
    let own = parts(error.classification());
    assert_eq!((own.0, own.3), (Class::Transient, Applied::No), "{own:?}");
    assert_eq!(parts(AppError::Http(error).classification()), own);

    // The error `error_for_status` builds carries no headers: the
    // `Retry-After` it dropped reaches the retry decision through the
    // attempt, for an enum wrapping the error as for the error itself.
    // Through `#[retry]`, with no `on`, the server's second wins over the
    // backoff's 10 ms.
    hits.store(0, Ordering::SeqCst);
    let started = Instant::now();
    assert_eq!(fetch(&client, &url).await.unwrap(), "ok");
    assert_eq!(hits.load(Ordering::SeqCst), 2);
    assert!(started.elapsed() >= Duration::from_secs(1));
}

#[tokio::test]
async fn a_wrapped_sqlx_error_keeps_its_sqlstate() {
    let Some(pool) = common::sqlx_pool::<sqlx::Postgres>("RETRY_TEST_POSTGRES_URL").await else {
        return;
    };
    let mut conn = pool.acquire().await.unwrap();
    sqlx::query("CREATE TEMP TABLE derived (id int PRIMARY KEY)")
        .execute(&mut *conn)
        .await
        .unwrap();
    let insert = "INSERT INTO derived (id) VALUES (1)";
    sqlx::query(insert).execute(&mut *conn).await.unwrap();
    let error = sqlx::query(insert).execute(&mut *conn).await.unwrap_err();
    let own = parts(error.classification());
    assert_eq!((own.0, own.1.as_deref()), (Class::Logical, Some("23505")));
    assert_eq!(parts(AppError::Db(error).classification()), own);

    // A serialization failure's transaction was rolled back: not applied.
    let error = sqlx::query("DO $$ BEGIN RAISE EXCEPTION USING ERRCODE = '40001'; END $$")
        .execute(&mut *conn)
        .await
        .unwrap_err();
    let own = parts(error.classification());
    assert_eq!((own.0, own.3), (Class::Transient, Applied::No), "{own:?}");
    assert_eq!(parts(AppError::Db(error).classification()), own);
}

#[tokio::test]
async fn a_wrapped_redis_error_keeps_its_reply() {
    let Some(url) = common::server_url("RETRY_TEST_REDIS_URL") else {
        return;
    };
    let mut conn = redis::Client::open(url)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let key = format!("retry:test:derived:{}", common::unique());
    let () = conn.set(&key, "a string").await.unwrap();
    let error = conn.lpush::<_, _, i64>(&key, 1).await.unwrap_err();
    let own = parts(error.classification());
    assert_eq!(
        (own.0, own.1.as_deref()),
        (Class::Logical, Some("WRONGTYPE"))
    );
    assert_eq!(parts(AppError::Cache(error).classification()), own);

    // An anyhow error is classified by the first error of a known type in
    // its chain, through the variant as without it.
    let error = conn.lpush::<_, _, i64>(&key, 1).await.unwrap_err();
    let wrapped = anyhow::Error::new(error).context("pushing the job");
    let own = parts(wrapped.classification());
    assert_eq!(own.1.as_deref(), Some("WRONGTYPE"));
    assert_eq!(parts(AppError::Other(wrapped).classification()), own);
    let () = conn.del(&key).await.unwrap();

    let parse = AppError::Parse.classification();
    assert_eq!(
        (parse.class(), parse.code()),
        (Class::Validation, Some("parse"))
    );
}
