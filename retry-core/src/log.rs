//! The `tracing` events of a retried call.
//!
//! All events have target `reattempt` and these fields, never the function's
//! arguments unless `fields(..)` names them (they are then recorded on a
//! span named `retry` around each event):
//!
//! | field | meaning |
//! |---|---|
//! | `function` | the function's name (`module::path::fn`, or `name = "..."`) |
//! | `call_id` | the call's id (a UUID), the same in every event of one call, in its hooks' context and in its dead-letter record |
//! | `attempt` | the attempt that just ended (1 for the first) |
//! | `max` | most attempts, or `"unbounded"` |
//! | `idempotency_key` | the key the call sends, for a function with `idempotent = key` (the call id as an `Idempotency-Key` value) |
//! | `class` | `transient`, `rate_limited`, `logical` or `validation` |
//! | `code` | the error's code, when the classifier knew it |
//! | `error` | the error, by `Display` when it has one, else `Debug` |
//! | `delay_ms` | the wait before the next attempt (WARN only) |
//! | `reason` | why the call gave up (ERROR only): `exhausted`, `deadline`, `permanent`, `validation`, `retry_after_too_long`, `budget`, `nested`, `maybe_applied`, `breaker`, `throttled` |
//! | `retry_after_ms`, `max_retry_after_ms` | the delay the server asked for, and (for `retry_after_too_long`) the limit it passed (ERROR only, when there is one) |
//! | `elapsed_ms` | time since the call started, its first attempt included: a call reads its clock as it starts when a subscriber listens to these events (or it has a deadline, hooks, a dead-letter sink, or the `timing` feature is on). Absent from the events of a call that started before any subscriber listened |
//!
//! Levels: WARN for a failed attempt that will be retried, ERROR when the
//! call gives up (`giving up`), INFO when a call succeeds after retries,
//! and INFO when a first attempt fails in a way no retry changes
//! (`permanent` or `validation`: `attempt failed; not retried`): that call
//! retried nothing, and its error is its caller's to handle.
//!
//! Also: an INFO `a fallback answered` (fields `function`, `call_id`)
//! after the ERROR of a call that gave up and whose `fallback` answered;
//! an ERROR `alert: the same failure repeated` (fields `function`,
//! `call_id`, `class`, `code`, `count`) for `alert_after`; a WARN, once per
//! function, when a retried call retries inside another (`function`,
//! `outer`, `call_id`); a WARN, once per function, the first time a call
//! of a function with `max = forever` retries (`function`, `call_id`); a
//! WARN, once per kind of problem, for an invalid
//! dynamic policy (`function`, `problem`); a WARN, once per process, when
//! an async function without `sleep = ..` makes a timer outside a tokio
//! runtime, which a thread of this crate's own then ends
//! (`default_timer.rs`);
//! and an ERROR with every field of a dead-letter record a sink could not
//! store.

use core::fmt;
use core::time::Duration;

use tracing::field::Value;
use tracing::{Level, Span};

use crate::call_id::CallIdCell;
use crate::class::Classification;
use crate::give_up::GiveUp;
use crate::policy::{Idempotent, Policy};
use crate::site::{Alert, Site};

/// `max` as a number, or the text `unbounded`.
fn max_field<B>(policy: &Policy<B>) -> MaxField {
    match policy.max() {
        Some(n) => MaxField::Bounded(n),
        None => MaxField::Unbounded,
    }
}

enum MaxField {
    Bounded(u32),
    Unbounded,
}

impl MaxField {
    fn value(&self) -> &dyn Value {
        match self {
            MaxField::Bounded(n) => n,
            MaxField::Unbounded => &"unbounded",
        }
    }
}

// The call id is passed as its cell, and drawn inside each event's
// macro: field values are evaluated only when the event is enabled, so a
// call nobody logs never draws one.

