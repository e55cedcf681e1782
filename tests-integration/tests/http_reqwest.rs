//! reqwest against a real HTTP server on 127.0.0.1, classified without
//! `on`: error statuses of an `Ok(Response)` are judged by the HTTP table,
//! `Retry-After` is honoured in both its forms, and a refused connection is
//! retried. Waits run on tokio's paused clock.

mod common;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header::RETRY_AFTER};
use axum::routing;
use reattempt::retry;
use reqwest::Response;
use tokio::time::Instant;

/// How many times each path was requested.
type Hits = Arc<Mutex<HashMap<String, u32>>>;

/// When the server received each request for `zero`, on the test's clock.
static ZERO_AT: Mutex<Vec<Instant>> = Mutex::new(Vec::new());

/// Likewise for `one-second`.
static ONE_SECOND_AT: Mutex<Vec<Instant>> = Mutex::new(Vec::new());

/// Answers by path: `busy` is 503 with `Retry-After: 2` once, then 200;
/// `zero` is 503 with `Retry-After: 0` three times, then 200; `an-hour` is
/// always 503 with `Retry-After: 3600`; `one-second` is 503 with
/// `Retry-After: 1` twice, then 200;
/// `reset-delta` and `reset-epoch` are 429 once, with `RateLimit-Reset: 2`
/// and an `X-RateLimit-Reset` timestamp three seconds ahead; `told-not-to`
/// is always 503 with `x-should-retry: false`; `told-to` is 409 with
/// `x-should-retry: true` twice, then 200;
/// `limited` is 429 with an HTTP-date three seconds ahead once, then 200;
/// `status/N` is always N.
async fn serve(
    Path(path): Path<String>,
    State(hits): State<Hits>,
) -> (StatusCode, HeaderMap, String) {
    let n = {
        let mut hits = hits.lock().unwrap();
        let n = hits.entry(path.clone()).or_default();
        *n += 1;
        *n
    };
    let mut headers = HeaderMap::new();
    let status = match (path.as_str(), n) {
        ("busy", 1) => {
            headers.insert(RETRY_AFTER, HeaderValue::from_static("2"));
            StatusCode::SERVICE_UNAVAILABLE
        }
        ("zero", 1..=3) => {
            ZERO_AT.lock().unwrap().push(Instant::now());
            headers.insert(RETRY_AFTER, HeaderValue::from_static("0"));
            StatusCode::SERVICE_UNAVAILABLE
        }
        ("zero", _) => {
            ZERO_AT.lock().unwrap().push(Instant::now());
            StatusCode::OK
        }
        ("an-hour", _) => {
            headers.insert(RETRY_AFTER, HeaderValue::from_static("3600"));
            StatusCode::SERVICE_UNAVAILABLE
        }
        ("one-second", n) => {
            ONE_SECOND_AT.lock().unwrap().push(Instant::now());
            if n <= 2 {
                headers.insert(RETRY_AFTER, HeaderValue::from_static("1"));
                StatusCode::SERVICE_UNAVAILABLE
            } else {
                StatusCode::OK
            }
        }
        ("reset-delta", 1) => {
            headers.insert("ratelimit-reset", HeaderValue::from_static("2"));
            StatusCode::TOO_MANY_REQUESTS
        }
        ("reset-epoch", 1) => {
            let at = SystemTime::now() + Duration::from_secs(3);
            let secs = at.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs();
            headers.insert("x-ratelimit-reset", HeaderValue::from(secs));
            StatusCode::TOO_MANY_REQUESTS
        }
        ("told-not-to", _) => {
            headers.insert("x-should-retry", HeaderValue::from_static("false"));
            StatusCode::SERVICE_UNAVAILABLE
        }
        ("told-to", 1 | 2) => {
            headers.insert("x-should-retry", HeaderValue::from_static("true"));
            StatusCode::CONFLICT
        }
        ("limited", 1) => {
            let at = SystemTime::now() + Duration::from_secs(3);
            headers.insert(RETRY_AFTER, HeaderValue::from_str(&http_date(at)).unwrap());
            StatusCode::TOO_MANY_REQUESTS
        }
        (path, _) => match path.strip_prefix("status/") {
            Some(code) => StatusCode::from_u16(code.parse().unwrap()).unwrap(),
            None => StatusCode::OK,
        },
    };
    (status, headers, format!("{path} #{n}"))
}

