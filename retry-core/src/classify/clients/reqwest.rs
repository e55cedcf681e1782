//! `reqwest::Error`, and `reqwest::Response` by its status.
//!
//! | error | class |
//! |---|---|
//! | `is_connect()` (refused, DNS, a connect timeout, ...) | transient (`connect`), not applied |
//! | `is_timeout()` | transient (`timeout`), maybe applied |
//! | `is_request()` with an I/O error, or a hyper incomplete or canceled message, in its chain | transient |
//! | `status()` (from `error_for_status`) | the HTTP table |
//! | a connection closed after the request was sent (hyper's incomplete message, canceled, closed) | transient, maybe applied |
//! | `is_builder()` | validation |
//! | `is_body()` or `is_decode()` with the connection closed before the whole body (hyper's incomplete message, or an I/O `UnexpectedEof`, in its chain) | transient (`body cut short`) |
//! | `is_body()`, `is_decode()` of a body that arrived whole (bad JSON, say), `is_redirect()` and the rest | logical |
//!
//! An `Ok(Response)` with a status of 400 or more is a failure too, judged by
//! the HTTP table with the server's pushback read
//! ([`http::pushback`](crate::http::pushback): `Retry-After`,
//! `RateLimit-Reset`, `X-RateLimit-Reset`, `x-should-retry`), so that
//! `#[retry] async fn get(..) -> reqwest::Result<Response>` retries a 503 and
//! waits as long as the server asks. When attempts run out the last response
//! is returned as it came.

use std::cell::RefCell;
use std::error::Error;
use std::time::SystemTime;

use ::reqwest::{Error as ReqwestError, Response, StatusCode, Url};

use crate::CallId;
use crate::class::Classification;
use crate::classify::{Classified, ClassifiedValue, http};

// Kept out of "other types implement" lists, which would change with features.
#[diagnostic::do_not_recommend]
impl Classified for ReqwestError {
    fn classification(&self) -> Classification {
        if let Some(status) = self.status() {
            return noted(status, self.url()).unwrap_or_else(|| http::status(status.as_u16()));
        }
        if self.is_connect() {
            // No connection: the request was never sent.
            return Classification::transient()
                .with_code("connect")
                .not_applied();
        }
        if self.is_timeout() {
            return Classification::transient().with_code("timeout");
        }
        if self.is_request() {
            return request_failure(self);
        }
        if (self.is_body() || self.is_decode()) && cut_short(self) {
            return Classification::transient().with_code("body cut short");
        }
        if self.is_builder() {
            return Classification::validation().with_code("builder");
        }
        Classification::logical()
    }
}

/// Whether a body or decode error comes from the connection closing before
/// the whole body arrived (hyper's incomplete message, or an I/O
/// `UnexpectedEof` in the chain), rather than from a body that arrived
/// whole and does not decode.
fn cut_short(error: &ReqwestError) -> bool {
    let mut next = error.source();
    while let Some(cause) = next {
        if let Some(io) = cause.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::UnexpectedEof
        {
            return true;
        }
        if let Some(hyper) = cause.downcast_ref::<::hyper::Error>()
            && (hyper.is_incomplete_message() || hyper.is_closed())
        {
            return true;
        }
        next = cause.source();
    }
    false
}

/// A request that failed on the wire: transient when the connection broke.
fn request_failure(error: &ReqwestError) -> Classification {
    let mut next = error.source();
    while let Some(cause) = next {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            return io.classification();
        }
        if let Some(hyper) = cause.downcast_ref::<::hyper::Error>()
            && (hyper.is_incomplete_message() || hyper.is_canceled() || hyper.is_closed())
        {
            return Classification::transient().with_code("connection closed");
        }
        next = cause.source();
    }
    Classification::logical().with_code("request")
}

impl ClassifiedValue for Response {
    fn failure(&self) -> Option<Classification> {
        let status = self.status().as_u16();
        if status < 400 {
            return None;
        }
        let headers = self.headers();
        Some(http::pushback(
            status,
            |name| http::single(headers, name),
            SystemTime::now(),
        ))
    }
}