/// Whether a subscriber could want an event at `level`: a load and a
/// compare. The failure path asks first, so that when nobody listens it
/// neither calls an event function nor makes and enters the span of
/// `fields(..)`. The check stays with the callers: folded into the event
/// functions and inlined, it cost a sync retry more, for the larger
/// failure path around it (`benches/HISTORY.md`). The events are
/// right without it; it only saves their work.
#[inline]
pub(crate) fn wanted(level: Level) -> bool {
    tracing::level_enabled!(level)
}

/// The kind under which [`retrying_for_ever`] is logged once per function,
/// after those of an invalid dynamic policy.
pub(crate) const RETRYING_FOR_EVER: u32 = 8;

/// A call of a function with `max = forever` retries: said once per
/// function, the first time, so that a call that may never end is seen.
#[cold]
#[inline(never)]
pub(crate) fn retrying_for_ever(site: &Site, call_id: &CallIdCell) {
    if wanted(Level::WARN) && site.first_time(RETRYING_FOR_EVER) {
        tracing::warn!(
            target: "reattempt",
            function = site.name(),
            call_id = %call_id.id(),
            "retrying for ever: `max = forever` sets no limit and no deadline",
        );
    }
}

/// Whether a subscriber listens to the library's events: it wants the most
/// severe of them, a give-up. Out of line: a call asks as it starts, once
/// a subscriber was ever set.
#[inline(never)]
pub(crate) fn listening() -> bool {
    wanted(Level::ERROR)
}

/// The key a call sends, for a call that sends one (`idempotent = key`).
fn idempotency_key<B>(policy: &Policy<B>, call_id: &CallIdCell) -> Option<String> {
    (policy.idempotent == Idempotent::Key).then(|| call_id.id().idempotency_key())
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The call an event is about, as the event's fields name it: its
/// function, its policy's `max` and idempotency key, the attempt, the
/// call's id and the time it has taken; `span` holds the fields of the
/// user's (`fields(..)`), entered while the event is written.
pub(crate) struct About<'a, B> {
    pub(crate) site: &'a Site,
    pub(crate) policy: &'a Policy<B>,
    pub(crate) attempt: u32,
    pub(crate) call_id: &'a CallIdCell,
    pub(crate) elapsed: Option<Duration>,
    pub(crate) span: &'a dyn Fn() -> Span,
}

pub(crate) fn retrying<B>(
    about: About<'_, B>,
    class: &Classification,
    error: &dyn fmt::Display,
    delay: Duration,
) {
    let max = max_field(about.policy);
    let key = idempotency_key(about.policy, about.call_id);
    let _fields = (about.span)().entered();
    tracing::warn!(
        target: "reattempt",
        function = about.site.name(),
        call_id = %about.call_id.id(),
        attempt = about.attempt,
        max = max.value(),
        idempotency_key = key.as_deref(),
        class = class.class().as_str(),
        code = class.code(),
        error = %error,
        delay_ms = millis(delay),
        elapsed_ms = about.elapsed.map(millis),
        "attempt failed; retrying",
    );
}

/// The level a call that gave up for `reason` after `attempts` attempts
/// is logged at: ERROR, but INFO for one whose first attempt failed in a
/// way no retry would change (a 404, a 400, a duplicate key). That call
/// retried nothing; its error is its caller's to handle, as a plain call's
/// would be, and ordinary not-founds would flood an error log.
pub(crate) fn gave_up_level(reason: GiveUp, attempts: u32) -> Level {
    match reason {
        GiveUp::Permanent | GiveUp::Validation if attempts <= 1 => Level::INFO,
        _ => Level::ERROR,
    }
}

