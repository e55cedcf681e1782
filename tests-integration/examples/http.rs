//! `cargo run --example http --features reqwest`
//!
//! `#[retry]` on a function returning `reqwest::Result<Response>`, with no
//! `on`: a 503 with `Retry-After: 1` is retried after exactly one second, a
//! 404 is returned at once.

use axum::Router;
use axum::http::{StatusCode, header::RETRY_AFTER};
use axum::routing::get;
use reattempt::retry;
use reqwest::Response;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

#[retry(max = 4, backoff = exp(base = 200ms))]
async fn fetch(client: &reqwest::Client, url: &str) -> reqwest::Result<Response> {
    client.get(url).send().await
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().json().init();
    let hits = Arc::new(AtomicU32::new(0));
    let app = Router::new()
        .route(
            "/report",
            get(move || {
                let hits = Arc::clone(&hits);
                async move {
                    if hits.fetch_add(1, Ordering::SeqCst) == 0 {
                        (
                            StatusCode::SERVICE_UNAVAILABLE,
                            [(RETRY_AFTER, "1")],
                            "warming up",
                        )
                    } else {
                        (StatusCode::OK, [(RETRY_AFTER, "0")], "the report")
                    }
                }
            }),
        )
        .route("/missing", get(|| async { StatusCode::NOT_FOUND }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });

    let client = reqwest::Client::new();
    let report = fetch(&client, &format!("http://{addr}/report")).await?;
    println!("# {}: {}", report.status(), report.text().await?);
    let missing = fetch(&client, &format!("http://{addr}/missing")).await?;
    println!("# {} after one attempt", missing.status());
    Ok(())
}
