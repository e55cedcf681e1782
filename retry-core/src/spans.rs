//! The spans of a retried call, when a subscriber is interested: one for
//! the call, and a child for each attempt, named and attributed after the
//! OpenTelemetry semantic conventions so that `tracing-opentelemetry`
//! exports them as they are.
//!
//! | span | fields |
//! |---|---|
//! | `retry.call` | `otel.name` and `code.function.name` (the function), `retry.attempts`; on a give-up `otel.status_code = "ERROR"`, `error.type` and `retry.give_up`, and `retry.fallback = true` when a fallback answered |
//! | `retry.attempt` | `retry.attempt` (1 for the first); in a hedged call, `retry.hedge` (whether the attempt started beside a slow one); `http.request.resend_count` on attempts after the first of an HTTP call; on a failure `otel.status_code = "ERROR"`, `error.type` (the code, else the class), and the code under its convention name: `http.response.status_code`, `db.response.status_code` or `rpc.grpc.status_code` |
//!
//! A failure that was retried and then handled marks only its attempt's
//! span, never the call's (OpenTelemetry's "Recording errors"). The log
//! events of an attempt are in its span. With no subscriber interested, a
//! call makes no span: its cost is the callsite's interest check.

use tracing::Span;
use tracing::field::Empty;

use crate::class::{Classification, CodeKind};
use crate::classify::grpc;
use crate::give_up::GiveUp;
use crate::site::Site;

/// A call's spans; made only when a subscriber is interested.
#[derive(Debug)]
pub(crate) struct Spans {
    call: Span,
    attempt: Span,
    /// Whether an attempt's span was opened and not yet closed (its span
    /// may be disabled, so `attempt` does not tell).
    open: bool,
}

/// Whether a call starting now may have spans: not before a subscriber was
/// ever set.
#[inline]
pub(crate) fn may_start() -> bool {
    tracing::dispatcher::has_been_set()
}

/// [`start`] for a call that asked [`may_start`] already.
#[cold]
#[inline(never)]
pub(crate) fn start_watched(site: &'static Site) -> Option<Box<Spans>> {
    let function = site.name();
    let call = tracing::info_span!(
        target: "reattempt",
        "retry.call",
        otel.name = function,
        code.function.name = function,
        retry.attempts = Empty,
        retry.give_up = Empty,
        retry.fallback = Empty,
        retry.idempotency_key = Empty,
        otel.status_code = Empty,
        error.type = Empty,
    );
    if call.is_disabled() {
        return None;
    }
    Some(Box::new(Spans {
        call,
        attempt: Span::none(),
        open: false,
    }))
}

impl Spans {
    /// Opens the span of attempt `number`; `http` when an earlier attempt
    /// of the call had an HTTP outcome, so that this one is a resend.
    pub(crate) fn begin(&mut self, number: u32, http: bool) {
        self.open = true;
        self.attempt = tracing::info_span!(
            target: "reattempt",
            parent: &self.call,
            "retry.attempt",
            retry.attempt = i64::from(number),
            http.request.resend_count = Empty,
            otel.status_code = Empty,
            error.type = Empty,
            http.response.status_code = Empty,
            db.response.status_code = Empty,
            rpc.grpc.status_code = Empty,
        );
        record_resend(&self.attempt, number, http);
    }

    /// The span of attempt `number` of a hedged round, which says whether
    /// it is a `hedge`: a span of its own, which the round holds while the
    /// attempt runs beside others. A callsite apart from
    /// [`begin`](Self::begin)'s, whose spans have no such field to fill.
    pub(crate) fn round_span(&self, number: u32, hedge: bool, http: bool) -> Span {
        let span = tracing::info_span!(
            target: "reattempt",
            parent: &self.call,
            "retry.attempt",
            retry.attempt = i64::from(number),
            retry.hedge = hedge,
            http.request.resend_count = Empty,
            otel.status_code = Empty,
            error.type = Empty,
            http.response.status_code = Empty,
            db.response.status_code = Empty,
            rpc.grpc.status_code = Empty,
        );
        record_resend(&span, number, http);
        span
    }

    /// `span`, an attempt's, is the call's attempt in progress: the one
    /// whose outcome the call decides on.
    pub(crate) fn resume(&mut self, span: Span) {
        self.open = true;
        self.attempt = span;
    }

    /// The call sends `key` as its idempotency key (`idempotent = key`).
    #[cold]
    pub(crate) fn idempotency_key(&self, key: &str) {
        self.call.record("retry.idempotency_key", key);
    }

    /// The span of the attempt in progress.
    pub(crate) fn attempt(&self) -> &Span {
        &self.attempt
    }

    /// The attempt failed with `class`.
    pub(crate) fn failed(&self, class: &Classification) {
        failed(&self.attempt, class);
    }

    /// The attempt is over: its span closes.
    pub(crate) fn end(&mut self) {
        self.open = false;
        self.attempt = Span::none();
    }

    /// Whether the span of the attempt about to run is open yet.
    pub(crate) fn is_open(&self) -> bool {
        self.open
    }

    /// The call ended after `attempts` attempts.
    pub(crate) fn ended(&self, attempts: u32) {
        self.call.record("retry.attempts", i64::from(attempts));
    }

    /// The call gave up, and its fallback answered.
    pub(crate) fn fell_back(&self) {
        self.call.record("retry.fallback", true);
    }

    /// The call gave up after `class`, for `reason`.
    pub(crate) fn gave_up(&self, class: &Classification, reason: GiveUp) {
        self.call.record("otel.status_code", "ERROR");
        self.call.record("error.type", error_type(class));
        self.call.record("retry.give_up", reason.as_str());
    }
}

/// `span`, an attempt's, failed with `class`.
pub(crate) fn failed(span: &Span, class: &Classification) {
    span.record("otel.status_code", "ERROR");
    span.record("error.type", error_type(class));
    let Some(code) = class.code() else {
        return;
    };
    match class.code_kind() {
        CodeKind::Http => {
            if let Ok(status) = code.parse::<i64>() {
                span.record("http.response.status_code", status);
            }
        }
        CodeKind::Database => {
            span.record("db.response.status_code", code);
        }
        CodeKind::Grpc => {
            if let Some(number) = grpc::number(code) {
                span.record("rpc.grpc.status_code", number);
            }
        }
        _ => {}
    }
}

/// `span`, attempt `number`'s, is a resend when an earlier attempt of its
/// call had an HTTP outcome (`http`): it counts the ones before it.
fn record_resend(span: &Span, number: u32, http: bool) {
    if http && number > 1 {
        span.record("http.request.resend_count", i64::from(number - 1));
    }
}

/// `error.type`: the error's code when the classifier knew it, else its
/// class.
fn error_type(class: &Classification) -> &str {
    class.code().unwrap_or(class.class().as_str())
}
