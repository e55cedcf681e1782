//! `cargo run --example quickstart`
//!
//! Two retried functions against flaky local services, with the retry log
//! printed as JSON lines:
//!
//! - an async HTTP fetch from a server on 127.0.0.1 that answers 503 twice,
//!   then 200;
//! - a sync TCP connect to a port nobody listens on until a second later.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use retry::{Classification, Classified, retry};

/// What can go wrong fetching a page.
#[derive(Debug)]
enum FetchError {
    /// The server answered with an error status.
    Status(u16),
    /// The request never got an answer.
    Transport(reqwest::Error),
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::Status(code) => write!(f, "HTTP {code}"),
            FetchError::Transport(e) => write!(f, "transport: {e}"),
        }
    }
}

impl std::error::Error for FetchError {}

/// How `#[retry]` tells which fetch errors pass: statuses by the HTTP table
/// (503 is transient, 404 is not), transport errors are transient.
impl Classified for FetchError {
    fn classification(&self) -> Classification {
        match self {
            FetchError::Status(code) => retry::http::status(*code),
            FetchError::Transport(_) => Classification::transient(),
        }
    }
}

#[retry(max = 5, backoff = exp(base = 200ms, max = 2s), jitter)]
async fn fetch(client: &reqwest::Client, url: &str) -> Result<String, FetchError> {
    let response = client
        .get(url)
        .send()
        .await
        .map_err(FetchError::Transport)?;
    let status = response.status();
    if !status.is_success() {
        return Err(FetchError::Status(status.as_u16()));
    }
    response.text().await.map_err(FetchError::Transport)
}

#[retry(max = 10, backoff = fixed(300ms), deadline = 5s)]
fn connect(addr: SocketAddr) -> std::io::Result<TcpStream> {
    TcpStream::connect(addr)
}

/// A server that answers 503 to its first two requests, then 200.
async fn flaky_server() -> std::io::Result<SocketAddr> {
    let hits = Arc::new(AtomicU32::new(0));
    let app = Router::new().route(
        "/",
        get(move || {
            let hits = Arc::clone(&hits);
            async move {
                match hits.fetch_add(1, Ordering::SeqCst) {
                    0 | 1 => (StatusCode::SERVICE_UNAVAILABLE, "busy, come back later"),
                    _ => (StatusCode::OK, "hello from 127.0.0.1"),
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(addr)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().json().with_target(true).init();

    println!("# async: GET from a server that answers 503 twice");
    let addr = flaky_server().await?;
    let client = reqwest::Client::new();
    let body = fetch(&client, &format!("http://{addr}/")).await?;
    println!("# got: {body}\n");

    println!("# sync: connect to a port that opens after a second");
    // Reserve a free port, then release it until the listener comes up.
    let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let opener = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(1));
        let listener = TcpListener::bind(addr)?;
        listener.accept().map(drop)
    });
    let stream = tokio::task::spawn_blocking(move || connect(addr)).await??;
    println!("# connected to {}", stream.peer_addr()?);
    opener
        .join()
        .map_err(|_| "the listener thread panicked")??;
    Ok(())
}
