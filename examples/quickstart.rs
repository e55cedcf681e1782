//! `cargo run --example quickstart`
//!
//! Two retried functions against flaky local services, with the retry log
//! printed as JSON lines:
//!
//! - an async HTTP GET from a server on 127.0.0.1 that answers 503 twice,
//!   then 200;
//! - a sync TCP connect to a port nobody listens on until a second later.
//!
//! The HTTP client and server are a few lines on tokio's TCP types, so that
//! this example builds in seconds; `cargo run -p tests-integration --example
//! http` does the same with reqwest.

use std::io::{self, ErrorKind};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use reattempt::{Classification, Classified, retry};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What can go wrong fetching a page.
#[derive(Debug)]
enum FetchError {
    /// The server answered with an error status.
    Status(u16),
    /// The request never got a whole answer.
    Io(io::Error),
}

impl From<io::Error> for FetchError {
    fn from(error: io::Error) -> Self {
        FetchError::Io(error)
    }
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::Status(code) => write!(f, "HTTP {code}"),
            FetchError::Io(e) => write!(f, "transport: {e}"),
        }
    }
}

impl std::error::Error for FetchError {}

/// How `#[retry]` tells which fetch errors pass: statuses by the HTTP table
/// (503 is transient, 404 is not), transport errors by the io table (a
/// refused or reset connection is transient).
impl Classified for FetchError {
    fn classification(&self) -> Classification {
        match self {
            FetchError::Status(code) => reattempt::http::status(*code),
            FetchError::Io(e) => e.classification(),
        }
    }
}

#[retry(max = 5, backoff = exp(base = 200ms, max = 2s), jitter)]
async fn fetch(addr: SocketAddr) -> Result<String, FetchError> {
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    stream
        .write_all(b"GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .await?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await?;
    let (head, body) = response
        .split_once("\r\n\r\n")
        .ok_or(io::Error::from(ErrorKind::UnexpectedEof))?;
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or(io::Error::new(ErrorKind::InvalidData, "no status line"))?;
    if status != 200 {
        return Err(FetchError::Status(status));
    }
    Ok(body.to_owned())
}

#[retry(max = 10, backoff = fixed(300ms), deadline = 5s)]
fn connect(addr: SocketAddr) -> io::Result<TcpStream> {
    TcpStream::connect(addr)
}

/// A server that answers 503 to its first two requests, then 200.
async fn flaky_server() -> io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        for hit in 0u32.. {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            // Read the whole request head: closing a socket with unread
            // bytes resets the connection, and the client would see that
            // instead of the answer.
            let mut request = Vec::new();
            let mut chunk = [0; 512];
            while !request.ends_with(b"\r\n\r\n") && request.len() < 8192 {
                match stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&chunk[..n]),
                }
            }
            let response = match hit {
                0 | 1 => "HTTP/1.0 503 Service Unavailable\r\n\r\nbusy, come back later",
                _ => "HTTP/1.0 200 OK\r\n\r\nhello from 127.0.0.1",
            };
            let _ = stream.write_all(response.as_bytes()).await;
        }
    });
    Ok(addr)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().json().with_target(true).init();

    println!("# async: GET from a server that answers 503 twice");
    let addr = flaky_server().await?;
    let body = fetch(addr).await?;
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