pub(crate) fn gave_up<B>(
    about: About<'_, B>,
    class: &Classification,
    error: &dyn fmt::Display,
    reason: GiveUp,
) {
    let max = max_field(about.policy);
    let key = idempotency_key(about.policy, about.call_id);
    let _fields = (about.span)().entered();
    // One list of fields for the two levels, whose events are two
    // callsites: a level is part of a callsite's constant metadata.
    macro_rules! gave_up {
        ($level:ident, $message:literal) => {
            tracing::$level!(
                target: "reattempt",
                function = about.site.name(),
                call_id = %about.call_id.id(),
                attempt = about.attempt,
                max = max.value(),
                idempotency_key = key.as_deref(),
                class = class.class().as_str(),
                code = class.code(),
                error = %error,
                reason = reason.as_str(),
                retry_after_ms = class.retry_after().map(millis),
                max_retry_after_ms = (reason == GiveUp::RetryAfterTooLong).then(|| millis(about.policy.max_retry_after)),
                elapsed_ms = about.elapsed.map(millis),
                $message,
            )
        };
    }
    if gave_up_level(reason, about.attempt) == Level::ERROR {
        gave_up!(error, "giving up");
    } else {
        gave_up!(info, "attempt failed; not retried");
    }
}

/// The call gave up, and its fallback answered instead of the error.
pub(crate) fn fell_back(function: &'static str, call_id: &CallIdCell, span: &dyn Fn() -> Span) {
    let _fields = span().entered();
    tracing::info!(
        target: "reattempt",
        function,
        call_id = %call_id.id(),
        "a fallback answered",
    );
}

pub(crate) fn succeeded<B>(about: About<'_, B>) {
    let max = max_field(about.policy);
    let key = idempotency_key(about.policy, about.call_id);
    let _fields = (about.span)().entered();
    tracing::info!(
        target: "reattempt",
        function = about.site.name(),
        call_id = %about.call_id.id(),
        attempt = about.attempt,
        max = max.value(),
        idempotency_key = key.as_deref(),
        elapsed_ms = about.elapsed.map(millis),
        "succeeded after retries",
    );
}

pub(crate) fn alert(alert: &Alert, call_id: &CallIdCell, span: &dyn Fn() -> Span) {
    let _fields = span().entered();
    tracing::error!(
        target: "reattempt",
        function = alert.function,
        call_id = %call_id.id(),
        class = alert.class.as_str(),
        code = alert.code.as_deref(),
        count = alert.count,
        "alert: the same failure repeated",
    );
}

pub(crate) fn nested(inner: &'static str, outer: &'static str, call_id: &CallIdCell) {
    tracing::warn!(
        target: "reattempt",
        function = inner,
        call_id = %call_id.id(),
        outer,
        "a retried call runs inside another retried call: their attempts multiply",
    );
}

/// What a hedged call's DEBUG events say: a hedge started, or won.
#[derive(Clone, Copy)]
pub(crate) enum HedgeEvent {
    Started,
    Won,
}

/// Attempt `attempt`, a hedge, started beside a slow one, or won: it
/// succeeded before the attempts started earlier in its call.
#[cold]
pub(crate) fn hedge<B>(
    site: &Site,
    policy: &Policy<B>,
    attempt: u32,
    call_id: &CallIdCell,
    event: HedgeEvent,
    span: &dyn Fn() -> Span,
) {
    let max = max_field(policy);
    let message = match event {
        HedgeEvent::Started => "attempt still running; hedge started",
        HedgeEvent::Won => "hedge won",
    };
    let _fields = span().entered();
    tracing::debug!(
        target: "reattempt",
        function = site.name(),
        call_id = %call_id.id(),
        attempt,
        max = max.value(),
        "{message}",
    );
}

/// Attempt `attempt` failed while `in_flight` others of its call run: no
/// decision is made until they end.
#[cold]
pub(crate) fn failed_beside<B>(
    about: About<'_, B>,
    class: &Classification,
    error: &dyn fmt::Display,
    in_flight: usize,
) {
    let max = max_field(about.policy);
    let key = idempotency_key(about.policy, about.call_id);
    let _fields = (about.span)().entered();
    tracing::warn!(
        target: "reattempt",
        function = about.site.name(),
        call_id = %about.call_id.id(),
        attempt = about.attempt,
        max = max.value(),
        idempotency_key = key.as_deref(),
        class = class.class().as_str(),
        code = class.code(),
        error = %error,
        in_flight,
        elapsed_ms = about.elapsed.map(millis),
        "attempt failed; another is in flight",
    );
}