/// Sets the `Idempotency-Key` header of a request from the retried call it
/// is made in: the same key on every attempt, so that a server that
/// deduplicates by it applies the operation once however many attempts
/// reach it. Pair it with `idempotent = key`. Outside a retried call the
/// key is a new random one.
///
/// ```no_run
/// use reattempt::reqwest::IdempotencyKey as _;
/// use reattempt::retry;
///
/// #[retry(max = 4, idempotent = key)]
/// async fn charge(client: &reqwest::Client, url: &str) -> reqwest::Result<reqwest::Response> {
///     client.post(url).idempotency_key().send().await
/// }
/// ```
pub trait IdempotencyKey: Sized {
    /// The request with its `Idempotency-Key` header set.
    fn idempotency_key(self) -> Self;
}

impl IdempotencyKey for ::reqwest::RequestBuilder {
    fn idempotency_key(self) -> ::reqwest::RequestBuilder {
        let id = match crate::attempt() {
            Some(attempt) => attempt.call_id(),
            None => CallId::random(),
        };
        self.header("Idempotency-Key", id.idempotency_key())
    }
}

/// `error_for_status` that keeps what the server said: in a retried call,
/// the delay it asked for and its `x-should-retry` reach the decision,
/// though the error `error_for_status` builds carries no headers.
///
/// ```no_run
/// use reattempt::reqwest::ErrorForStatus as _;
/// use reattempt::retry;
///
/// #[retry(max = 4)]
/// async fn fetch(client: &reqwest::Client, url: &str) -> reqwest::Result<String> {
///     // Before: `.error_for_status()?`, which loses `Retry-After`.
///     client.get(url).send().await?.error_for_status_with_pushback()?.text().await
/// }
/// ```
pub trait ErrorForStatus: Sized {
    /// [`reqwest::Response::error_for_status`], keeping the server's
    /// pushback ([`http::pushback`](crate::http::pushback)) for the retry
    /// decision. The caller's error type is unchanged.
    fn error_for_status_with_pushback(self) -> ::reqwest::Result<Self>;
}

impl ErrorForStatus for Response {
    fn error_for_status_with_pushback(self) -> ::reqwest::Result<Response> {
        // Outside a retried attempt nothing will classify the error for a
        // decision, and a note kept there could only go stale.
        if let Some(attempt) = crate::attempt()
            && let Some(class) = self.failure()
        {
            NOTED.set(Some(Noted {
                status: self.status(),
                url: self.url().clone(),
                attempt: (attempt.call_id(), attempt.number()),
                class,
            }));
        }
        self.error_for_status()
    }
}

thread_local! {
    /// What [`ErrorForStatus`] read from the last response it turned into
    /// an error on this thread, for the classification of that error, which
    /// carries the status and the URL but not the headers. One entry: each
    /// response noted replaces the one before, and the classification of
    /// the matching error takes it.
    static NOTED: RefCell<Option<Noted>> = const { RefCell::new(None) };
}

/// A response's classification, with its pushback, as the error made of it
/// will be known: by its status and URL, in the attempt that made it.
struct Noted {
    status: StatusCode,
    url: Url,
    /// The call and the attempt it was noted in.
    attempt: (CallId, u32),
    class: Classification,
}

/// The classification noted for the response that an error of `status`
/// for `url` was made of, taken; `None` when none was, or when what was
/// noted is another response's. A retried call classifies its attempt's
/// error in that attempt's frame, so a note another call or attempt left
/// (its body swallowed the error) is told apart by
/// [`attempt()`](crate::attempt()).
fn noted(status: StatusCode, url: Option<&Url>) -> Option<Classification> {
    let now = crate::attempt().map(|attempt| (attempt.call_id(), attempt.number()));
    NOTED.with_borrow_mut(|noted| {
        let taken = noted.take()?;
        let same_attempt = now.is_none_or(|now| now == taken.attempt);
        (same_attempt && taken.status == status && Some(&taken.url) == url).then_some(taken.class)
    })
}