/// An IMF-fixdate, as servers write `Retry-After` dates.
fn http_date(at: SystemTime) -> String {
    let secs = at.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's civil_from_days.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][(days % 7) as usize];
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{weekday}, {day:02} {} {year} {:02}:{:02}:{:02} GMT",
        months[(month - 1) as usize],
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60
    )
}

async fn server() -> (SocketAddr, Hits) {
    let hits = Hits::default();
    let app = Router::new()
        .route("/{*path}", routing::get(serve))
        .with_state(Arc::clone(&hits));
    let addr = common::serve(app).await;
    (addr, hits)
}

#[retry(max = 3, backoff = fixed(100ms))]
async fn get(client: &reqwest::Client, url: &str) -> reqwest::Result<Response> {
    client.get(url).send().await
}

fn hits(hits: &Hits, path: &str) -> u32 {
    hits.lock().unwrap().get(path).copied().unwrap_or(0)
}

#[tokio::test(start_paused = true)]
async fn a_503_with_retry_after_waits_as_asked_then_succeeds() {
    let (addr, counts) = server().await;
    let started = Instant::now();
    let response = get(&reqwest::Client::new(), &format!("http://{addr}/busy"))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "busy #2");
    assert_eq!(hits(&counts, "busy"), 2);
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(
        started.elapsed() < Duration::from_millis(2100),
        "{:?}",
        started.elapsed()
    );
}

#[retry(max = 5, backoff = exp(base = 100ms))]
async fn get_with_backoff(client: &reqwest::Client, url: &str) -> reqwest::Result<Response> {
    client.get(url).send().await
}

#[tokio::test(start_paused = true)]
async fn retry_after_zero_from_an_overloaded_server_waits_the_backoff() {
    let (addr, counts) = server().await;
    let response = get_with_backoff(&reqwest::Client::new(), &format!("http://{addr}/zero"))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(hits(&counts, "zero"), 4);
    // Server-side gaps: 100 ms, 200 ms, 400 ms, whatever the server said.
    let at = ZERO_AT.lock().unwrap().clone();
    let gaps: Vec<Duration> = at.windows(2).map(|w| w[1] - w[0]).collect();
    for (gap, backoff) in gaps.iter().zip([100, 200, 400]) {
        assert!(*gap >= Duration::from_millis(backoff), "{gaps:?}");
    }
}

/// GETs `path`, which answers 429 once and then 200: the time waited.
async fn waited_out_a_429(path: &str) -> Duration {
    let (addr, counts) = server().await;
    let started = Instant::now();
    let response = get(&reqwest::Client::new(), &format!("http://{addr}/{path}"))
        .await
        .unwrap();
    assert_eq!((response.status().as_u16(), hits(&counts, path)), (200, 2));
    started.elapsed()
}

