//! A hedged reqwest call against a real HTTP server on 127.0.0.1 whose
//! first answer is slow: the call returns the hedge's fast answer, and the
//! server sees the slow request's connection closed, its handler dropped
//! before it answered.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::routing;
use reattempt::retry;

/// What the server saw.
#[derive(Default)]
struct Seen {
    requests: AtomicU32,
    /// The slow request's handler was dropped before it answered: its
    /// client closed the connection.
    slow_abandoned: AtomicBool,
}

/// Sets `slow_abandoned` when dropped before it is defused.
struct Abandoned(Arc<Seen>, bool);

impl Drop for Abandoned {
    fn drop(&mut self) {
        if !self.1 {
            self.0.slow_abandoned.store(true, Ordering::SeqCst);
        }
    }
}

/// The first request waits 30 s before it answers `slow`; every other
/// answers `fast n` at once.
async fn answer(State(seen): State<Arc<Seen>>) -> String {
    let n = seen.requests.fetch_add(1, Ordering::SeqCst) + 1;
    if n == 1 {
        let mut guard = Abandoned(seen.clone(), false);
        tokio::time::sleep(Duration::from_secs(30)).await;
        guard.1 = true;
        return "slow".to_owned();
    }
    format!("fast {n}")
}

async fn server() -> (std::net::SocketAddr, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let app = Router::new()
        .route("/", routing::get(answer))
        .with_state(seen.clone());
    let addr = common::serve(app).await;
    (addr, seen)
}

#[retry(max = 3, backoff = none, hedge = 50ms)]
async fn fetch(client: &reqwest::Client, url: &str) -> Result<String, reqwest::Error> {
    client
        .get(url)
        .send()
        .await?
        .error_for_status()?
        .text()
        .await
}

#[tokio::test]
async fn a_hedged_call_returns_the_fast_answer_and_closes_the_slow_request() {
    let (addr, seen) = server().await;
    let client = reqwest::Client::new();
    let url = format!("http://{addr}/");
    let call = fetch(&client, &url);
    // Bounded: the hedge answers at once, 50 ms after the first request.
    let body = tokio::time::timeout(Duration::from_secs(20), call)
        .await
        .expect("the hedge's answer, long before the slow one")
        .unwrap();
    assert_eq!(body, "fast 2");
    // The slow attempt was dropped before the call returned: its
    // connection is closed, and the server drops its handler.
    let closed = async {
        while !seen.slow_abandoned.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(20), closed)
        .await
        .expect("the server saw the slow request's connection closed");
    assert_eq!(seen.requests.load(Ordering::SeqCst), 2);
    let stats = reattempt::stats::get("http_hedging::fetch").unwrap();
    assert_eq!((stats.hedges, stats.hedges_won), (1, 1));
}
