//! The adaptive throttle end to end: reqwest against a real HTTP server on
//! 127.0.0.1 that answers 503 while it is over capacity. The server then
//! receives a fraction of the calls, the others are rejected locally with
//! the application's own error, and once capacity returns every call goes
//! through again.

mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use axum::http::StatusCode;
use reattempt::reqwest::ErrorForStatus as _;
use reattempt::{AdaptiveThrottle, Classified, Throttled};

#[derive(Debug, Classified)]
enum AppError {
    Http(reqwest::Error),
    #[classify(logical, code = "throttled")]
    Throttled,
}

impl From<reqwest::Error> for AppError {
    fn from(error: reqwest::Error) -> AppError {
        AppError::Http(error)
    }
}

impl From<Throttled> for AppError {
    fn from(_: Throttled) -> AppError {
        AppError::Throttled
    }
}

/// The server's state: whether it is over capacity, and the requests it
/// received.
#[derive(Default)]
struct Backend {
    over_capacity: AtomicBool,
    received: AtomicU32,
}

async fn server() -> (SocketAddr, Arc<Backend>) {
    let backend = Arc::new(Backend::default());
    let state = backend.clone();
    let app = axum::Router::new().route(
        "/",
        axum::routing::get(move || {
            let backend = state.clone();
            async move {
                backend.received.fetch_add(1, Ordering::SeqCst);
                if backend.over_capacity.load(Ordering::SeqCst) {
                    (StatusCode::SERVICE_UNAVAILABLE, "over capacity")
                } else {
                    (StatusCode::OK, "ok")
                }
            }
        }),
    );
    let addr = common::serve(app).await;
    (addr, backend)
}

static PRICES: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(1));

#[reattempt::retry(max = 1, throttle = PRICES)]
async fn price(client: &reqwest::Client, url: &str) -> Result<String, AppError> {
    Ok(client
        .get(url)
        .timeout(Duration::from_secs(10))
        .send()
        .await?
        .error_for_status_with_pushback()?
        .text()
        .await?)
}

#[tokio::test]
async fn an_overloaded_server_receives_a_fraction_of_the_calls_until_it_recovers() {
    let test = async {
        let (addr, backend) = server().await;
        let client = reqwest::Client::new();
        let url = format!("http://{addr}/");
        backend.over_capacity.store(true, Ordering::SeqCst);
        let mut throttled = 0;
        for _ in 0..400 {
            match price(&client, &url).await {
                Err(AppError::Throttled) => throttled += 1,
                Err(AppError::Http(error)) => {
                    assert_eq!(
                        error.status(),
                        Some(reqwest::StatusCode::SERVICE_UNAVAILABLE)
                    );
                }
                Ok(answer) => panic!("{answer}"),
            }
        }
        let received = backend.received.load(Ordering::SeqCst);
        assert_eq!(received + throttled, 400, "a rejected call sends nothing");
        // With nothing accepted, all but the first ten are rejected at the
        // maximum ratio, 0.9.
        assert!(received <= 100, "the server received {received} of 400");
        let stats = reattempt::stats::get("http_throttle::price").unwrap();
        assert_eq!(stats.give_ups.throttled, u64::from(throttled));

        backend.over_capacity.store(false, Ordering::SeqCst);
        let mut in_a_row = 0;
        while in_a_row < 100 {
            match price(&client, &url).await {
                Ok(_) => in_a_row += 1,
                Err(AppError::Throttled) => {
                    in_a_row = 0;
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                Err(AppError::Http(error)) => panic!("{error}"),
            }
        }
        assert_eq!(PRICES.rejection_ratio(), 0.0);
    };
    tokio::time::timeout(Duration::from_secs(60), test)
        .await
        .expect("bounded: the server recovers within a minute");
}