#[tokio::test(start_paused = true)]
async fn a_429_with_ratelimit_reset_in_delta_seconds_waits_as_asked() {
    let waited = waited_out_a_429("reset-delta").await;
    assert!(
        Duration::from_secs(2) <= waited && waited < Duration::from_millis(2100),
        "{waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_429_with_an_x_ratelimit_reset_timestamp_waits_until_then() {
    // The timestamp has whole seconds: between two and three seconds ahead.
    let waited = waited_out_a_429("reset-epoch").await;
    assert!(
        Duration::from_secs(2) <= waited && waited <= Duration::from_millis(3100),
        "{waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn x_should_retry_false_on_a_503_makes_one_attempt() {
    let (addr, counts) = server().await;
    let response = get(
        &reqwest::Client::new(),
        &format!("http://{addr}/told-not-to"),
    )
    .await
    .unwrap();
    assert_eq!(response.status(), 503, "the response comes back as it was");
    assert_eq!(hits(&counts, "told-not-to"), 1);
}

#[tokio::test(start_paused = true)]
async fn x_should_retry_true_on_a_409_is_retried() {
    let (addr, counts) = server().await;
    let response = get(&reqwest::Client::new(), &format!("http://{addr}/told-to"))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(hits(&counts, "told-to"), 3);
}

/// The common style: `?` on `error_for_status`, with the helper that keeps
/// the server's word.
#[retry(max = 4, backoff = exp(base = 100ms))]
async fn text(client: &reqwest::Client, url: &str) -> reqwest::Result<String> {
    text_once(client, url).await
}

/// One attempt of [`text`].
async fn text_once(client: &reqwest::Client, url: &str) -> reqwest::Result<String> {
    use reattempt::reqwest::ErrorForStatus as _;
    client
        .get(url)
        .send()
        .await?
        .error_for_status_with_pushback()?
        .text()
        .await
}

#[tokio::test(start_paused = true)]
async fn error_for_status_style_gives_up_at_once_when_asked_to_wait_an_hour() {
    let (addr, counts) = server().await;
    let error = text(&reqwest::Client::new(), &format!("http://{addr}/an-hour"))
        .await
        .unwrap_err();
    assert_eq!(
        error.status().map(|s| s.as_u16()),
        Some(503),
        "the caller's own error"
    );
    assert_eq!(
        hits(&counts, "an-hour"),
        1,
        "over max_retry_after: no retry"
    );
}

#[tokio::test(start_paused = true)]
async fn error_for_status_style_waits_the_retry_after_between_requests() {
    let (addr, counts) = server().await;
    let body = text(
        &reqwest::Client::new(),
        &format!("http://{addr}/one-second"),
    )
    .await
    .unwrap();
    assert_eq!(body, "one-second #3");
    assert_eq!(hits(&counts, "one-second"), 3);
    let at = ONE_SECOND_AT.lock().unwrap().clone();
    for gap in at.windows(2).map(|w| w[1] - w[0]) {
        assert!(gap >= Duration::from_secs(1), "server-side gap {gap:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_429_with_an_http_date_waits_until_that_date() {
    // The date has whole seconds: between two and three seconds ahead.
    let waited = waited_out_a_429("limited").await;
    assert!(
        Duration::from_secs(2) <= waited && waited <= Duration::from_millis(3100),
        "{waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn client_errors_are_returned_after_one_attempt() {
    let (addr, counts) = server().await;
    let client = reqwest::Client::new();
    for status in [404, 400, 403, 422] {
        let path = format!("status/{status}");
        let response = get(&client, &format!("http://{addr}/{path}"))
            .await
            .unwrap();
        assert_eq!(response.status(), status);
        assert_eq!(hits(&counts, &path), 1, "{status}");
    }
    let response = get(&client, &format!("http://{addr}/status/502"))
        .await
        .unwrap();
    assert_eq!(
        response.status(),
        502,
        "the last response comes back as it was"
    );
    assert_eq!(hits(&counts, "status/502"), 3);
}

#[retry(max = 3, backoff = fixed(100ms))]
async fn get_checked(client: &reqwest::Client, url: &str) -> reqwest::Result<String> {
    client
        .get(url)
        .send()
        .await?
        .error_for_status()?
        .text()
        .await
}

#[tokio::test(start_paused = true)]
async fn error_for_status_errors_are_classified_by_status() {
    let (addr, counts) = server().await;
    let client = reqwest::Client::new();
    let error = get_checked(&client, &format!("http://{addr}/status/503"))
        .await
        .unwrap_err();
    assert_eq!(
        error.status(),
        Some(reqwest::StatusCode::SERVICE_UNAVAILABLE)
    );
    assert_eq!(hits(&counts, "status/503"), 3);
    get_checked(&client, &format!("http://{addr}/status/410"))
        .await
        .unwrap_err();
    assert_eq!(hits(&counts, "status/410"), 1);
}

#[retry(max = 4, backoff = fixed(10ms))]
async fn get_counted(
    client: &reqwest::Client,
    url: &str,
    attempts: &AtomicU32,
) -> reqwest::Result<Response> {
    attempts.fetch_add(1, Ordering::SeqCst);
    client.get(url).send().await
}

#[tokio::test]
async fn a_refused_connection_is_retried() {
    let url = format!("http://127.0.0.1:{}/", common::closed_port());
    let attempts = AtomicU32::new(0);
    let error = get_counted(&reqwest::Client::new(), &url, &attempts)
        .await
        .unwrap_err();
    assert!(error.is_connect(), "{error:?}");
    assert_eq!(attempts.load(Ordering::SeqCst), 4);
}

#[test]
fn http_date_writes_imf_fixdate() {
    let at = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777);
    assert_eq!(http_date(at), "Sun, 06 Nov 1994 08:49:37 GMT");
}

/// A server on a raw socket that promises 100 bytes and sends 10, then
/// closes, `cut` times, and answers whole after that. It counts requests.
/// Reads a request up to the end of its head (or of the connection).
async fn read_head(stream: &mut tokio::net::TcpStream) -> Vec<u8> {
    use tokio::io::AsyncReadExt;

    let mut head = Vec::new();
    let mut chunk = [0; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&chunk[..n]),
        }
    }
    head
}

async fn cutting_server(cut: u32) -> (SocketAddr, Arc<AtomicU32>) {
    use tokio::io::AsyncWriteExt;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let served = Arc::new(AtomicU32::new(0));
    let count = Arc::clone(&served);
    tokio::spawn(async move {
        // Bounded: the test makes at most a handful of requests.
        for _ in 0..10 {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            read_head(&mut stream).await;
            let n = count.fetch_add(1, Ordering::SeqCst) + 1;
            let body = "0123456789".repeat(10);
            let answer = if n <= cut {
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{}",
                    &body[..10]
                )
            } else {
                format!("HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{body}")
            };
            let _ = stream.write_all(answer.as_bytes()).await;
            let _ = stream.shutdown().await;
        }
    });
    (addr, served)
}

#[tokio::test(start_paused = true)]
async fn a_body_cut_short_is_retried_to_success() {
    let (addr, served) = cutting_server(2).await;
    // Three attempts, as `get_checked` allows: two cut short, then whole.
    let body = get_checked(&reqwest::Client::new(), &format!("http://{addr}/"))
        .await
        .unwrap();
    assert_eq!(body.len(), 100);
    assert_eq!(served.load(Ordering::SeqCst), 3);
}

/// What the POST server did: requests seen, and side effects performed.
#[derive(Default)]
struct Ledger {
    requests: u32,
    effects: u32,
    keys: std::collections::HashSet<String>,
}

/// A server on a raw socket that performs each POST, then drops the
/// connection before answering, as a server that crashes after its commit
/// would. A request whose `Idempotency-Key` it has seen is not performed
/// again, and is answered 200.
async fn forgetful_server() -> (SocketAddr, Arc<Mutex<Ledger>>) {
    use tokio::io::AsyncWriteExt;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let book = Arc::clone(&ledger);
    tokio::spawn(async move {
        // Bounded: the tests make at most a handful of requests.
        for _ in 0..10 {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let request = read_head(&mut stream).await;
            let head = String::from_utf8_lossy(&request).to_ascii_lowercase();
            let key = head
                .lines()
                .find_map(|line| line.strip_prefix("idempotency-key:"))
                .map(|value| value.trim().to_owned());
            let repeat = {
                let mut ledger = book.lock().unwrap();
                ledger.requests += 1;
                match &key {
                    Some(key) if ledger.keys.contains(key) => true,
                    _ => {
                        ledger.effects += 1;
                        if let Some(key) = key {
                            ledger.keys.insert(key);
                        }
                        false
                    }
                }
            };
            if repeat {
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\ndone",
                    )
                    .await;
            }
            // Otherwise: performed, and the connection dropped unanswered.
            drop(stream);
        }
    });
    (addr, ledger)
}

#[retry(max = 4, backoff = fixed(10ms), idempotent = false)]
async fn charge(client: &reqwest::Client, url: &str) -> reqwest::Result<Response> {
    client.post(url).body("amount=10").send().await
}

#[retry(max = 4, backoff = fixed(10ms), idempotent = key)]
async fn charge_with_key(client: &reqwest::Client, url: &str) -> reqwest::Result<Response> {
    use reattempt::reqwest::IdempotencyKey as _;
    client
        .post(url)
        .idempotency_key()
        .body("amount=10")
        .send()
        .await
}

#[tokio::test]
async fn a_post_that_must_not_run_twice_is_not_resent_after_a_dropped_connection() {
    let (addr, ledger) = forgetful_server().await;
    let error = charge(&reqwest::Client::new(), &format!("http://{addr}/charge"))
        .await
        .unwrap_err();
    assert!(error.is_request(), "the caller's own error: {error:?}");
    let ledger = ledger.lock().unwrap();
    assert_eq!((ledger.requests, ledger.effects), (1, 1));
}

#[tokio::test]
async fn a_post_with_the_calls_idempotency_key_is_retried_and_applied_once() {
    let (addr, ledger) = forgetful_server().await;
    let response = charge_with_key(&reqwest::Client::new(), &format!("http://{addr}/charge"))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "done");
    let ledger = ledger.lock().unwrap();
    assert_eq!(
        (ledger.requests, ledger.effects),
        (2, 1),
        "the second attempt sent the same key"
    );
}

/// The helper in a sync function that drives its own runtime: the server's
/// word, kept during the first attempt, must still reach the decision after
/// that attempt's state moves into the call the retries need.
#[retry(max = 4, backoff = exp(base = 100ms))]
fn text_blocking(
    runtime: &tokio::runtime::Runtime,
    client: &reqwest::Client,
    url: &str,
) -> reqwest::Result<String> {
    runtime.block_on(text_once(client, url))
}

/// A runtime for the sync tests' bodies to drive their requests on.
fn blocking_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

/// Untraced first: the first attempt runs before any call state is built,
/// and its frame moves into the call the retries need. Then with a
/// subscriber, when the whole call is made in the core. One test, so that
/// no other sets a subscriber before the first half runs.
#[test]
fn a_sync_function_gives_up_at_once_when_asked_to_wait_an_hour() {
    let runtime = blocking_runtime();
    let (addr, counts) = runtime.block_on(server());
    let client = reqwest::Client::new();
    let url = format!("http://{addr}/an-hour");
    assert!(
        !tracing::dispatcher::has_been_set(),
        "no test of this file sets a subscriber before this one"
    );
    let error = text_blocking(&runtime, &client, &url).unwrap_err();
    assert_eq!(error.status().map(|s| s.as_u16()), Some(503));
    assert_eq!(
        hits(&counts, "an-hour"),
        1,
        "over max_retry_after, as the first attempt's response said: no retry"
    );
    let error = tracing::subscriber::with_default(tracing_subscriber::registry(), || {
        text_blocking(&runtime, &client, &url)
    })
    .unwrap_err();
    assert_eq!(error.status().map(|s| s.as_u16()), Some(503));
    assert_eq!(hits(&counts, "an-hour"), 2, "traced: no retry either");
}

/// A status, read by a body that keeps the server's word and then, when
/// `swallow` says so, takes an error status for an answer.
#[retry(max = 2, backoff = fixed(1ms))]
fn status_of(
    runtime: &tokio::runtime::Runtime,
    client: &reqwest::Client,
    url: &str,
    swallow: bool,
) -> reqwest::Result<u16> {
    use reattempt::reqwest::ErrorForStatus as _;
    runtime.block_on(async {
        let response = client.get(url).send().await?;
        let status = response.status().as_u16();
        if swallow {
            let _ = response.error_for_status_with_pushback();
            return Ok(status);
        }
        response.error_for_status().map(|r| r.status().as_u16())
    })
}

/// What one call kept of a response and never used is not another call's,
/// even for the same status of the same URL: the next call decides on its
/// own error alone.
#[test]
fn the_servers_word_kept_by_a_call_for_the_same_url_is_not_the_next_calls() {
    let runtime = blocking_runtime();
    let (addr, counts) = runtime.block_on(server());
    let client = reqwest::Client::new();
    let url = format!("http://{addr}/an-hour");
    for round in 1..=3 {
        let kept = status_of(&runtime, &client, &url, true);
        assert_eq!(kept.unwrap(), 503);
        let error = status_of(&runtime, &client, &url, false).unwrap_err();
        assert_eq!(error.status().map(|s| s.as_u16()), Some(503));
        assert_eq!(
            hits(&counts, "an-hour"),
            3 * round,
            "the plain 503 is retried after the backoff: this call never read the hour its server asked for"
        );
    }
}

/// What one call kept of a response and never used is not another call's:
/// the next call of the same function, from the same place (so its state
/// may be where the first call's was), decides on its own error alone.
#[test]
fn the_servers_word_kept_by_a_call_that_succeeded_is_not_the_next_calls() {
    let runtime = blocking_runtime();
    let (addr, counts) = runtime.block_on(server());
    let client = reqwest::Client::new();
    for round in 1..=3 {
        let kept = status_of(&runtime, &client, &format!("http://{addr}/an-hour"), true);
        assert_eq!(kept.unwrap(), 503);
        let error = status_of(
            &runtime,
            &client,
            &format!("http://{addr}/status/503"),
            false,
        )
        .unwrap_err();
        assert_eq!(error.status().map(|s| s.as_u16()), Some(503));
        assert_eq!(
            hits(&counts, "status/503"),
            2 * round,
            "a plain 503 is retried after the backoff: no server asked this call to wait an hour"
        );
    }
}
